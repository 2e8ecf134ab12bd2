import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isLockTimeout, isPostgres, type Db, type DbOrTrx } from './database.js';

/**
 * PostgreSQL keeps the request log by the day (docs/architecture.md, "Request log
 * storage": retention by the day): one partition per UTC day of `created_at`, named
 * `<table>_YYYYMMDD`, holding the rows from that day's 00:00:00.000Z up to, not including,
 * the next day's. Retention drops whole days; the service creates the days ahead itself.
 * SQLite has one table and deletes in batches.
 */
const DAY_PARTITIONED_TABLES = ['request_log'] as const;
export type DayPartitionedTable = (typeof DAY_PARTITIONED_TABLES)[number];

/** Days created ahead of today, at every start and every retention run: a missed day or two of runs never leaves a row without its partition. */
export const PARTITION_DAYS_AHEAD = 2;

const DAY_MS = 24 * 60 * 60 * 1000;

/** The UTC day (YYYY-MM-DD) of an ISO time or epoch milliseconds. */
export function dayOf(at: string | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

function nextDay(day: string): string {
  return dayOf(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS);
}

function partitionName(table: DayPartitionedTable, day: string): string {
  return `${table}_${day.replaceAll('-', '')}`;
}

/**
 * Creates the partitions of the given days that do not exist yet. The bounds are the days
 * as text: `created_at` is an ISO time in UTC compared byte by byte (collation "C"), so
 * '2026-11-26' ≤ '2026-11-26T23:59:59.999Z' < '2026-11-27'. Another instance creating the
 * same day at the same moment is not an error. Returns the days created.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run on an untyped schema
export async function createDayPartitions(db: Kysely<any>, table: DayPartitionedTable, days: Iterable<string>): Promise<string[]> {
  const existing = new Set((await listDayPartitions(db, table)).map((p) => p.day));
  const created: string[] = [];
  for (const day of new Set(days)) {
    if (existing.has(day)) continue;
    try {
      await inTransaction(
        db,
        sql`create table if not exists ${sql.id(partitionName(table, day))} partition of ${sql.id(table)}
        for values from (${sql.lit(day)}) to (${sql.lit(nextDay(day))})`,
      );
      created.push(day);
    } catch (err) {
      // 42P07 / 23505: another instance created it between the look and the create.
      if (!isAlreadyThere(err)) throw err;
    }
  }
  return created;
}

/**
 * A statement that takes a table's lock runs in a transaction: the caller's, or one of its
 * own. Only a transaction carries the lock timeout (postgres-driver.ts, sent with every
 * BEGIN), and a drop queued for the parent's lock without it would hold every read of
 * the table behind it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run on an untyped schema
async function inTransaction(db: Kysely<any>, statement: RawBuilder<unknown>): Promise<void> {
  if (db.isTransaction) await statement.execute(db);
  else await db.transaction().execute((trx) => statement.execute(trx));
}

function isAlreadyThere(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '42P07' || code === '23505';
}

/** The day partitions of a table, oldest first. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run on an untyped schema
export async function listDayPartitions(db: Kysely<any>, table: DayPartitionedTable): Promise<Array<{ name: string; day: string }>> {
  const { rows } = await sql<{ name: string }>`select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
    where p.relname = ${table} and p.relnamespace = current_schema()::regnamespace`.execute(db);
  const pattern = new RegExp(`^${table}_(\\d{4})(\\d{2})(\\d{2})$`);
  return rows
    .flatMap((r) => {
      const m = pattern.exec(r.name);
      return m ? [{ name: r.name, day: `${m[1]}-${m[2]}-${m[3]}` }] : [];
    })
    .sort((a, b) => a.day.localeCompare(b.day));
}

/** PostgreSQL: the partitions of the days of these times exist (created if not). A no-op on SQLite. */
export async function ensureDaysOf(db: DbOrTrx, table: DayPartitionedTable, ats: Iterable<string>): Promise<void> {
  if (!isPostgres(db)) return;
  await createDayPartitions(db, table, [...ats].map(dayOf));
}

/** Today and the next PARTITION_DAYS_AHEAD days, as of `nowMs`. */
export function daysAhead(nowMs: number): string[] {
  return Array.from({ length: PARTITION_DAYS_AHEAD + 1 }, (_, i) => dayOf(nowMs + i * DAY_MS));
}

/** PostgreSQL: every day-partitioned table has today's partition and the next PARTITION_DAYS_AHEAD days'. A no-op on SQLite. */
export async function ensurePartitionsAhead(db: Db, nowMs: number = Date.now()): Promise<void> {
  if (!isPostgres(db)) return;
  const days = daysAhead(nowMs);
  for (const table of DAY_PARTITIONED_TABLES) {
    try {
      await createDayPartitions(db, table, days);
    } catch (err) {
      // Behind long reads past lock_timeout: the next run, an hour later, is still ahead of
      // the days it creates, and a row of a day without its partition creates it itself.
      if (!isLockTimeout(err)) throw err;
    }
  }
}

/**
 * Drops the partitions whose every row is older than `cutoff` (their day ended at or
 * before it); the day the cutoff falls in stays whole until it has ended too. Returns the
 * rows they held.
 */
export async function dropDaysBefore(db: DbOrTrx, table: DayPartitionedTable, cutoff: string): Promise<number> {
  let rows = 0;
  for (const p of await listDayPartitions(db, table)) {
    if (nextDay(p.day) > cutoff) break;
    const counted = await sql<{ n: string }>`select count(*) as n from ${sql.id(p.name)}`.execute(db);
    try {
      await inTransaction(db, sql`drop table ${sql.id(p.name)}`);
    } catch (err) {
      // The drop waits for the parent's lock behind long reads at most lock_timeout; the
      // next run (an hour later) drops the day then.
      if (isLockTimeout(err)) break;
      throw err;
    }
    rows += Number(counted.rows[0]?.n ?? 0);
  }
  return rows;
}

/** PostgreSQL refused a row for a day it has no partition of (23514, "no partition of relation ... found for row"). */
export function isMissingPartition(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === '23514' && typeof e.message === 'string' && e.message.includes('no partition of relation');
}
