import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hotelIdOf } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { lines, parseJsonOutput, runCli, storageEnv, type CliResult } from './cli-helpers.js';

// README.md, "Operating it": `innsync key issue <slug> --networks … --expires … --read-only`,
// `innsync key set <slug> <keyId> …` and `innsync key list <slug>` show and change what a
// key pair may do; each issue, change and revocation writes a security entry (actor:
// operator) with the change.

const FUTURE = '2099-06-30';

describe.each(testEngines())('innsync key: networks, expiry, read-only (%s)', (engine) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  const cli = (args: string[]): Promise<CliResult> => runCli(args, { env: storageEnv(t.config) });
  const failure = (r: CliResult): { code: string; message: string } => {
    expect([r.code, r.stdout]).toEqual([1, '']);
    return JSON.parse(r.stderr) as { code: string; message: string };
  };
  const securityEntries = async (pairId: string) =>
    t.server.database.db
      .selectFrom('security_events')
      .select(['kind', 'actor_type', 'actor_id', 'client_ip', 'hotel_id', 'detail'])
      .where('subject_key_pair_id', '=', pairId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();

  it('issue with --networks, --expires and --read-only: the pair is restricted, listed so, and its security entry says so', async () => {
    const r = await cli(['key', 'issue', t.slug, '--networks', '203.0.113.9/24, 2001:DB8::/32', '--expires', FUTURE, '--read-only', '--json']);
    expect(r.stderr).toBe('');
    const pair = parseJsonOutput(r) as { keyId: string; live: string; test: string };
    // The test's client, 127.0.0.1, is outside the pair's networks.
    expect((await t.api('GET', `${t.pmsBase}/guests`, { key: pair.live })).body.code).toBe('KEY_NETWORK_REFUSED');
    const listed = parseJsonOutput(await cli(['key', 'list', t.slug, '--json'])) as { keys: Array<Record<string, unknown>> };
    expect(listed.keys.find((k) => k.keyId === pair.keyId)).toMatchObject({
      networks: ['203.0.113.0/24', '2001:db8::/32'],
      expiresOn: FUTURE,
      readOnly: true,
      revokedAt: null,
    });
    const text = await cli(['key', 'list', t.slug]);
    expect(lines(text.stdout).find((l) => l.startsWith(pair.keyId))).toContain(`networks 203.0.113.0/24,2001:db8::/32  expires ${FUTURE}  read-only`);
    expect(await securityEntries(pair.keyId)).toEqual([
      {
        kind: 'key.issued',
        actor_type: 'operator',
        actor_id: null,
        client_ip: null,
        hotel_id: await hotelIdOf(t.server.database.db, t.slug),
        detail: JSON.stringify({ networks: ['203.0.113.0/24', '2001:db8::/32'], expiresOn: FUTURE, readOnly: true }),
      },
    ]);
  });

  it('key set changes an existing pair (none and never clear), the keys follow at once; revoke writes its entry too', async () => {
    const pair = parseJsonOutput(await cli(['key', 'issue', t.slug, '--networks', '198.51.100.0/24', '--json'])) as { keyId: string; live: string };
    expect((await t.api('GET', `${t.pmsBase}/guests`, { key: pair.live })).body.code).toBe('KEY_NETWORK_REFUSED');

    const opened = await cli(['key', 'set', t.slug, pair.keyId, '--networks', 'none', '--read-only', '--expires', FUTURE, '--json']);
    expect(opened.stderr).toBe('');
    expect(parseJsonOutput(opened)).toEqual({ keyId: pair.keyId, networks: null, expiresOn: FUTURE, readOnly: true });
    expect((await t.api('GET', `${t.pmsBase}/guests`, { key: pair.live })).status).toBe(200);
    expect((await t.post(`${t.pmsBase}/guests/checkin`, {}, { key: pair.live })).body.code).toBe('KEY_READ_ONLY');

    const text = await cli(['key', 'set', t.slug, pair.keyId, '--read-write', '--expires', 'never']);
    expect([text.code, text.stdout]).toEqual([0, `key pair ${pair.keyId}: networks any  expires never  read-write\n`]);

    expect((await cli(['key', 'revoke', pair.keyId])).code).toBe(0);
    const entries = await securityEntries(pair.keyId);
    expect(entries.map((e) => [e.kind, e.actor_type])).toEqual([
      ['key.issued', 'operator'],
      ['key.changed', 'operator'],
      ['key.changed', 'operator'],
      ['key.revoked', 'operator'],
    ]);
    expect(JSON.parse(entries[1]!.detail!)).toEqual({
      before: { networks: ['198.51.100.0/24'], expiresOn: null, readOnly: false },
      after: { networks: null, expiresOn: FUTURE, readOnly: true },
    });
    // A revoked pair cannot be changed.
    expect(failure(await cli(['key', 'set', t.slug, pair.keyId, '--read-only', '--json'])).code).toBe('KEY_PAIR_NOT_FOUND');
  });

  it('an invalid network or date is INVALID_ARGUMENT naming the option and the fix; nothing is issued or changed', async () => {
    const before = parseJsonOutput(await cli(['key', 'list', t.slug, '--json'])).keys.length as number;
    const cases: Array<[string[], RegExp]> = [
      [
        ['--networks', '203.0.113.0/33'],
        /^--networks: "203\.0\.113\.0\/33" is not a network: write an IPv4 or IPv6 network in CIDR notation such as 203\.0\.113\.0\/24/,
      ],
      [['--networks', 'office'], /^--networks: "office" is not a network/],
      [['--expires', '2027-02-30'], /^--expires: "2027-02-30" is not a date: write the last day the keys work as YYYY-MM-DD/],
      [['--expires', '2020-01-01'], /^--expires: 2020-01-01 has passed: choose today or a later day/],
    ];
    for (const [options, message] of cases) {
      const refused = failure(await cli(['key', 'issue', t.slug, ...options, '--json']));
      expect(refused.code, options.join(' ')).toBe('INVALID_ARGUMENT');
      expect(refused.message).toMatch(message);
    }
    expect(parseJsonOutput(await cli(['key', 'list', t.slug, '--json'])).keys.length).toBe(before);
    const set = failure(await cli(['key', 'set', t.slug, t.keys.keyId, '--networks', '10.0.0.0/8,nonsense', '--json']));
    expect(set).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(/^--networks: "nonsense" is not a network/) });
    expect(failure(await cli(['key', 'set', t.slug, t.keys.keyId, '--json'])).code).toBe('INVALID_ARGUMENT');
    expect(failure(await cli(['key', 'set', t.slug, t.keys.keyId, '--read-only', '--read-write', '--json'])).code).toBe('INVALID_ARGUMENT');
    // The pair is unchanged: no networks, so it answers from here.
    expect((await t.api('GET', `${t.pmsBase}/guests`)).status).toBe(200);
  });
});
