import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteFile } from '../../src/db/database.js';
import { testEngines } from '../support/engines.js';
import { guest, startTestServer, uniqueKey, type TestServer } from '../support/harness.js';

// SQLite: the WAL is copied into the database file by a connection in a thread of its own,
// about once a second after a write (docs/architecture.md, "SQLite: long work beside short
// requests"), not by the writer in the commit that takes the WAL past 1,000 pages. Seen in
// the files: a copy of the database file alone, without its WAL, holds a committed check-in
// soon after its answer.

const run = testEngines().includes('sqlite') ? describe : describe.skip;

run('WAL checkpoints off the service thread (sqlite)', () => {
  let t: TestServer;
  let scratch: string;
  beforeAll(async () => {
    t = await startTestServer('sqlite');
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-wal-test-'));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  /** The guest as the database file alone has it (a copy of the file, opened without any WAL). */
  function inDatabaseFile(pmsGuestId: string): string | null {
    const copy = path.join(scratch, `copy-${Date.now()}-${Math.random().toString(36).slice(2)}.sqlite`);
    fs.copyFileSync(sqliteFile(t.config.dataDir), copy);
    const db = new SqliteDatabase(copy, { readonly: true });
    try {
      const row = db.prepare('select pms_guest_id from guests where pms_guest_id = ?').get(pmsGuestId) as { pms_guest_id: string } | undefined;
      return row?.pms_guest_id ?? null;
    } finally {
      db.close();
    }
  }

  it('a committed check-in reaches the database file itself within seconds, though the WAL holds far fewer than 1,000 pages', async () => {
    const g = guest({ pmsGuestId: `WAL-${uniqueKey('g')}`, roomNumber: `W${Date.now() % 100000}` });
    const res = await t.post(`${t.pmsBase}/guests/checkin`, g, { idempotencyKey: uniqueKey('wal') });
    expect(res.status).toBe(200);
    await expect.poll(() => inDatabaseFile(g.pmsGuestId as string), { timeout: 15_000, interval: 250 }).toBe(g.pmsGuestId);
  });

  it('a truncating checkpoint the service asks for (after an erasure) runs in that thread: the event loop turns while it copies, and the WAL ends empty', async () => {
    const g = guest({ pmsGuestId: `WAL-T-${uniqueKey('g')}`, roomNumber: `T${Date.now() % 100000}` });
    expect((await t.post(`${t.pmsBase}/guests/checkin`, g, { idempotencyKey: uniqueKey('wal-t') })).status).toBe(200);
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    // In the service's thread the statement would be answered before the event loop's next turn.
    const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(t.server.database.db);
    expect(turned).toBe(true);
    expect(rows[0]?.busy).toBe(0);
    expect(fs.statSync(`${sqliteFile(t.config.dataDir)}-wal`).size).toBe(0);
    expect(inDatabaseFile(g.pmsGuestId as string)).toBe(g.pmsGuestId);
  });
});
