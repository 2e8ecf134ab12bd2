import { describe, expect, it } from 'vitest';
import { SLICE_MS, Turns } from '../../src/roster/turns.js';

// roster/turns.ts: a long request's in-memory work (a sync's plan, entries, snapshots) gives
// the event loop a turn after each slice of about SLICE_MS (docs/architecture.md, SQLite:
// long work beside short requests). The proof is structural: work another request queued
// (a setImmediate) runs before the long work ends, and the long work's result is unchanged.

/** Holds the thread for `ms` milliseconds, as an item of long work does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('Turns: long in-memory work in slices', () => {
  it('map gives other work turns while its items run longer than a slice, and returns every result in order', async () => {
    const turns = new Turns();
    const items = Array.from({ length: 256 }, (_, i) => i);
    let otherRan = 0;
    let mapped = false;
    // Another request's work, queued before the long work starts; it asks for its next turn each time it runs.
    const other = (): void => {
      if (mapped) return;
      otherRan++;
      setImmediate(other);
    };
    setImmediate(other);
    const out = await turns.map(items, (i) => {
      // 64 items (one look at the clock) take at least two slices.
      busy((2 * SLICE_MS) / 64);
      return i * 2;
    });
    mapped = true;
    expect(out).toEqual(items.map((i) => i * 2));
    // 256 items in groups of 64, each group past the slice: a turn after each of the four.
    expect(turns.given).toBeGreaterThanOrEqual(3);
    expect(otherRan).toBeGreaterThanOrEqual(3);
  });

  it('run drives a generator to its result, a slice at a time', async () => {
    function* steps(): Generator<void, number, void> {
      let sum = 0;
      for (let i = 1; i <= 10; i++) {
        busy(SLICE_MS);
        sum += i;
        yield;
      }
      return sum;
    }
    const turns = new Turns();
    let otherRan = false;
    setImmediate(() => {
      otherRan = true;
    });
    expect(await turns.run(steps())).toBe(55);
    expect(otherRan).toBe(true);
    expect(turns.given).toBeGreaterThanOrEqual(9);
  });

  it('inParts writes the parts in order, one ahead at most, and throws the first failure', async () => {
    const started: number[] = [];
    const write = async (part: number[]): Promise<number> => {
      started.push(part[0] ?? -1);
      await new Promise((resolve) => setImmediate(resolve));
      if ((part[0] ?? 0) >= 4) throw new Error(`part from ${part[0]} failed`);
      return part.length;
    };
    expect(await new Turns().inParts([0, 1, 2, 3], 2, write)).toEqual([2, 2]);
    expect(started).toEqual([0, 2]);
    started.length = 0;
    await expect(new Turns().inParts([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 2, write)).rejects.toThrow('part from 4 failed');
    // The failing part and the one built while it ran; none after.
    expect(started).toEqual([0, 2, 4, 6]);
  });
});
