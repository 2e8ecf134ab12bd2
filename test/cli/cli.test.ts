import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { sha256Hex } from '../../src/domain/ids.js';
import { createHotel as createHotelInProcess, createStaffUser, issueKeyPair, verifyPassword } from '../../src/operations.js';
import { startServer } from '../../src/server.js';
import { createTestStorage, guest, testEngines, databaseEnv } from '../support/harness.js';
import { freePort } from '../support/postgres-cluster.js';
import { ensureDaysOf } from '../../src/db/partitions.js';
import { getJson, lines, parseJsonOutput, postJson, runCli, storageEnv, trustingAgent, type CliResult, type Storage } from './cli-helpers.js';

// README.md, "Operating it" (the `innsync` command): with --json one JSON object on
// stdout and nothing else there; without it, text for people; exit 0 on success,
// non-zero with a one-line reason on stderr otherwise. Every test runs the real command
// (node bin/innsync.js → dist/) as a child process.

/** A failure exits non-zero with one line on stderr and nothing on stdout. */
function expectOneLineFailure(r: CliResult, mentions?: string | RegExp): void {
  expect(r.code, r.stderr).not.toBe(0);
  expect(r.code).not.toBeNull();
  expect(r.stdout).toBe('');
  expect(r.stderr.endsWith('\n'), JSON.stringify(r.stderr)).toBe(true);
  expect(lines(r.stderr), JSON.stringify(r.stderr)).toHaveLength(1);
  if (mentions !== undefined) expect(r.stderr).toMatch(mentions);
}

/** A successful text-mode run: exit 0, human text (not JSON) on stdout, nothing on stderr. */
function expectTextSuccess(r: CliResult): void {
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  expect(r.stdout.trim()).not.toBe('');
  expect(() => JSON.parse(r.stdout)).toThrow();
}

