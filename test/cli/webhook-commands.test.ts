import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { parseJsonOutput, runCli, storageEnv } from './cli-helpers.js';

// README.md, Operating it: `innsync webhook enable|disable|test|deliveries` do what the
// dashboard's Webhooks page does (the same code, webhooks/endpoints.ts), against a running
// server that delivers; and `webhook add` says that it judges a URL by
// WEBHOOK_ALLOW_PRIVATE_NETWORKS in its own environment.

describe.each(testEngines())('innsync webhook enable, disable, test and deliveries (%s)', (engine) => {
  let t: TestServer;
  let env: Record<string, string>;
  const receiver = new WebhookReceiver();
  let url: string;

  beforeAll(async () => {
    t = await startTestServer(engine, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    env = { ...storageEnv(t.config), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
    url = await receiver.listen();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra } });

  let added: { endpointId: string; secret: string };

  it('test delivers a signed webhook.test and prints the answer; a failing receiver exits 1 with WEBHOOK_TEST_FAILED and the answer', async () => {
    added = parseJsonOutput(await cli(['webhook', 'add', t.slug, url, '--json']));
    receiver.trust(added.secret);

    const sent = await cli(['webhook', 'test', added.endpointId]);
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^test event \S+ delivered: the endpoint answered HTTP 200 in \d+ ms\n$/);
    expect(receiver.accepted().map((r) => r.body.type)).toEqual(['webhook.test']);
    expect(receiver.accepted()[0]?.body.data).toEqual({ message: 'A test event sent from innsync webhook test.' });

    receiver.answerWith(500);
    const failed = await cli(['webhook', 'test', added.endpointId, '--json']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    const failure = JSON.parse(failed.stderr);
    expect(failure).toMatchObject({ status: 'error', code: 'WEBHOOK_TEST_FAILED' });
    expect(failure.message).toContain('the endpoint answered HTTP 500; the server tries again at');
  }, 120_000);

  it('disable (a test event is then refused, ENDPOINT_DISABLED), enable, and deliveries lists what was sent', async () => {
    const disabled = parseJsonOutput(await cli(['webhook', 'disable', added.endpointId, '--json']));
    expect(disabled.endpoint).toMatchObject({ endpointId: added.endpointId, enabled: false, disabledReason: 'Disabled by an admin.' });
    expect((await cli(['webhook', 'list', t.slug])).stdout).toContain(`${added.endpointId}  disabled`);
    const refused = await cli(['webhook', 'test', added.endpointId, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'ENDPOINT_DISABLED' });

    const enabled = await cli(['webhook', 'enable', added.endpointId]);
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toContain(`enabled: ${added.endpointId}  enabled`);

    // The test event answered 500 is retried (after the endpoint is enabled again, if the retry was not yet due) and succeeds.
    await expect
      .poll(async () => parseJsonOutput(await cli(['webhook', 'deliveries', added.endpointId, '--json'])).deliveries.map((d: { status: string }) => d.status), {
        timeout: 15_000,
        interval: 500,
      })
      .toEqual(['succeeded', 'succeeded']);
    const listed = parseJsonOutput(await cli(['webhook', 'deliveries', added.endpointId, '--json'])).deliveries;
    expect(listed[0]).toMatchObject({ eventType: 'webhook.test', status: 'succeeded', attempts: 2, lastStatus: 200 });
    const text = await cli(['webhook', 'deliveries', added.endpointId, '--limit', '1']);
    expect(text.stdout.trim().split('\n')).toHaveLength(1);
    expect(text.stdout).toMatch(/succeeded {2}webhook\.test {2}attempts 2 {2}last: HTTP 200 in \d+ ms/);

    const queued = await cli(['webhook', 'test', added.endpointId, '--wait', '0', '--json']);
    expect(parseJsonOutput(queued)).toMatchObject({ eventId: expect.any(String) });
  }, 120_000);

  it('an unknown endpoint is RECORD_NOT_FOUND, a --limit out of range a usage error; each command has its --help', async () => {
    const unknown = await cli(['webhook', 'deliveries', 'whe_nope', '--json']);
    expect([unknown.code, JSON.parse(unknown.stderr).code]).toEqual([1, 'RECORD_NOT_FOUND']);
    const badLimit = await cli(['webhook', 'deliveries', added.endpointId, '--limit', '500']);
    expect(badLimit.code).toBe(2);
    for (const sub of ['enable', 'disable', 'test', 'deliveries']) {
      const help = await cli(['webhook', sub, '--help']);
      expect([help.code, help.stdout]).toEqual([0, expect.stringContaining(`innsync webhook ${sub} [options] <endpointId>`)]);
    }
  }, 120_000);

  it('add: a URL refused for want of WEBHOOK_ALLOW_PRIVATE_NETWORKS says the command reads it from its own environment; the message names the field once', async () => {
    const r = await cli(['webhook', 'add', t.slug, 'http://127.0.0.1:9/hooks'], { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      "innsync: url: The URL must start with https:// (plain http:// needs WEBHOOK_ALLOW_PRIVATE_NETWORKS=true). This command reads WEBHOOK_ALLOW_PRIVATE_NETWORKS from its own environment, not from the running server's: set it for the command too (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true innsync webhook add …).\n",
    );
    // Refused whatever the setting: no hint about the variable.
    const userinfo = await cli(['webhook', 'add', t.slug, 'https://user:pw@hooks.example.com/in'], { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    expect(userinfo.stderr).toBe('innsync: url: The URL must not carry a user name or password; authenticate the signature instead.\n');
    const help = await cli(['webhook', 'add', '--help']);
    expect(help.stdout).toContain('WEBHOOK_ALLOW_PRIVATE_NETWORKS is read from the environment of this command');
  }, 120_000);
});
