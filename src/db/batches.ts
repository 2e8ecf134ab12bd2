/**
 * Rows one statement of a retention purge deletes: a few milliseconds on SQLite, so a purge
 * of hundreds of thousands of rows never holds SQLite's one writer, nor the process, for
 * longer than one batch (docs/architecture.md, "SQLite: long work beside short requests").
 */
export const PURGE_BATCH_ROWS = 2000;

/**
 * Runs `deleteBatch(limit)` until it removes fewer than `limit` rows, giving the event loop
 * a turn between two batches. Returns the rows removed in all.
 */
export async function deleteInBatches(deleteBatch: (limit: number) => Promise<number>, limit = PURGE_BATCH_ROWS): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await deleteBatch(limit);
    total += n;
    if (n < limit) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
