import type { DbOrTrx } from '../database.js';

// Fixed-window counters shared by every instance on one database (docs/pms-interface.md,
// "Rate limits"). A counter is (bucket, window start); `bucket` names the key or
// address, the policy and the window length.

/** Counts one hit; returns the window's count so far (atomic: concurrent hits never lose one). */
export async function hitCounter(db: DbOrTrx, bucket: string, windowStart: number): Promise<number> {
  const row = await db
    .insertInto('rate_limit_counters')
    .values({ bucket, window_start: windowStart, count: 1 })
    .onConflict((oc) => oc.columns(['bucket', 'window_start']).doUpdateSet((eb) => ({ count: eb('rate_limit_counters.count', '+', 1) })))
    .returning('count')
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Takes back one hit (never below zero). */
export async function unhitCounter(db: DbOrTrx, bucket: string, windowStart: number): Promise<void> {
  await db
    .updateTable('rate_limit_counters')
    .set((eb) => ({ count: eb('count', '-', 1) }))
    .where('bucket', '=', bucket)
    .where('window_start', '=', windowStart)
    .where('count', '>', 0)
    .execute();
}

export async function peekCounter(db: DbOrTrx, bucket: string, windowStart: number): Promise<number> {
  const row = await db
    .selectFrom('rate_limit_counters')
    .select('count')
    .where('bucket', '=', bucket)
    .where('window_start', '=', windowStart)
    .executeTakeFirst();
  return row ? Number(row.count) : 0;
}

/** Deletes counters of windows that started before `before`. */
export async function deleteCountersBefore(db: DbOrTrx, before: number): Promise<void> {
  await db.deleteFrom('rate_limit_counters').where('window_start', '<', before).execute();
}

/** Deletes every window of the named counters. */
export async function deleteCounters(db: DbOrTrx, buckets: string[]): Promise<void> {
  if (buckets.length > 0) await db.deleteFrom('rate_limit_counters').where('bucket', 'in', buckets).execute();
}
