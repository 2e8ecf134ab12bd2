import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openDatabase, sqliteFile } from '../../src/db/database.js';
import { holdExclusive } from '../../src/db/data-dir-lock.js';
import { knownMigrations, migrateTo, migrateToLatest } from '../../src/db/migrations.js';
import { createHotel, hotelBySlug, issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import type { Db } from '../../src/db/database.js';
import { guest, testEngines } from '../support/harness.js';
import { freePort } from '../support/postgres-cluster.js';
import { getJson, parseJsonOutput, postJson, runCli, spawnServe, waitForExit, waitForHttps, type ServeProcess } from './cli-helpers.js';

// `innsync restore <file>` (README "Operating it", docs/backup-restore.md): the counterpart
// of `innsync backup`. Every restore here is the real command; servers are real
// `innsync serve` processes.

const dirs: string[] = [];
const running: ServeProcess[] = [];
const tempDir = (prefix: string): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};

afterEach(async () => {
  for (const p of running.splice(0)) {
    if (!p.hasExited()) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  }
});
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const env = (dataDir: string): Record<string, string> => ({ DATA_DIR: dataDir });

/** A DATA_DIR with one hotel and a key pair (at this build's schema, or stopped at `migration`). */
async function dataDirWithHotel(migration: string | null = null): Promise<{ dataDir: string; slug: string; keys: IssuedKeyPair }> {
  const dataDir = tempDir('innsync-restore-');
  const handle = openDatabase({ databaseUrl: null, dataDir });
  try {
    await (migration === null ? migrateToLatest(handle.db) : migrateTo(handle.db, migration));
    await createHotel(handle.db, 'restore-hotel', 'Restore Hotel');
    const keys = migration === null ? await issueKeyPair(handle.db, 'restore-hotel') : await olderReleaseKeyPair(handle.db, 'restore-hotel');
    return { dataDir, slug: 'restore-hotel', keys };
  } finally {
    await handle.close();
  }
}

/** A key pair as the releases before checksummed keys issued it: their key shape, their columns of api_keys. */
async function olderReleaseKeyPair(db: Db, slug: string): Promise<IssuedKeyPair> {
  const hotel = await hotelBySlug(db, slug);
  const keys = {
    keyId: 'key_older_release',
    live: `pms_live_${randomBytes(24).toString('base64url')}`,
    test: `pms_test_${randomBytes(24).toString('base64url')}`,
  };
  const row = (mode: 'live' | 'test') => ({
    id: `${keys.keyId}_${mode}`,
    pair_id: keys.keyId,
    hotel_id: hotel.id,
    mode,
    key_hash: createHash('sha256').update(keys[mode]).digest('hex'),
    created_at: new Date().toISOString(),
    revoked_at: null,
    last_used_at: null,
  });
  await db
    .insertInto('api_keys')
    .values([row('live'), row('test')])
    .execute();
  return keys;
}

interface Served {
  proc: ServeProcess;
  agent: Awaited<ReturnType<typeof waitForHttps>>['agent'];
  api: string;
}

async function serve(dataDir: string, slug: string): Promise<Served> {
  const port = await freePort();
  const proc = spawnServe({ ...env(dataDir), PORT: String(port), HTTP_PORT: 'off', HOST: '127.0.0.1' });
  running.push(proc);
  // A loaded machine takes its time to start a server.
  const { agent } = await waitForHttps(proc, dataDir, port, 90_000);
  return { proc, agent, api: `https://127.0.0.1:${port}/api/pms/v1/${slug}` };
}

async function stopServer(s: Served, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  await s.agent.close();
  s.proc.child.kill(signal);
  await waitForExit(s.proc, 60_000);
}

async function checkIn(s: Served, key: string, pmsGuestId: string): Promise<void> {
  const r = await postJson(s.agent, `${s.api}/guests/checkin`, key, guest({ pmsGuestId }));
  expect(r.status, r.text).toBe(200);
}