describe('innsync --help and usage', () => {
  it('`innsync --help` exits 0 and names every top-level command', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    for (const command of ['serve', 'migrate', 'hotel', 'key', 'user', 'purge']) expect(r.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
    expect(r.stdout).toContain('--json');
  });

  it('the help of each command group names its commands: hotel create, key issue, key revoke, user create', async () => {
    const [hotel, key, user] = await Promise.all([runCli(['hotel', '--help']), runCli(['key', '--help']), runCli(['user', '--help'])]);
    for (const r of [hotel, key, user]) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
    }
    expect(hotel.stdout).toMatch(/^\s+create \[options\] <slug>/m);
    expect(key.stdout).toMatch(/^\s+issue .*<slug>/m);
    expect(key.stdout).toMatch(/^\s+revoke .*<keyId>/m);
    expect(user.stdout).toMatch(/^\s+create \[options\] <slug>/m);
  });

  it('`key issue --help`, `hotel create --help` and `user create --help` exit 0 with their usage and options', async () => {
    const [issue, hotel, user] = await Promise.all([
      runCli(['key', 'issue', '--help']),
      runCli(['hotel', 'create', '--help']),
      runCli(['user', 'create', '--help']),
    ]);
    for (const r of [issue, hotel, user]) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
    }
    expect(issue.stdout).toContain('Usage: innsync key issue [options] <slug>');
    expect(hotel.stdout).toContain('Usage: innsync hotel create [options] <slug>');
    expect(hotel.stdout).toContain('--name <name>');
    expect(user.stdout).toContain('Usage: innsync user create [options] <slug>');
    expect(user.stdout).toContain('--email <email>');
    expect(user.stdout).toMatch(/--role <role>.*admin or receptionist/);
  });

  it("`npx innsync --help` resolves the project's own bin from the project directory", async () => {
    const r = await runCli(['--no-install', 'innsync', '--help'], { command: ['npx'] });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: innsync');
    expect(r.stdout).toMatch(/^\s+serve\b/m);
  });

  it('a usage error (unknown command, missing --name, unknown option, slug starting with -) exits non-zero with one line on stderr', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-cli-'));
    try {
      const env = { DATA_DIR: dataDir };
      const results = await Promise.all([
        runCli(['hotel', 'crate', 'abc'], { env }),
        runCli(['hotel', 'create', 'abc'], { env }),
        runCli(['migrate', '--frobnicate'], { env }),
        // A slug starting with "-" is read as an (unknown) option: still one line.
        runCli(['hotel', 'create', '-abc', '--name', 'Bad', '--json'], { env }),
      ]);
      expectOneLineFailure(results[0]!, /crate/);
      expectOneLineFailure(results[1]!, /--name/);
      expectOneLineFailure(results[2]!, /--frobnicate/);
      expectOneLineFailure(results[3]!, /-abc/);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('unreachable PostgreSQL (DATABASE_URL) exits non-zero with one line on stderr', async () => {
    const port = await freePort(); // nothing listens there
    const r = await runCli(['migrate', '--json'], { env: { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nope`, DATA_DIR: '/nonexistent-innsync' } });
    expectOneLineFailure(r, /ECONNREFUSED/);
  });

  it('a bad environment exits non-zero with one stderr line naming the variable', async () => {
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['serve'], { PORT: 'abc' }, 'PORT'],
      [['serve'], { HTTP_PORT: '99999' }, 'HTTP_PORT'],
      [['migrate', '--json'], { DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
      [['purge', '--json'], { LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
      [['migrate'], { SQLITE_SYNCHRONOUS: 'sometimes' }, 'SQLITE_SYNCHRONOUS'],
      [['serve'], { SQLITE_GROUP_COMMIT_MS: '5000' }, 'SQLITE_GROUP_COMMIT_MS'],
      [['serve'], { TLS_CERT_FILE: '/tmp/cert.pem' }, 'TLS_KEY_FILE'],
      [['serve'], { MAX_CONNECTIONS_PER_IP: '0' }, 'MAX_CONNECTIONS_PER_IP'],
      [['serve'], { MAX_CONNECTIONS: 'many' }, 'MAX_CONNECTIONS'],
      [['serve'], { KEEP_ALIVE_TIMEOUT_SECONDS: '1.5' }, 'KEEP_ALIVE_TIMEOUT_SECONDS'],
      [['serve'], { HEADERS_TIMEOUT_SECONDS: '30', REQUEST_TIMEOUT_SECONDS: '20' }, 'HEADERS_TIMEOUT_SECONDS'],
      [['serve'], { TRUST_PROXY: '10.0.0.1,proxy.example' }, 'TRUST_PROXY'],
      [['serve'], { TRUST_PROXY: '10.0.0.0/40' }, 'TRUST_PROXY'],
    ];
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-cli-'));
    const results = await Promise.all(cases.map(([args, bad]) => runCli(args, { env: { DATA_DIR: dataDir, ...bad } })));
    fs.rmSync(dataDir, { recursive: true, force: true });
    results.forEach((r, i) => expectOneLineFailure(r, new RegExp(`\\b${cases[i]![2]}\\b`)));
  });
});

describe.each(testEngines())('innsync commands (%s)', (engine) => {
  let storage: Storage;
  let env: Record<string, string>;
  let handle: DatabaseHandle | undefined;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    env = storageEnv(storage);
  });
  afterAll(async () => {
    await handle?.close();
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  const cli = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<CliResult> =>
    runCli(args, { input: opts.input, env: { ...env, ...opts.env } });
  /** The test's own connection to the same storage (never opened before the first `migrate` test). */
  const db = (): DatabaseHandle['db'] => {
    handle ??= openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    return handle.db;
  };
  /** A hotel created in-process (fixtures for the commands under test; spawns are costly). */
  async function createHotel(slug: string): Promise<void> {
    await migrateToLatest(db());
    await createHotelInProcess(db(), slug, `Hotel ${slug}`);
  }

  /** Runs `fn` against the real server started in-process on the same storage. */
  async function withServer<T>(fn: (api: { base: string; agent: ReturnType<typeof trustingAgent> }) => Promise<T>): Promise<T> {
    const config = loadConfig({
      PORT: '0',
      HTTP_PORT: 'off',
      HOST: '127.0.0.1',
      DATA_DIR: storage.dataDir,
      ...databaseEnv(storage),
      LOG_LEVEL: 'silent',
    });
    const server = await startServer(config, pino({ level: 'silent' }));
    const agent = trustingAgent(fs.readFileSync(`${storage.dataDir}/tls/cert.pem`, 'utf8'));
    try {
      return await fn({ base: `https://127.0.0.1:${server.httpsPort}`, agent });
    } finally {
      await agent.close();
      await server.close();
    }
  }

  it('`migrate --json` prints exactly {"applied":[..]}: the migrations on a fresh database, [] on the second run', async () => {
    const first = await cli(['migrate', '--json']);
    expect(first.stderr).toBe('');
    const out = parseJsonOutput(first);
    expect(Object.keys(out)).toEqual(['applied']);
    expect(out.applied.length).toBeGreaterThan(0);
    for (const name of out.applied) expect(typeof name).toBe('string');
    expect(out.applied).toContain('0001_initial');

    const second = await cli(['migrate', '--json']);
    expect(second.stderr).toBe('');
    expect(parseJsonOutput(second)).toEqual({ applied: [] });
    expect(second.stdout).toBe('{"applied":[]}\n');
  });

  it('`migrate` without --json prints text for people and exits 0', async () => {
    const r = await cli(['migrate']);
    expectTextSuccess(r);
    expect(r.stdout).toMatch(/up to date/);
  });

  it('`hotel create <slug> --name <name> --json` prints {slug, name}; the hotel is stored', async () => {
    const r = await cli(['hotel', 'create', 'grand-1', '--name', 'Grand Hotel', '--json']);
    expect(r.stderr).toBe('');
    expect(parseJsonOutput(r)).toEqual({ slug: 'grand-1', name: 'Grand Hotel', timeZone: 'UTC' });
    const row = await db().selectFrom('hotels').select(['slug', 'name']).where('slug', '=', 'grand-1').executeTakeFirst();
    expect(row).toEqual({ slug: 'grand-1', name: 'Grand Hotel' });
  });

  it('slugs of 2 and 63 characters of a-z, 0-9 and -, starting with a letter, are accepted; without --json the output is text, exit 0', async () => {
    const long = `b${'0-z'.repeat(21)}`.slice(0, 63);
    expect(long).toHaveLength(63);
    const [two, max] = await Promise.all([cli(['hotel', 'create', 'ab', '--name', 'Two']), cli(['hotel', 'create', long, '--name', 'Max', '--json'])]);
    expectTextSuccess(two);
    expect(two.stdout).toContain('ab');
    expect(parseJsonOutput(max)).toEqual({ slug: long, name: 'Max', timeZone: 'UTC' });
    const stored = await db().selectFrom('hotels').select(['slug', 'name']).where('slug', 'in', ['ab', long]).orderBy('slug').execute();
    expect(stored).toEqual([
      { slug: 'ab', name: 'Two' },
      { slug: long, name: 'Max' },
    ]);
  });

  it('an invalid slug (upper case, leading digit, 1 char, 64 chars) exits non-zero with one stderr line, nothing on stdout', async () => {
    const bad = ['A-bad', '1abc', 'x', `a${'b'.repeat(63)}`];
    const results = await Promise.all(bad.map((slug) => cli(['hotel', 'create', slug, '--name', 'Bad', '--json'])));
    results.forEach((r) => expectOneLineFailure(r, /slug/));
    const stored = await db().selectFrom('hotels').select('slug').where('slug', 'in', bad).execute();
    expect(stored).toEqual([]);
  });

  it("the command line keeps the dashboard's rules: a hotel name over 100 characters, a password over 200 are refused", async () => {
    expectOneLineFailure(await cli(['hotel', 'create', 'long-name', '--name', 'N'.repeat(101), '--json']), /at most 100 characters/);
    expect(parseJsonOutput(await cli(['hotel', 'create', 'long-name', '--name', 'N'.repeat(100), '--json'])).name).toHaveLength(100);
    const tooLong = await cli(['user', 'create', 'long-name', '--email', 'long@example.org', '--role', 'admin', '--json'], { input: 'p'.repeat(201) });
    expectOneLineFailure(tooLong, /10 to 200 characters/);
  });

  it('a duplicate slug exits non-zero with one stderr line, in text and --json mode', async () => {
    await createHotel('dup-hotel');
    expectOneLineFailure(await cli(['hotel', 'create', 'dup-hotel', '--name', 'Again', '--json']), /dup-hotel/);
    expectOneLineFailure(await cli(['hotel', 'create', 'dup-hotel', '--name', 'Again']), /dup-hotel/);
    const rows = await db().selectFrom('hotels').select('name').where('slug', '=', 'dup-hotel').execute();
    expect(rows).toEqual([{ name: 'Hotel dup-hotel' }]);
  });

  it('`key issue <slug> --json` prints {keyId, live, test}; both keys work over HTTPS; only SHA-256 hashes are stored', async () => {
    await createHotel('keys-hotel');
    const pair = parseJsonOutput(await cli(['key', 'issue', 'keys-hotel', '--json']));
    expect(Object.keys(pair).sort()).toEqual(['keyId', 'live', 'test']);
    expect(pair.keyId).toEqual(expect.any(String));
    expect(pair.live).toMatch(/^pms_live_[0-9A-Za-z]{38}$/);
    expect(pair.test).toMatch(/^pms_test_[0-9A-Za-z]{38}$/);

    await withServer(async ({ base, agent }) => {
      const live = await postJson(agent, `${base}/api/pms/v1/keys-hotel/guests/checkin`, pair.live, guest());
      expect(live.status, live.text).toBe(200);
      expect(live.body.status).toBe('created');
      const test = await postJson(agent, `${base}/api/pms/v1/keys-hotel/guests/checkin`, pair.test, guest());
      expect(test.status, test.text).toBe(200);
      expect(test.body._sandbox).toBe(true);
    });

    const rows = await db().selectFrom('api_keys').selectAll().where('pair_id', '=', pair.keyId).execute();
    expect(rows.map((r) => [r.mode, r.key_hash]).sort()).toEqual([
      ['live', sha256Hex(pair.live)],
      ['test', sha256Hex(pair.test)],
    ]);
    const everything = JSON.stringify(await db().selectFrom('api_keys').selectAll().execute());
    for (const plain of [pair.live, pair.test]) {
      expect(everything).not.toContain(plain);
      expect(everything).not.toContain(plain.slice('pms_live_'.length));
    }
  });

  it('README: `key issue` past MAX_KEY_PAIRS_PER_HOTEL active pairs fails with one line naming the fix; after `key revoke` it works again', async () => {
    await createHotel('capped-hotel');
    const env = { MAX_KEY_PAIRS_PER_HOTEL: '2' };
    const a = parseJsonOutput(await cli(['key', 'issue', 'capped-hotel', '--json'], { env }));
    parseJsonOutput(await cli(['key', 'issue', 'capped-hotel', '--json'], { env }));
    const refused = await cli(['key', 'issue', 'capped-hotel', '--json'], { env });
    expectOneLineFailure(refused, /already has as many active key pairs as allowed\. Revoke a key pair it no longer uses/);
    const hotel = await db().selectFrom('hotels').select('id').where('slug', '=', 'capped-hotel').executeTakeFirstOrThrow();
    const active = async () =>
      (await db().selectFrom('api_keys').select('id').where('hotel_id', '=', hotel.id).where('revoked_at', 'is', null).execute()).length;
    expect(await active()).toBe(4); // two pairs, a live and a test key each
    expect((await cli(['key', 'revoke', String(a.keyId)], { env })).code).toBe(0);
    const again = parseJsonOutput(await cli(['key', 'issue', 'capped-hotel', '--json'], { env }));
    expect(again.live).toMatch(/^pms_live_/);
    expect(await active()).toBe(4);
  });

  it('`key issue` without --json shows both plain keys once, as text, exit 0', async () => {
    await createHotel('text-keys');
    const r = await cli(['key', 'issue', 'text-keys']);
    expectTextSuccess(r);
    expect(r.stdout).toMatch(/pms_live_[0-9A-Za-z]{38}\n/);
    expect(r.stdout).toMatch(/pms_test_[0-9A-Za-z]{38}\n/);
  });

  it('`key issue` for an unknown hotel exits non-zero with one stderr line', async () => {
    expectOneLineFailure(await cli(['key', 'issue', 'no-such-hotel', '--json']), /no-such-hotel/);
  });

  it('issuing twice gives two working pairs (rotation); `key revoke <keyId> --json` prints {keyId, revoked: true} and then both keys of that pair get 401 UNAUTHORIZED', async () => {
    await createHotel('rotate');
    const first = parseJsonOutput(await cli(['key', 'issue', 'rotate', '--json']));
    const second = parseJsonOutput(await cli(['key', 'issue', 'rotate', '--json']));
    expect(second.keyId).not.toBe(first.keyId);
    expect(new Set([first.live, first.test, second.live, second.test]).size).toBe(4);
    const guests = (base: string): string => `${base}/api/pms/v1/rotate/guests`;

    await withServer(async ({ base, agent }) => {
      for (const key of [first.live, first.test, second.live, second.test]) {
        const res = await getJson(agent, guests(base), key);
        expect(res.status, res.text).toBe(200);
      }
    });

    const revoked = await cli(['key', 'revoke', first.keyId, '--json']);
    expect(revoked.stderr).toBe('');
    expect(parseJsonOutput(revoked)).toEqual({ keyId: first.keyId, revoked: true });

    await withServer(async ({ base, agent }) => {
      for (const key of [first.live, first.test]) {
        const get = await getJson(agent, guests(base), key);
        expect(get.status).toBe(401);
        expect(get.body).toMatchObject({ status: 'error', code: 'UNAUTHORIZED' });
        const post = await postJson(agent, `${guests(base)}/checkin`, key, guest());
        expect(post.status).toBe(401);
        expect(post.body.code).toBe('UNAUTHORIZED');
      }
      // The other pair (the rotation's new keys) still works.
      for (const key of [second.live, second.test]) expect((await getJson(agent, guests(base), key)).status).toBe(200);
    });
  });

  it('`key revoke` without --json prints text, exit 0; revoking an unknown keyId exits non-zero with one stderr line', async () => {
    await createHotel('revoke-text');
    const pair = await issueKeyPair(db(), 'revoke-text');
    const [r, unknown] = await Promise.all([cli(['key', 'revoke', pair.keyId]), cli(['key', 'revoke', 'key_doesnotexist00', '--json'])]);
    expectTextSuccess(r);
    expect(r.stdout).toContain(pair.keyId);
    const rows = await db().selectFrom('api_keys').select('revoked_at').where('pair_id', '=', pair.keyId).execute();
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.revoked_at).not.toBeNull();
    expectOneLineFailure(unknown, /key_doesnotexist00/);
  });

  it('`user create <slug> --email --role admin --json` reads the password from stdin and prints {userId, email, role}; only an scrypt hash is stored', async () => {
    await createHotel('staff-hotel');
    const password = 'correct horse battery';
    const r = await cli(['user', 'create', 'staff-hotel', '--email', 'admin@staff.example', '--role', 'admin', '--json'], { input: `${password}\n` });
    expect(r.stderr).toBe('');
    const user = parseJsonOutput(r);
    expect(user).toEqual({ userId: expect.any(String), email: 'admin@staff.example', role: 'admin' });

    const row = await db().selectFrom('staff_users').selectAll().where('id', '=', user.userId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ email: 'admin@staff.example', role: 'admin', deactivated_at: null });
    // scrypt at the service's cost (N = 2^15, r = 8, p = 1), named in the stored hash.
    expect(row.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(row.password_hash).not.toContain(password);
    expect(JSON.stringify(row)).not.toContain(password);
    // The hash is of the password as typed (the trailing newline of the pipe is not part of it).
    expect(await verifyPassword(password, row.password_hash)).toBe(true);
    expect(await verifyPassword(`${password}\n`, row.password_hash)).toBe(false);
  });

  it('`user create --role receptionist` without --json prints text, exit 0', async () => {
    await createHotel('staff-text');
    const r = await cli(['user', 'create', 'staff-text', '--email', 'desk@staff.example', '--role', 'receptionist'], { input: 'reception counter password' });
    expectTextSuccess(r);
    expect(r.stdout).toContain('desk@staff.example');
    const row = await db().selectFrom('staff_users').select(['role', 'password_hash']).where('email', '=', 'desk@staff.example').executeTakeFirstOrThrow();
    expect(row.role).toBe('receptionist');
    expect(row.password_hash.startsWith('scrypt$')).toBe(true);
  });

  it('`user create` with a bad role, a short password, an unknown hotel or a taken e-mail exits non-zero with one stderr line and stores nothing', async () => {
    await createHotel('staff-bad');
    const ok = 'long enough password';
    const [role, short, hotel, email] = await Promise.all([
      cli(['user', 'create', 'staff-bad', '--email', 'role@bad.example', '--role', 'manager', '--json'], { input: ok }),
      cli(['user', 'create', 'staff-bad', '--email', 'short@bad.example', '--role', 'admin', '--json'], { input: 'short' }),
      cli(['user', 'create', 'no-such-hotel', '--email', 'hotel@bad.example', '--role', 'admin', '--json'], { input: ok }),
      cli(['user', 'create', 'staff-bad', '--email', 'not-an-email', '--role', 'admin', '--json'], { input: ok }),
    ]);
    expectOneLineFailure(role, /role/);
    expectOneLineFailure(short, /password/);
    expectOneLineFailure(hotel, /no-such-hotel/);
    expectOneLineFailure(email, /e-mail|email/);
    const stored = await db()
      .selectFrom('staff_users')
      .select('email')
      .where('email', 'in', ['role@bad.example', 'short@bad.example', 'hotel@bad.example', 'not-an-email'])
      .execute();
    expect(stored).toEqual([]);

    await createStaffUser(db(), 'staff-bad', 'taken@bad.example', 'admin', ok);
    expectOneLineFailure(
      await cli(['user', 'create', 'staff-bad', '--email', 'taken@bad.example', '--role', 'receptionist', '--json'], { input: ok }),
      /taken@bad\.example/,
    );
  });

  it('`purge --json` prints {requestLog, idempotency} counting the rows it deleted (request log > 90 d, idempotency records expired)', async () => {
    await migrateToLatest(db());
    const day = 24 * 60 * 60 * 1000;
    const iso = (offsetMs: number): string => new Date(Date.now() + offsetMs).toISOString();
    const logRow = (id: string, createdAt: string) => ({
      id,
      created_at: createdAt,
      hotel_id: null,
      slug: 'purge-hotel',
      api_key_id: null,
      key_mode: null,
      method: 'GET',
      path: '/api/pms/v1/purge-hotel/guests',
      status_code: 401,
      client_ip: '127.0.0.1',
      user_agent: null,
      duration_ms: 1.5,
      idempotency_key: null,
    });
    const idemRow = (key: string, expiresAt: string) => ({
      api_key_id: 'key_purge_live',
      idempotency_key: key,
      fingerprint: 'fp',
      status_code: 200,
      response_body: '{}',
      created_at: iso(-2 * day),
      expires_at: expiresAt,
    });
    const logRows = [logRow('req_purge_old1', iso(-91 * day)), logRow('req_purge_old2', iso(-400 * day)), logRow('req_purge_recent', iso(-89 * day))];
    // PostgreSQL keeps the log by the day: the service creates only the days it writes.
    await ensureDaysOf(
      db(),
      'request_log',
      logRows.map((r) => r.created_at),
    );
    await db().insertInto('request_log').values(logRows).execute();
    await db()
      .insertInto('idempotency_records')
      .values([
        idemRow('expired-1', iso(-60_000)),
        idemRow('expired-2', iso(-day)),
        idemRow('expired-3', iso(-30 * day)),
        idemRow('alive', iso(23 * 60 * 60 * 1000)),
      ])
      .execute();
    // Dashboard sessions: one idle past 30 minutes, one past its 12 hours, a display idle for
    // hours (no idle expiry: kept), a live one (kept).
    const hotel = await createHotelInProcess(db(), 'purge-sessions', 'Purge Sessions');
    const user = await createStaffUser(db(), 'purge-sessions', 'desk@purge.example', 'receptionist', 'lantern-quartz-meadow-7');
    const session = (id: string, created: number, seen: number, display = 0) => ({
      id,
      user_id: user.userId,
      hotel_id: hotel.id,
      csrf_token: 't',
      created_at: iso(created),
      last_seen_at: iso(seen),
      display,
    });
    const hour = 60 * 60 * 1000;
    await db()
      .insertInto('staff_sessions')
      .values([
        session('s-idle', -2 * hour, -hour),
        session('s-old', -13 * hour, -60_000),
        session('s-display', -3 * hour, -2 * hour, 1),
        session('s-live', -hour, -60_000),
      ])
      .execute();

    // The access trail (ACCESS_LOG_RETENTION_DAYS, default 365 days): one entry and one security event past it, one of each within it.
    const trailRow = (id: string, at: number) => ({
      id,
      hotel_id: hotel.id,
      created_at: iso(at),
      staff_user_id: user.userId,
      client_ip: '127.0.0.1',
      action: 'guest.viewed',
      guest_id: 'gst_x',
      search: null,
    });
    await db()
      .insertInto('access_log')
      .values([trailRow('acc_old', -366 * day), trailRow('acc_kept', -364 * day)])
      .execute();
    const eventRow = (id: string, at: number) => ({
      id,
      hotel_id: hotel.id,
      created_at: iso(at),
      kind: 'login.failed',
      actor_type: 'anonymous' as const,
      actor_id: null,
      subject_user_id: user.userId,
      subject_key_pair_id: null,
      client_ip: '127.0.0.1',
      detail: null,
    });
    await db()
      .insertInto('security_events')
      .values([eventRow('sec_old', -366 * day), eventRow('sec_kept', -364 * day)])
      .execute();
    // The provisioning API's request log (docs/admin-api.md, "Request log"): kept 90 days.
    const operatorRow = (id: string, at: number) => ({
      id,
      at: iso(at),
      token_id: null,
      method: 'GET',
      route: '/api/admin/v1/hotels',
      status: 401,
      duration_ms: 1,
      client_ip: '127.0.0.1',
    });
    await db()
      .insertInto('operator_request_log')
      .values([operatorRow('oreq_old', -91 * day), operatorRow('oreq_kept', -89 * day)])
      .execute();
    // Adding the user (the command line's use case) was itself recorded, by the operator.
    const added = await db().selectFrom('security_events').selectAll().where('hotel_id', '=', hotel.id).where('kind', '=', 'staff.added').execute();
    expect(added).toMatchObject([{ actor_type: 'operator', actor_id: null, subject_user_id: user.userId, client_ip: null }]);

    const r = await cli(['purge', '--json']);
    expect(r.stderr).toBe('');
    expect(parseJsonOutput(r)).toEqual({
      requestLog: 2,
      idempotency: 3,
      guests: 0,
      webhookEvents: 0,
      sessions: 2,
      accessLog: 1,
      securityEvents: 1,
      pairedDisplays: 0,
      pairingCodes: 0,
      operatorRequestLog: 1,
    });
    expect((await db().selectFrom('operator_request_log').select('id').execute()).map((x) => x.id)).toEqual(['oreq_kept']);
    expect((await db().selectFrom('access_log').select('id').where('hotel_id', '=', hotel.id).execute()).map((x) => x.id)).toEqual(['acc_kept']);
    const events = await db().selectFrom('security_events').select('id').where('hotel_id', '=', hotel.id).where('kind', '=', 'login.failed').execute();
    expect(events.map((x) => x.id)).toEqual(['sec_kept']);
    const sessions = await db().selectFrom('staff_sessions').select('id').where('hotel_id', '=', hotel.id).orderBy('id').execute();
    expect(sessions.map((s) => s.id)).toEqual(['s-display', 's-live']);

    const logIds = (await db().selectFrom('request_log').select('id').where('id', 'like', 'req_purge_%').execute()).map((x) => x.id);
    expect(logIds).toEqual(['req_purge_recent']);
    const keys = (await db().selectFrom('idempotency_records').select('idempotency_key').where('api_key_id', '=', 'key_purge_live').execute()).map(
      (x) => x.idempotency_key,
    );
    expect(keys).toEqual(['alive']);

    expect(parseJsonOutput(await cli(['purge', '--json']))).toEqual({
      requestLog: 0,
      idempotency: 0,
      guests: 0,
      webhookEvents: 0,
      sessions: 0,
      accessLog: 0,
      securityEvents: 0,
      pairedDisplays: 0,
      pairingCodes: 0,
      operatorRequestLog: 0,
    });
  });

  it('`purge` without --json prints text for people and exits 0', async () => {
    const r = await cli(['purge']);
    expectTextSuccess(r);
    expect(r.stdout).toMatch(/purged 0 .*0 /);
  });
});
