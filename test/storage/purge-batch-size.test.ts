import { describe, expect, it } from 'vitest';
import { deleteInBatches, PURGE_BATCH_ROWS, PURGE_BATCH_TARGET_MS } from '../../src/db/batches.js';

// A purge's batches are sized by their time (docs/architecture.md, "Long deletes run in
// slices"): cut when a batch takes longer than the target, grown while batches are quick,
// never above the most rows a statement may delete. Here the "table" is a count of rows
// and each batch takes as long as it is told to.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a purge of `rows` rows whose batches take `msFor(limit)`; returns the limits asked for. */
async function purge(rows: number, msFor: (limit: number) => number, maxRows?: number): Promise<{ limits: number[]; total: number }> {
  let left = rows;
  const limits: number[] = [];
  const total = await deleteInBatches(async (limit) => {
    limits.push(limit);
    const ms = msFor(limit);
    if (ms > 0) await sleep(ms);
    const n = Math.min(left, limit);
    left -= n;
    return n;
  }, maxRows);
  return { limits, total };
}

describe('retention purge batch size', () => {
  it('quick batches grow to the most rows a statement may delete, and every row goes', async () => {
    const { limits, total } = await purge(50_000, () => 0);
    expect(total).toBe(50_000);
    expect(limits[0]).toBeLessThan(PURGE_BATCH_ROWS);
    expect(Math.max(...limits)).toBe(PURGE_BATCH_ROWS);
  });

  it('a batch that took several times the target is followed by a smaller one', async () => {
    // Every batch takes four times the target, whatever its size: each is cut until the fewest rows.
    const { limits, total } = await purge(2_000, () => 4 * PURGE_BATCH_TARGET_MS);
    expect(total).toBe(2_000);
    expect(limits[1]).toBeLessThan(limits[0] as number);
    expect(limits.slice(1).every((l, i) => l <= (limits[i] as number))).toBe(true);
  });

  it('never asks for more than the maximum given: a batch of 1 stays 1', async () => {
    const { limits, total } = await purge(7, () => 0, 1);
    expect(total).toBe(7);
    expect(limits).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
  });
});