async function guestsOf(s: Served, key: string): Promise<string[]> {
  const r = await getJson(s.agent, `${s.api}/guests`, key);
  expect(r.status, r.text).toBe(200);
  return (r.body as { guests: Array<{ pmsGuestId: string }> }).guests.map((g) => g.pmsGuestId).sort();
}

/** Every file in `dir` with the SHA-256 of its content: what "left as it was" means. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (fs.statSync(p).isFile()) out[name] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
  }
  return out;
}

/** Active pmsGuestIds in a database file, read directly. */
function activeIn(file: string): string[] {
  const db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`select pms_guest_id from guests where status = 'active' order by pms_guest_id`).all() as Array<{ pms_guest_id: string }>).map(
      (r) => r.pms_guest_id,
    );
  } finally {
    db.close();
  }
}

let shared: Promise<{ file: string; slug: string; keys: IssuedKeyPair }> | null = null;

/** A copy of one backup (`innsync backup`, made once) of a database holding a hotel, its key and one guest. */
async function backupOf(): Promise<{ file: string; slug: string; keys: IssuedKeyPair }> {
  shared ??= (async () => {
    const { dataDir, slug, keys } = await dataDirWithHotel();
    const s = await serve(dataDir, slug);
    await checkIn(s, keys.live, 'PMS-IN-BACKUP');
    const file = path.join(tempDir('innsync-backups-'), 'backup.sqlite');
    parseJsonOutput(await runCli(['backup', file, '--json'], { env: env(dataDir) }));
    await stopServer(s);
    return { file, slug, keys };
  })();
  const made = await shared;
  const file = path.join(tempDir('innsync-backups-'), 'backup.sqlite');
  fs.copyFileSync(made.file, file);
  return { ...made, file };
}

