import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, runTransaction, sqliteFile, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { testEngines } from '../support/engines.js';

// SQLite: a transaction of the service takes the write lock when it begins (docs/architecture.md,
// "SQLite: long work beside short requests"). Another process writing the same database
// (an `innsync` command beside the server) then waits for it, instead of committing between
// the transaction's first read and its first write, which made SQLite refuse the
// transaction's write at once ("database is locked").

const run = testEngines().includes('sqlite') ? describe : describe.skip;

run('SQLite transactions beside another process that writes (sqlite)', () => {
  let dir: string;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-other-process-'));
    handle = openDatabase({ databaseUrl: null, dataDir: dir });
    await migrateToLatest(handle.db);
    await sql`create table other_writes (who text not null)`.execute(handle.db);
  });
  afterAll(async () => {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a transaction that reads, then writes, commits though another connection tried to write in between; the other is told to wait', async () => {
    const other = new SqliteDatabase(sqliteFile(dir));
    other.pragma('busy_timeout = 0');
    let otherOutcome = '';
    try {
      await runTransaction(handle.db, async (trx) => {
        await sql`select count(*) as n from other_writes`.execute(trx);
        // The other process writes now, between this transaction's read and its write.
        try {
          other.prepare("insert into other_writes (who) values ('other')").run();
          otherOutcome = 'committed';
        } catch (err) {
          otherOutcome = (err as { code?: string }).code ?? String(err);
        }
        await sql`insert into other_writes (who) values ('service')`.execute(trx);
      });
    } finally {
      other.close();
    }
    expect(otherOutcome).toBe('SQLITE_BUSY');
    const { rows } = await sql<{ who: string }>`select who from other_writes`.execute(handle.db);
    expect(rows.map((r) => r.who)).toEqual(['service']);
  });
});
