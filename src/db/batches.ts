/**
 * The most rows one statement of a retention purge deletes. The purge starts below it and
 * sizes its batches by their time (deleteInBatches): a purge of hundreds of thousands of
 * rows never holds SQLite's one writer, nor the process, for much longer than
 * PURGE_BATCH_TARGET_MS at a time (docs/architecture.md, "SQLite: long work beside short
 * requests").
 */
export const PURGE_BATCH_ROWS = 2000;

/** What one purge statement aims to take. */
export const PURGE_BATCH_TARGET_MS = 8;

/** The first batch's rows, and the fewest a batch is cut to. */
const FIRST_BATCH_ROWS = 200;
const FEWEST_BATCH_ROWS = 20;

/**
 * Runs `deleteBatch(limit)` until it removes fewer than `limit` rows, giving the event loop
 * a turn between two batches. Each batch's size follows the time the one before took: cut
 * in proportion when it took longer than PURGE_BATCH_TARGET_MS (a slow disk, indexes,
 * another writer's load), doubled when it took under half of it, never above `maxRows`.
 * Returns the rows removed in all.
 */
export async function deleteInBatches(deleteBatch: (limit: number) => Promise<number>, maxRows = PURGE_BATCH_ROWS): Promise<number> {
  let total = 0;
  let limit = Math.min(maxRows, FIRST_BATCH_ROWS);
  for (;;) {
    const started = performance.now();
    const n = await deleteBatch(limit);
    const ms = performance.now() - started;
    total += n;
    if (n < limit) return total;
    if (ms > PURGE_BATCH_TARGET_MS) limit = Math.max(Math.min(FEWEST_BATCH_ROWS, maxRows), Math.floor((limit * PURGE_BATCH_TARGET_MS) / ms));
    else if (ms < PURGE_BATCH_TARGET_MS / 2) limit = Math.min(maxRows, limit * 2);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
