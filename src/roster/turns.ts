import { performance } from 'node:perf_hooks';

/** How long a long request's pure JavaScript runs before other requests get a turn of the event loop. */
export const SLICE_MS = 8;

/** Items done between two looks at the clock. */
const CHECK_EVERY = 64;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Long in-memory work of one request (a 20,000-guest sync's plan, its activity entries,
 * its snapshots) cut into slices of about SLICE_MS, with a turn of the event loop between
 * two, so a health probe or another hotel's read is answered meanwhile
 * (docs/architecture.md, SQLite: long work beside short requests). The work itself is
 * unchanged: the same items, in the same order, in the same transaction.
 */
export class Turns {
  #since = performance.now();
  /** How many turns this work gave the event loop. */
  given = 0;

  /** A turn of the event loop when the current slice has run its time; else nothing. */
  async pause(): Promise<void> {
    if (performance.now() - this.#since < SLICE_MS) return;
    await this.turn();
  }

  /** A turn of the event loop now (between two phases), and a new slice after it. */
  async turn(): Promise<void> {
    await nextTurn();
    this.given++;
    this.#since = performance.now();
  }

  /** `items.map(fn)`, a slice at a time. */
  async map<T, R>(items: readonly T[], fn: (item: T, i: number) => R): Promise<R[]> {
    const out: R[] = [];
    for (let i = 0; i < items.length; i++) {
      out.push(fn(items[i] as T, i));
      if (i % CHECK_EVERY === CHECK_EVERY - 1) await this.pause();
    }
    return out;
  }

  /** `items.flatMap(fn)`, a slice at a time. */
  async flatMap<T, R>(items: readonly T[], fn: (item: T, i: number) => R[]): Promise<R[]> {
    const out: R[] = [];
    for (let i = 0; i < items.length; i++) {
      for (const r of fn(items[i] as T, i)) out.push(r);
      if (i % CHECK_EVERY === CHECK_EVERY - 1) await this.pause();
    }
    return out;
  }

  /** Runs a generator that yields between pieces of its work to its end, a slice at a time; its result. */
  async run<R>(steps: Generator<void, R, void>): Promise<R> {
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
      await this.pause();
    }
  }

  /**
   * Calls `write` on consecutive parts of `items` (at most `size` each): building and
   * compiling one part's statement is one slice, and the event loop turns while it runs.
   * The next part is built while the one before runs (one ahead at most; the database runs
   * them in the order sent); the first failure is the one thrown, and no part after the
   * one already under way is started.
   */
  async inParts<T, R>(items: readonly T[], size: number, write: (part: T[]) => Promise<R>): Promise<R[]> {
    const out: R[] = [];
    let running: Promise<R> | null = null;
    for (let i = 0; i < items.length; i += size) {
      const next = write(items.slice(i, i + size));
      // Reported below when its turn comes, unless one before it failed first.
      next.catch(() => undefined);
      if (running) out.push(await running);
      running = next;
    }
    if (running) out.push(await running);
    this.#since = performance.now();
    return out;
  }
}
