import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asLongWork, openDatabase, runTransaction, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { testEngines } from '../support/engines.js';

// docs/architecture.md, "SQLite: long work beside short requests": a transaction of long
// work (asLongWork: a large sync, an erasure) runs on the long writer, a connection in a
// worker thread, so the event loop serves others while one of its statements runs; any
// other transaction runs on the writer in the service's thread, where a statement holds
// the event loop until it ends. The proof is the order of answers: a short read sent after
// a long statement began is answered before it only when that statement runs elsewhere.

const run = testEngines().includes('sqlite') ? describe : describe.skip;

/** A statement that reads for a while (a recursive count to three million). */
const longStatement = sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000000) select count(*) as n from c`;

run('SQLite: the long writer (sqlite)', () => {
  let dir: string;
  let handle: DatabaseHandle;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-long-writer-'));
    handle = openDatabase({ databaseUrl: null, dataDir: dir });
    await migrateToLatest(handle.db);
    await sql`create table long_work_rows (who text not null)`.execute(handle.db);
  });
  afterAll(async () => {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  let reads = 0;

  /** The order in which a long statement inside a transaction and a short read sent after it are answered. */
  async function order(transaction: (work: () => Promise<void>) => Promise<void>): Promise<string[]> {
    const answered: string[] = [];
    await transaction(() =>
      runTransaction(handle.db, async (trx) => {
        await sql`insert into long_work_rows (who) values ('transaction')`.execute(trx);
        const long = longStatement.execute(trx).then((r) => {
          expect(Number(r.rows[0]?.n)).toBe(3_000_000);
          answered.push('long statement');
        });
        // A plain read outside the transaction, not seen before (its own column name): a reader
        // answers it, from the last committed state. (A read known to be short would run in
        // this thread, docs/architecture.md.)
        const short = sql<Record<string, number>>`select count(*) as ${sql.ref(`n_${++reads}`)} from long_work_rows`.execute(handle.db).then((r) => {
          expect(Object.values(r.rows[0] ?? {})).toEqual([0]);
          answered.push('short read');
        });
        await Promise.all([long, short]);
        await sql`delete from long_work_rows`.execute(trx);
      }),
    );
    return answered;
  }

  it('a long-work transaction’s statement runs beside the event loop: a read sent after it is answered first', async () => {
    expect(await order((work) => asLongWork(work))).toEqual(['short read', 'long statement']);
  });

  it('any other transaction’s statement holds the event loop until it ends', async () => {
    expect(await order((work) => work())).toEqual(['long statement', 'short read']);
  });

  it.each([
    ['commit groups on (the default)', undefined],
    ['commit groups off', 0],
  ])(
    'a read known to be short, made while a transaction holds the writer, reads the last commit, never the open transaction’s rows: %s',
    async (_, groupMs) => {
      const own = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-long-writer-'));
      const db = openDatabase({ databaseUrl: null, dataDir: own, sqliteGroupCommitMs: groupMs });
      try {
        await sql`create table marks (who text not null)`.execute(db.db);
        const count = async () => Number((await sql<{ n: number }>`select count(*) as n from marks where who = 'uncommitted'`.execute(db.db)).rows[0]?.n);
        // Seen twice outside any transaction: known short, so it now runs in this thread.
        expect(await count()).toBe(0);
        expect(await count()).toBe(0);
        await runTransaction(db.db, async (trx) => {
          await sql`insert into marks (who) values ('uncommitted')`.execute(trx);
          expect(Number((await sql<{ n: number }>`select count(*) as n from marks where who = 'uncommitted'`.execute(trx)).rows[0]?.n)).toBe(1);
          expect(await count()).toBe(0);
          await sql`delete from marks where who = 'uncommitted'`.execute(trx);
        });
        expect(await count()).toBe(0);
      } finally {
        await db.close();
        fs.rmSync(own, { recursive: true, force: true });
      }
    },
  );

  it('texts of megabytes cross to and from the worker threads unchanged: written by the long writer, read back by a reader and by the writer here', async () => {
    const long = `${'Łódź 🏨 "quoted"\n'.repeat(40_000)}end`;
    await sql`create table long_texts (id integer primary key, body text not null)`.execute(handle.db);
    await asLongWork(() =>
      runTransaction(handle.db, async (trx) => {
        await sql`insert into long_texts (id, body) values (1, ${long}), (2, ${'short'})`.execute(trx);
        // Read back inside the transaction: from the long writer's thread.
        const inside = await sql<{ body: string }>`select body from long_texts order by id`.execute(trx);
        expect(inside.rows.map((r) => r.body)).toEqual([long, 'short']);
      }),
    );
    const read = await sql<{ body: string; n: number }>`select body, length(body) as n from long_texts where id = 1`.execute(handle.db);
    expect(read.rows[0]?.body).toBe(long);
    // SQLite counts characters: the stored text is the one sent, not its bytes.
    expect(Number(read.rows[0]?.n)).toBe([...long].length);
  });

  it('a long-work transaction that fails rolls back whole and lets the writer go; the writer’s next transaction commits', async () => {
    await expect(
      asLongWork(() =>
        runTransaction(handle.db, async (trx) => {
          await sql`insert into long_work_rows (who) values ('rolled back')`.execute(trx);
          await sql`insert into no_such_table (x) values (1)`.execute(trx);
        }),
      ),
    ).rejects.toThrow(/no such table/);
    await runTransaction(handle.db, async (trx) => {
      await sql`insert into long_work_rows (who) values ('after')`.execute(trx);
    });
    // A long-work commit, then a write outside any transaction: each in turn.
    await asLongWork(() =>
      runTransaction(handle.db, async (trx) => {
        await sql`insert into long_work_rows (who) values ('long')`.execute(trx);
      }),
    );
    await sql`insert into long_work_rows (who) values ('autocommit')`.execute(handle.db);
    const { rows } = await sql<{ who: string }>`select who from long_work_rows order by rowid`.execute(handle.db);
    expect(rows.map((r) => r.who)).toEqual(['after', 'long', 'autocommit']);
  });
});
