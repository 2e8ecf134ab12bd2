import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { createHotel, issueKeyPair } from '../../src/operations.js';
import { createTestStorage, guest, testEngines } from '../support/harness.js';
import { freePort } from '../support/postgres-cluster.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { parseJsonOutput, postJson, runCli, spawnServe, storageEnv, waitForExit, waitForHttps, type Storage } from '../cli/cli-helpers.js';
import { scaled } from '../support/test-run.js';

// README.md, "Webhooks" and "Operating it": `innsync webhook add|list|remove|rotate-secret`, and an
// event committed but not yet delivered when the server is killed (SIGKILL) is delivered
// after the restart: the outbox is in the database, written in the change's transaction.

describe.each(testEngines())('webhooks from the command line, and across a crash (%s)', (engine) => {
  let storage: Storage;
  let env: Record<string, string>;
  let handle: DatabaseHandle;
  const receiver = new WebhookReceiver();
  let url: string;
  const slug = `cli-hooks-${engine}`;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    env = { ...storageEnv(storage), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
    handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    await migrateToLatest(handle.db);
    await createHotel(handle.db, slug, 'CLI Hooks Hotel');
    url = await receiver.listen();
  });
  afterAll(async () => {
    await receiver.close();
    await handle.close();
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra } });

  it('add (secret shown once, --events), list (no secret), rotate-secret, remove; a bad URL or type exits 1 naming the fix', async () => {
    const added = parseJsonOutput(await cli(['webhook', 'add', slug, url, '--events', 'guest.checked_in,sync.completed', '--json']));
    expect(added).toMatchObject({ url, events: ['guest.checked_in', 'sync.completed'], enabled: true, secret: expect.stringMatching(/^whsec_/) });
    const text = await cli(['webhook', 'add', slug, url]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('secret: whsec_');
    const listed = parseJsonOutput(await cli(['webhook', 'list', slug, '--json']));
    expect(listed.endpoints.map((e: { endpointId: string }) => e.endpointId)).toContain(added.endpointId);
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    const rotated = parseJsonOutput(await cli(['webhook', 'rotate-secret', added.endpointId, '--json']));
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(added.secret);
    expect(rotated.previousSecretUntil).toEqual(expect.any(String));
    expect(parseJsonOutput(await cli(['webhook', 'remove', added.endpointId, '--json']))).toEqual({ endpointId: added.endpointId, removed: true });
    const gone = await cli(['webhook', 'remove', added.endpointId]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`innsync: No webhook endpoint with id ${added.endpointId as string}.\n`);
    const plain = await cli(['webhook', 'add', slug, 'http://hooks.example.com/in'], { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('https://');
    const badType = await cli(['webhook', 'add', slug, url, '--events', 'guest.arrived']);
    expect(badType.code).toBe(1);
    expect(badType.stderr).toContain('guest.arrived is not an event type');
    const noHotel = await cli(['webhook', 'list', 'no-such-hotel']);
    expect(noHotel.stderr).toBe('innsync: no hotel with slug "no-such-hotel": innsync hotel list shows every hotel\'s slug\n');
    // Leave one endpoint for the next test only.
    for (const e of parseJsonOutput(await cli(['webhook', 'list', slug, '--json'])).endpoints) await cli(['webhook', 'remove', e.endpointId]);
    // A dozen commands, each a process of its own: room for a loaded machine.
  }, 120_000);

  it('a check-in committed while the receiver is down, then SIGKILL: the restarted server delivers it, signed with the secret `webhook add` showed', async () => {
    const added = parseJsonOutput(await cli(['webhook', 'add', slug, url, '--json']));
    receiver.trust(added.secret);
    receiver.answerWith(...Array.from({ length: 1000 }, () => 503));
    const keys = await issueKeyPair(handle.db, slug);
    const port = await freePort();
    const first = spawnServe({ ...env, PORT: String(port), HTTP_PORT: 'off' });
    const { agent } = await waitForHttps(first, storage.dataDir, port);
    const checkIn = await postJson(agent, `https://127.0.0.1:${port}/api/pms/v1/${slug}/guests/checkin`, keys.live, guest({ pmsGuestId: 'CRASH-1' }));
    expect(checkIn.status).toBe(200);
    // Refused at least once (503) and recorded: committed, and waiting for its next attempt.
    await vi.waitFor(
      async () => {
        const d = await handle.db
          .selectFrom('webhook_deliveries')
          .select(['attempts', 'status'])
          .where('endpoint_id', '=', added.endpointId)
          .executeTakeFirst();
        expect(d?.status).toBe('pending');
        expect(Number(d?.attempts)).toBeGreaterThanOrEqual(1);
      },
      { timeout: scaled(10_000) },
    );
    first.child.kill('SIGKILL');
    expect((await waitForExit(first)).signal).toBe('SIGKILL');
    await agent.close();
    const eventId = receiver.received[0]?.id;
    expect(receiver.accepted()).toHaveLength(0);

    receiver.answerNormally();
    const second = spawnServe({ ...env, PORT: String(port), HTTP_PORT: 'off' });
    try {
      await waitForHttps(second, storage.dataDir, port);
      await vi.waitFor(() => expect(receiver.accepted().map((r) => r.id)).toEqual([eventId]), { timeout: scaled(30_000) });
      expect(receiver.accepted()[0]?.body).toMatchObject({ type: 'guest.checked_in', data: { guest: { pmsGuestId: 'CRASH-1' } } });
    } finally {
      second.child.kill('SIGTERM');
      await waitForExit(second);
    }
  });
});
