import type { Db } from '../db/database.js';
import * as counters from '../db/repositories/rate-limit.repository.js';

/** A fixed-window counter store (docs/pms-interface.md, "Rate limits": fixed windows per API key and endpoint). */
export interface RateLimitStore {
  /**
   * Counts one hit in the window containing `nowMs`; returns the count so far. Hits
   * counted before `forgetBefore` (epoch ms; a reset of the bucket's API key, `innsync
   * key reset-limits`) no longer count.
   */
  hit(bucket: string, windowMs: number, nowMs: number, forgetBefore?: number | null): Promise<number>;
  /** The count so far in the window containing `nowMs`, without counting. */
  peek(bucket: string, windowMs: number, nowMs: number): Promise<number>;
  /** Takes back one hit counted in the window containing `nowMs` (never below zero). */
  unhit(bucket: string, windowMs: number, nowMs: number): Promise<void>;
  close(): void;
}

/** The start of the fixed window that contains `nowMs`. */
const windowStart = (nowMs: number, windowMs: number): number => Math.floor(nowMs / windowMs) * windowMs;

/** The stored name of a bucket's counter for one window length. */
export const counterName = (bucket: string, windowMs: number): string => `${bucket}|${windowMs}`;

/**
 * Counters in this process's memory: right for a single instance (SQLite). Another process
 * (the command line) cannot clear them, so a reset reaches them as `forgetBefore`: a
 * window's count started before it starts again from zero. `since` is when the count began.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { start: number; count: number; since: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepEveryMs = 60_000) {
    this.sweeper = setInterval(() => this.sweep(Date.now()), sweepEveryMs);
    this.sweeper.unref();
  }

  hit(bucket: string, windowMs: number, nowMs: number, forgetBefore?: number | null): Promise<number> {
    const start = windowStart(nowMs, windowMs);
    const key = counterName(bucket, windowMs);
    const w = this.windows.get(key);
    if (w && w.start === start && w.since >= (forgetBefore ?? 0)) {
      w.count += 1;
      return Promise.resolve(w.count);
    }
    // Never before the reset itself, so one reset clears a count once.
    this.windows.set(key, { start, count: 1, since: Math.max(nowMs, forgetBefore ?? nowMs) });
    return Promise.resolve(1);
  }

  unhit(bucket: string, windowMs: number, nowMs: number): Promise<void> {
    const w = this.windows.get(counterName(bucket, windowMs));
    if (w && w.start === windowStart(nowMs, windowMs) && w.count > 0) w.count -= 1;
    return Promise.resolve();
  }

  peek(bucket: string, windowMs: number, nowMs: number): Promise<number> {
    const w = this.windows.get(counterName(bucket, windowMs));
    return Promise.resolve(w && w.start === windowStart(nowMs, windowMs) ? w.count : 0);
  }

  private sweep(nowMs: number): void {
    for (const [key, w] of this.windows) {
      const windowMs = Number(key.slice(key.lastIndexOf('|') + 1));
      if (w.start + windowMs <= nowMs) this.windows.delete(key);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/**
 * Counters in the database, shared by every instance using it (docs/pms-interface.md,
 * "Rate limits"). A reset deletes its counters itself (resetKeyLimits in operations.ts), so
 * `forgetBefore` is not needed here.
 */
export class DatabaseRateLimitStore implements RateLimitStore {
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly db: Db) {
    this.sweeper = setInterval(() => {
      // Windows are at most an hour long; anything older than two is dead.
      void counters.deleteCountersBefore(this.db, Date.now() - 2 * 3600_000).catch(() => undefined);
    }, 300_000);
    this.sweeper.unref();
  }

  hit(bucket: string, windowMs: number, nowMs: number): Promise<number> {
    return counters.hitCounter(this.db, counterName(bucket, windowMs), windowStart(nowMs, windowMs));
  }

  unhit(bucket: string, windowMs: number, nowMs: number): Promise<void> {
    return counters.unhitCounter(this.db, counterName(bucket, windowMs), windowStart(nowMs, windowMs));
  }

  peek(bucket: string, windowMs: number, nowMs: number): Promise<number> {
    return counters.peekCounter(this.db, counterName(bucket, windowMs), windowStart(nowMs, windowMs));
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