describe.runIf(testEngines().includes('sqlite'))('innsync restore (sqlite)', { timeout: 240_000 }, () => {
  it('backup, more check-ins, the server stopped, restore: a server on the restored database serves the backed-up roster to the same key; the database it replaced is kept aside whole, 0600, with the later check-ins', async () => {
    const { dataDir, slug, keys } = await dataDirWithHotel();
    let s = await serve(dataDir, slug);
    await checkIn(s, keys.live, 'PMS-A');
    const backup = path.join(tempDir('innsync-backups-'), 'monday.sqlite');
    parseJsonOutput(await runCli(['backup', backup, '--json'], { env: env(dataDir) }));
    await checkIn(s, keys.live, 'PMS-B');
    expect(await guestsOf(s, keys.live)).toEqual(['PMS-A', 'PMS-B']);
    await stopServer(s);

    const r = await runCli(['restore', backup, '--json'], { env: env(dataDir) });
    const result = parseJsonOutput(r);
    expect(result).toEqual({
      file: backup,
      database: sqliteFile(dataDir),
      previous: expect.stringMatching(/\/innsync\.sqlite\.before-restore-\d{8}T\d{6}\.\d{3}Z$/),
      appliedMigrations: [],
    });
    expect(path.dirname(result.previous)).toBe(dataDir);
    expect(fs.statSync(result.previous).mode & 0o777).toBe(0o600);
    expect(fs.statSync(sqliteFile(dataDir)).mode & 0o777).toBe(0o600);
    // The previous database is one file holding everything it had; no temporary file is left.
    expect(activeIn(result.previous)).toEqual(['PMS-A', 'PMS-B']);
    expect(
      fs
        .readdirSync(dataDir)
        .filter((f) => f !== 'tls')
        .sort(),
    ).toEqual(['innsync.lock', 'innsync.sqlite', path.basename(result.previous)].sort());

    s = await serve(dataDir, slug);
    expect(await guestsOf(s, keys.live)).toEqual(['PMS-A']);
    await checkIn(s, keys.live, 'PMS-C');
    expect(await guestsOf(s, keys.live)).toEqual(['PMS-A', 'PMS-C']);
    await stopServer(s);

    // The text form names the backup and where the previous database is kept.
    const text = await runCli(['restore', backup], { env: env(dataDir) });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^restored .*monday\.sqlite into .*innsync\.sqlite \(its schema was current\); the previous database is kept as .*before-restore-.*\n$/,
    );
  });

  it('refused while innsync serve runs on DATA_DIR, naming the fix, with nothing changed; after the server is killed (SIGKILL: its lock dies with it, its WAL not checkpointed) the restore works and the kept database holds the WAL’s check-ins', async () => {
    const { file: backup } = await backupOf();
    const { dataDir, slug, keys } = await dataDirWithHotel();
    const s = await serve(dataDir, slug);
    await checkIn(s, keys.live, 'PMS-LIVE');
    const before = fs.readdirSync(dataDir).sort();

    const refused = await runCli(['restore', backup], { env: env(dataDir) });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(
      /^innsync: restore refused: the database in DATA_DIR .* is in use by a running server \(innsync serve\).*stop the server.*run innsync restore again\n$/,
    );
    const asJson = await runCli(['restore', backup, '--json'], { env: env(dataDir) });
    expect(JSON.parse(asJson.stderr)).toMatchObject({ status: 'error', code: 'RESTORE_REFUSED', message: expect.stringContaining('stop the server') });
    // No file added or taken away (the running server's own writes change the files' content).
    expect(fs.readdirSync(dataDir).sort()).toEqual(before);
    // The server never noticed.
    expect(await guestsOf(s, keys.live)).toEqual(['PMS-LIVE']);
    await checkIn(s, keys.live, 'PMS-LIVE-2');

    await stopServer(s, 'SIGKILL');
    expect(fs.existsSync(`${sqliteFile(dataDir)}-wal`)).toBe(true);
    const result = parseJsonOutput(await runCli(['restore', backup, '--json'], { env: env(dataDir) }));
    // The WAL went into the kept database (one file, nothing beside it); none is left beside the restored one.
    expect(activeIn(result.previous)).toEqual(['PMS-LIVE', 'PMS-LIVE-2']);
    for (const suffix of ['-wal', '-shm']) {
      expect(fs.existsSync(`${result.previous}${suffix}`)).toBe(false);
      expect(fs.existsSync(`${sqliteFile(dataDir)}${suffix}`)).toBe(false);
    }
    expect(activeIn(sqliteFile(dataDir))).toEqual(['PMS-IN-BACKUP']);
  });

  it('a server does not start while a restore holds DATA_DIR: it says so and exits', async () => {
    const { dataDir, slug } = await dataDirWithHotel();
    const lock = holdExclusive(dataDir);
    try {
      const port = await freePort();
      const proc = spawnServe({ ...env(dataDir), PORT: String(port), HTTP_PORT: 'off', HOST: '127.0.0.1' });
      running.push(proc);
      const exit = await waitForExit(proc, 90_000);
      expect(exit.code).not.toBe(0);
      expect(proc.output().stderr).toContain('is being restored');
    } finally {
      lock.release();
    }
    const s = await serve(dataDir, slug);
    await stopServer(s);
  });

  describe('refusals leave DATA_DIR as it was (no temporary file, no file aside, the database unchanged)', () => {
    async function expectRefused(file: string, reason: RegExp): Promise<void> {
      const { dataDir } = await dataDirWithHotel();
      const before = snapshot(dataDir);
      const r = await runCli(['restore', file, '--json'], { env: env(dataDir) });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      const error = JSON.parse(r.stderr) as { status: string; code: string; message: string };
      expect(error.status).toBe('error');
      expect(error.code).toBe('RESTORE_REFUSED');
      expect(error.message).toMatch(reason);
      expect(snapshot(dataDir)).toEqual(before);
    }

    it('a file that is not a database', async () => {
      const file = path.join(tempDir('innsync-bad-'), 'notes.txt');
      fs.writeFileSync(file, 'guest list, not a database\n'.repeat(100));
      await expectRefused(file, /^restore refused: .*notes\.txt is not an SQLite database/);
      await expectRefused(path.join(tempDir('innsync-bad-'), 'missing.sqlite'), /missing\.sqlite does not exist/);
    });

    it('a damaged backup (pages overwritten): it fails the integrity check', async () => {
      const { file } = await backupOf();
      const bytes = fs.readFileSync(file);
      const pageSize = bytes.readUInt16BE(16);
      // Every page after the first (the schema) filled with noise.
      for (let i = pageSize; i < bytes.length; i += 7) bytes[i] = (i * 31) & 0xff;
      fs.writeFileSync(file, bytes);
      await expectRefused(file, /^restore refused: .*backup\.sqlite .*it is damaged; restore another backup$/);
    });

    it('an SQLite database that is not innsync’s', async () => {
      const file = path.join(tempDir('innsync-bad-'), 'other-app.sqlite');
      const db = new SqliteDatabase(file);
      db.exec(`create table guests (id integer primary key, name text); insert into guests (name) values ('Ada')`);
      db.close();
      await expectRefused(file, /other-app\.sqlite is an SQLite database but not an innsync database/);
    });

    it('a database of a newer release (a migration this build does not know)', async () => {
      const { file } = await backupOf();
      const db = new SqliteDatabase(file);
      db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('0099_from_a_later_release', new Date().toISOString());
      db.close();
      await expectRefused(file, /was written by a newer release of innsync \(migrations this build does not know: 0099_from_a_later_release\)/);
    });

    it('a database with a write-ahead log beside it (a live database, not a backup)', async () => {
      const { file } = await backupOf();
      fs.writeFileSync(`${file}-wal`, 'frames');
      await expectRefused(file, /has .*backup\.sqlite-wal beside it/);
    });
  });

  it('a backup of an older release is brought to this build’s schema (its pending migrations applied) and served', async () => {
    const { dataDir: oldDir, slug, keys } = await dataDirWithHotel('0011_request_log_field_caps');
    const backup = path.join(tempDir('innsync-backups-'), 'old.sqlite');
    parseJsonOutput(await runCli(['backup', backup, '--json'], { env: env(oldDir) }));
    const { dataDir } = await dataDirWithHotel();
    const result = parseJsonOutput(await runCli(['restore', backup, '--json'], { env: env(dataDir) }));
    expect(result.appliedMigrations).toEqual(knownMigrations().filter((name) => name > '0011_request_log_field_caps'));
    expect(result.appliedMigrations).toContain('0012_webhook_answers_not_kept');
    const s = await serve(dataDir, slug);
    expect(await guestsOf(s, keys.live)).toEqual([]);
    await checkIn(s, keys.live, 'PMS-AFTER');
    expect(await guestsOf(s, keys.live)).toEqual(['PMS-AFTER']);
    await stopServer(s);
  });

  it('into a DATA_DIR without a database (a new machine): no previous database to keep', async () => {
    const { file: backup, slug, keys } = await backupOf();
    const dataDir = path.join(tempDir('innsync-new-'), 'data');
    const result = parseJsonOutput(await runCli(['restore', backup, '--json'], { env: env(dataDir) }));
    expect(result.previous).toBeNull();
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    const s = await serve(dataDir, slug);
    expect(await guestsOf(s, keys.live)).toEqual(['PMS-IN-BACKUP']);
    await stopServer(s);
  });
});

describe('innsync restore with DATABASE_URL', () => {
  it('explains that PostgreSQL is restored with pg_restore (and connects to nothing)', async () => {
    const dataDir = tempDir('innsync-restore-pg-');
    const r = await runCli(['restore', '/nonexistent/backup.dump', '--json'], {
      env: { DATA_DIR: dataDir, DATABASE_URL: 'postgres://innsync@127.0.0.1:1/innsync' },
    });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr)).toEqual({
      status: 'error',
      code: 'RESTORE_UNSUPPORTED',
      message: expect.stringMatching(/PostgreSQL.*pg_restore into a new, empty database, then run `innsync migrate` \(docs\/backup-restore\.md\)/),
    });
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });
});
