import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import pino from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { startServer } from '../../src/server.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';
import { parseJsonOutput, runCli, storageEnv } from './cli-helpers.js';

// README.md, "Backup and restore": `innsync backup <file>`, a consistent online copy of
// the SQLite database while the server keeps serving; refused with PostgreSQL.

describe.runIf(testEngines().includes('sqlite'))('innsync backup (sqlite)', () => {
  let t: TestServer;
  const dirs: string[] = [];
  beforeAll(async () => {
    t = await startTestServer('sqlite');
  });
  afterAll(async () => {
    await t.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a backup taken under write load is a file of the owner alone that passes integrity_check, and a server started on it serves the roster it held', async () => {
    const base = `${t.pmsBase}`;
    for (let i = 0; i < 20; i++) expect((await t.post(`${base}/guests/checkin`, guest())).status).toBe(200);
    // Check-ins keep arriving while the backup runs.
    let writing = true;
    const writer = (async () => {
      let n = 0;
      while (writing && n < 40) {
        await t.post(`${base}/guests/checkin`, guest(), { idempotencyKey: uniqueKey('during') });
        n += 1;
      }
    })();
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-backup-'));
    dirs.push(out);
    const file = path.join(out, 'copy.sqlite');
    const r = await runCli(['backup', file, '--json'], { env: storageEnv({ dataDir: t.config.dataDir, databaseUrl: null }) });
    writing = false;
    await writer;
    const result = parseJsonOutput(r);
    expect(result).toEqual({ file, bytes: fs.statSync(file).size });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    // The copy in a DATA_DIR of its own: integrity, then a server on it with the same key.
    const restored = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-restored-'));
    dirs.push(restored);
    fs.copyFileSync(file, path.join(restored, 'innsync.sqlite'));
    const handle = openDatabase({ databaseUrl: null, dataDir: restored });
    const integrity = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(handle.db);
    expect(integrity.rows).toEqual([{ integrity_check: 'ok' }]);
    const held = await handle.db.selectFrom('guests').select('pms_guest_id').where('status', '=', 'active').execute();
    await handle.close();
    expect(held.length).toBeGreaterThanOrEqual(20);

    const server = await startServer({ ...t.config, dataDir: restored }, pino({ level: 'silent' }));
    try {
      const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(restored, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
      const res = await request(`https://127.0.0.1:${server.httpsPort}${base}/guests`, {
        headers: { authorization: `Bearer ${t.keys.live}` },
        dispatcher: agent,
      });
      const body = (await res.body.json()) as { count: number; guests: Array<{ pmsGuestId: string }> };
      await agent.close();
      expect(res.statusCode).toBe(200);
      expect(body.guests.map((g) => g.pmsGuestId).sort()).toEqual(held.map((g) => g.pms_guest_id).sort());
    } finally {
      await server.close();
    }
  });

  it('a backup ends while the database keeps growing: it copies every page in one step, however many were added since it counted them', async () => {
    // 40 MB of filler, then a write every few milliseconds that adds pages (64 KB each).
    const db = t.server.database.db;
    await sql`create table backup_filler (b blob)`.execute(db);
    await sql`insert into backup_filler (b) with recursive n(i) as (select 0 union all select i + 1 from n where i < 639) select randomblob(65536) from n`.execute(
      db,
    );
    let writing = true;
    let writes = 0;
    let writerEnded = false;
    const writer = (async () => {
      const until = Date.now() + 30_000;
      while (writing && Date.now() < until) {
        await sql`insert into backup_filler (b) values (randomblob(65536))`.execute(db);
        writes += 1;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      writerEnded = true;
    })();
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-backup-'));
    dirs.push(out);
    const file = path.join(out, 'growing.sqlite');
    try {
      const r = await runCli(['backup', file, '--json'], { env: storageEnv({ dataDir: t.config.dataDir, databaseUrl: null }) });
      // Ended while the writes went on (they stop on their own after 30 s).
      const endedWhileWriting = !writerEnded;
      expect(parseJsonOutput(r)).toEqual({ file, bytes: fs.statSync(file).size });
      expect(endedWhileWriting).toBe(true);
    } finally {
      writing = false;
      await writer;
    }
    expect(writes).toBeGreaterThan(0);
    // One committed state: whole, with the filler and some of the rows written meanwhile.
    const copy = new SqliteDatabase(file, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(copy.prepare('select count(*) from backup_filler').pluck().get()).toBeGreaterThanOrEqual(640);
    } finally {
      copy.close();
    }
  }, 120_000);

  it('an existing target file is refused with one line, and left as it was', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-backup-'));
    dirs.push(out);
    const file = path.join(out, 'taken.sqlite');
    fs.writeFileSync(file, 'keep me');
    const r = await runCli(['backup', file], { env: storageEnv({ dataDir: t.config.dataDir, databaseUrl: null }) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^innsync: backup failed: .*already exists.*\n$/);
    expect(fs.readFileSync(file, 'utf8')).toBe('keep me');
  });
});

describe.runIf(testEngines().includes('postgres'))('innsync backup (postgres)', () => {
  it('with DATABASE_URL the backup is refused with one line naming pg_dump (with --json: one JSON object on stderr)', async () => {
    const t = await startTestServer('postgres');
    try {
      const r = await runCli(['backup', path.join(os.tmpdir(), 'never.sqlite'), '--json'], {
        env: storageEnv(t.config),
      });
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr.endsWith('\n') && r.stderr.split('\n').length === 2).toBe(true);
      expect(JSON.parse(r.stderr)).toMatchObject({ status: 'error', code: 'BACKUP_UNSUPPORTED', message: expect.stringContaining('pg_dump') });
      const text = await runCli(['backup', path.join(os.tmpdir(), 'never.sqlite')], {
        env: storageEnv(t.config),
      });
      expect(text.stderr).toMatch(/^innsync: .*pg_dump.*\n$/);
    } finally {
      await t.close();
    }
  });
});
