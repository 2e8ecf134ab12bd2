import type { Db } from '../db/database.js';
import * as counters from '../db/repositories/rate-limit.repository.js';

/** A fixed-window counter store (decisions.md: fixed windows per API key and endpoint). */
export interface RateLimitStore {
  /** Counts one hit in the window containing `nowMs`; returns the count so far. */
  hit(bucket: string, windowMs: number, nowMs: number): Promise<number>;
  /** The count so far in the window containing `nowMs`, without counting. */
  peek(bucket: string, windowMs: number, nowMs: number): Promise<number>;
  /** Takes back one hit counted in the window containing `nowMs` (never below zero). */
  unhit(bucket: string, windowMs: number, nowMs: number): Promise<void>;
  close(): void;
}

/** The start of the fixed window that contains `nowMs`. */
const windowStart = (nowMs: number, windowMs: number): number => Math.floor(nowMs / windowMs) * windowMs;

/** Counters in this process's memory: right for a single instance (SQLite). */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepEveryMs = 60_000) {
    this.sweeper = setInterval(() => this.sweep(Date.now()), sweepEveryMs);
    this.sweeper.unref();
  }

  hit(bucket: string, windowMs: number, nowMs: number): Promise<number> {
    const start = windowStart(nowMs, windowMs);
    const key = `${bucket}|${windowMs}`;
    const w = this.windows.get(key);
    if (w && w.start === start) {
      w.count += 1;
      return Promise.resolve(w.count);
    }
    this.windows.set(key, { start, count: 1 });
    return Promise.resolve(1);
  }

  unhit(bucket: string, windowMs: number, nowMs: number): Promise<void> {
    const w = this.windows.get(`${bucket}|${windowMs}`);
    if (w && w.start === windowStart(nowMs, windowMs) && w.count > 0) w.count -= 1;
    return Promise.resolve();
  }

  peek(bucket: string, windowMs: number, nowMs: number): Promise<number> {
    const w = this.windows.get(`${bucket}|${windowMs}`);
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

/** Counters in the database, shared by every instance using it (decisions.md, PostgreSQL). */
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
    return counters.hitCounter(this.db, `${bucket}|${windowMs}`, windowStart(nowMs, windowMs));
  }

  unhit(bucket: string, windowMs: number, nowMs: number): Promise<void> {
    return counters.unhitCounter(this.db, `${bucket}|${windowMs}`, windowStart(nowMs, windowMs));
  }

  peek(bucket: string, windowMs: number, nowMs: number): Promise<number> {
    return counters.peekCounter(this.db, `${bucket}|${windowMs}`, windowStart(nowMs, windowMs));
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

export interface RateLimitPolicy {
  /** Name in the RateLimit-Policy field. */
  name: string;
  limit: number;
  windowMs: number;
}

/** spec 8.1, per API key and endpoint. */
export const ENDPOINT_LIMITS = {
  checkin: { name: 'checkin', limit: 60, windowMs: 60_000 },
  update: { name: 'update', limit: 60, windowMs: 60_000 },
  checkout: { name: 'checkout', limit: 60, windowMs: 60_000 },
  list: { name: 'list', limit: 30, windowMs: 60_000 },
  sync: { name: 'sync', limit: 10, windowMs: 3_600_000 },
} as const satisfies Record<string, RateLimitPolicy>;

export type PmsEndpoint = keyof typeof ENDPOINT_LIMITS;

/** decisions.md: requests not attributed to a valid key, per client IP. */
export const UNAUTHENTICATED_LIMIT: RateLimitPolicy = { name: 'unauthenticated', limit: 100, windowMs: 60_000 };

export interface RateLimitResult {
  allowed: boolean;
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

/**
 * Fixed windows for dashboard login attempts, per e-mail and per client IP. Every attempt
 * is counted before the password check and a successful one takes its count back, so in
 * effect they limit failed logins.
 */
export const LOGIN_FAILURE_LIMITS = {
  email: { name: 'login-email', limit: 5, windowMs: 15 * 60_000 },
  ip: { name: 'login-ip', limit: 20, windowMs: 15 * 60_000 },
} as const satisfies Record<string, RateLimitPolicy>;

/** Counts one request and gives the headers every response carries (spec 8.1 and the IETF fields). */
export async function consume(store: RateLimitStore, bucket: string, policy: RateLimitPolicy, nowMs: number): Promise<RateLimitResult> {
  const count = await store.hit(`${policy.name}:${bucket}`, policy.windowMs, nowMs);
  const resetAtMs = (Math.floor(nowMs / policy.windowMs) + 1) * policy.windowMs;
  const remaining = Math.max(0, policy.limit - count);
  const resetSeconds = Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000));
  const windowSeconds = policy.windowMs / 1000;
  return {
    allowed: count <= policy.limit,
    retryAfterSeconds: resetSeconds,
    headers: {
      'x-ratelimit-limit': String(policy.limit),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(Math.ceil(resetAtMs / 1000)),
      'ratelimit-policy': `"${policy.name}";q=${policy.limit};w=${windowSeconds}`,
      ratelimit: `"${policy.name}";r=${remaining};t=${resetSeconds}`,
    },
  };
}
