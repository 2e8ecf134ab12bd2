import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { createHotel, createStaffUser, issueKeyPair, revokeKeys, verifyPassword } from '../../src/operations.js';
import { createTestStorage, testEngines } from '../support/harness.js';
import { BIN, childEnv, parseJsonOutput, PROJECT_ROOT, runCli, storageEnv, type Storage } from './cli-helpers.js';

// The command line an operator expects: --version, hotel list, key list, user list,
// user deactivate, user set-password (a hidden prompt on a terminal, stdin otherwise),
// --json failures as one JSON object on stderr, and exit 2 for usage errors, 1 for failures.

describe('innsync --version and exit codes', () => {
  it('--version prints the package version; a usage error exits 2, a failure 1; with --json a failure is one JSON object on stderr', async () => {
    const pkg = JSON.parse(fs.readFileSync(`${PROJECT_ROOT}/package.json`, 'utf8')) as { version: string };
    const v = await runCli(['--version']);
    expect([v.code, v.stdout]).toEqual([0, `${pkg.version}\n`]);
    const usage = await runCli(['hotel', 'frobnicate']);
    expect(usage.code).toBe(2);
    expect(usage.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    const failure = await runCli(['key', 'list', 'no-such-hotel'], { env: { DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-cli-')) } });
    expect([failure.code, failure.stderr]).toEqual([1, 'innsync: no hotel with slug "no-such-hotel": innsync hotel list shows every hotel\'s slug\n']);
    const asJson = await runCli(['key', 'list', 'no-such-hotel', '--json'], { env: { DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-cli-')) } });
    expect(asJson.code).toBe(1);
    expect(asJson.stdout).toBe('');
    expect(JSON.parse(asJson.stderr)).toEqual({
      status: 'error',
      code: 'HOTEL_NOT_FOUND',
      message: 'no hotel with slug "no-such-hotel": innsync hotel list shows every hotel\'s slug',
    });
    const config = await runCli(['hotel', 'list', '--json'], { env: { LOG_LEVEL: 'loud' } });
    expect(JSON.parse(config.stderr)).toMatchObject({ status: 'error', code: 'CONFIG_ERROR', message: expect.stringContaining('LOG_LEVEL') });
  });
});

describe.each(testEngines())('innsync hotel, key and user commands (%s)', (engine) => {
  let storage: Storage;
  let env: Record<string, string>;
  let handle: DatabaseHandle;
  const slug = `ops-${engine}`;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    env = storageEnv(storage);
    handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    await migrateToLatest(handle.db);
    await createHotel(handle.db, slug, 'Operators Hotel');
    await createHotel(handle.db, `${slug}-b`, 'Second Hotel');
  });
  afterAll(async () => {
    await handle.close();
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  const cli = (args: string[], input?: string) => runCli(args, { env, input });

  it('hotel list and key list (never a key), in text and JSON', async () => {
    expect(parseJsonOutput(await cli(['hotel', 'list', '--json'])).hotels.slice(0, 2)).toEqual([
      { slug, name: 'Operators Hotel', timeZone: 'UTC', createdAt: expect.any(String) },
      { slug: `${slug}-b`, name: 'Second Hotel', timeZone: 'UTC', createdAt: expect.any(String) },
    ]);
    expect((await cli(['hotel', 'list'])).stdout).toMatch(new RegExp(`^${slug}  Operators Hotel  UTC\n${slug}-b  Second Hotel  UTC\n`));
    const a = await issueKeyPair(handle.db, slug);
    const b = await issueKeyPair(handle.db, slug);
    await revokeKeys(handle.db, b.keyId);
    const keys = parseJsonOutput(await cli(['key', 'list', slug, '--json'])).keys;
    expect(keys.map((k: { keyId: string; revokedAt: string | null }) => [k.keyId, k.revokedAt !== null]).sort()).toEqual(
      [
        [a.keyId, false],
        [b.keyId, true],
      ].sort(),
    );
    const text = (await cli(['key', 'list', slug])).stdout;
    expect(text).toContain(`${a.keyId}  active`);
    expect(text).toContain(`${b.keyId}  revoked`);
    expect(text + JSON.stringify(keys)).not.toMatch(/pms_(live|test)_/);
  });

  it("hotel create --time-zone sets the hotel's day; an unknown zone is refused naming the rule", async () => {
    expect(parseJsonOutput(await cli(['hotel', 'create', `${slug}-tz`, '--name', 'Zoned', '--time-zone', 'Europe/Berlin', '--json']))).toEqual({
      slug: `${slug}-tz`,
      name: 'Zoned',
      timeZone: 'Europe/Berlin',
    });
    const bad = await cli(['hotel', 'create', `${slug}-tz2`, '--name', 'Zoned', '--time-zone', 'Mars/Olympus']);
    expect([bad.code, bad.stderr]).toEqual([
      1,
      'innsync: unknown time zone "Mars/Olympus": use an IANA time zone name such as "Europe/Berlin" or "America/New_York"\n',
    ]);
  });

  it('user create refuses the e-mail addresses the dashboard refuses (one rule): an empty label, a letter outside a-z', async () => {
    const mail = `${slug}-mail`;
    await createHotel(handle.db, mail, 'Mail Hotel');
    for (const email of ['desk@ops..example', 'dësk@ops.example', 'desk@ops.example.']) {
      const r = await cli(['user', 'create', mail, '--email', email, '--role', 'receptionist'], 'a-long-password-1\n');
      expect([r.code, r.stderr]).toEqual([1, `innsync: invalid e-mail address "${email}"\n`]);
    }
    const ok = await cli(['user', 'create', mail, '--email', 'Front.Desk+1@ops.example', '--role', 'receptionist', '--json'], 'a-long-password-1\n');
    expect(parseJsonOutput(ok)).toMatchObject({ email: 'front.desk+1@ops.example', role: 'receptionist' });
  });

  it('user list, user set-password from stdin (sessions end), user deactivate by e-mail', async () => {
    await createStaffUser(handle.db, slug, 'desk@ops.example', 'receptionist', 'old-password-123');
    expect(parseJsonOutput(await cli(['user', 'list', slug, '--json'])).users).toEqual([
      { userId: expect.any(String), email: 'desk@ops.example', role: 'receptionist', createdAt: expect.any(String), deactivatedAt: null },
    ]);
    const changed = parseJsonOutput(await cli(['user', 'set-password', slug, 'Desk@Ops.example', '--json'], 'new-password-456\n'));
    expect(changed).toMatchObject({ email: 'desk@ops.example', passwordChanged: true });
    const row = await handle.db.selectFrom('staff_users').select('password_hash').where('email', '=', 'desk@ops.example').executeTakeFirstOrThrow();
    expect(await verifyPassword('new-password-456', row.password_hash)).toBe(true);
    const short = await cli(['user', 'set-password', slug, 'desk@ops.example'], 'short');
    expect([short.code, short.stderr]).toEqual([1, 'innsync: the password must be 10 to 200 characters\n']);
    const nobody = await cli(['user', 'deactivate', slug, 'nobody@ops.example']);
    expect([nobody.code, nobody.stderr]).toEqual([1, `innsync: hotel "${slug}" has no user with e-mail nobody@ops.example\n`]);
    const gone = parseJsonOutput(await cli(['user', 'deactivate', slug, 'desk@ops.example', '--json']));
    expect(gone).toMatchObject({ email: 'desk@ops.example', deactivatedAt: expect.any(String) });
    expect((await cli(['user', 'list', slug])).stdout).toMatch(/^desk@ops\.example {2}receptionist {2}deactivated /);
  });

  it('on a terminal the password is asked for and not shown', async () => {
    await createStaffUser(handle.db, slug, 'tty@ops.example', 'admin', 'old-password-123');
    const command = [process.execPath, BIN, 'user', 'set-password', slug, 'tty@ops.example'].map((a) => `'${a}'`).join(' ');
    // `script` gives the command a pseudo-terminal, as an operator's shell would.
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: PROJECT_ROOT,
      env: childEnv({ LOG_LEVEL: 'silent', ...env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let seen = '';
    let answered = 0;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      seen += d;
      // Asked twice (the second time to confirm): answered once each.
      const prompts = seen.split(/Password(?: again)?: /).length - 1;
      for (; answered < prompts; answered++) child.stdin.write('typed-at-terminal-789\r');
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(code).toBe(0);
    expect(seen).toContain('Password: ');
    expect(seen).toContain('password of tty@ops.example changed');
    expect(seen).not.toContain('typed-at-terminal-789');
    const row = await handle.db.selectFrom('staff_users').select('password_hash').where('email', '=', 'tty@ops.example').executeTakeFirstOrThrow();
    expect(await verifyPassword('typed-at-terminal-789', row.password_hash)).toBe(true);
  });
});
