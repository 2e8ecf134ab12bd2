import { expect } from 'vitest';
import type { ApiResponse } from './harness.js';

export interface ParsedRateLimit {
  limit: number;
  remaining: number;
  reset: number;
  policyName: string;
  windowSeconds: number;
  resetSeconds: number;
}

const INT = /^\d+$/;

/**
 * Asserts the rate-limit headers (X-RateLimit-Limit/-Remaining/-Reset) and the IETF
 * RateLimit-Policy/RateLimit fields of one response, and that they agree with each
 * other. `sentAtMs` is the time just before the request was sent: the window's reset
 * must lie after it (a Unix timestamp in the future when the request was served).
 */
export function expectRateLimitHeaders(res: ApiResponse, expected: { limit: number; windowSeconds: number }, sentAtMs: number): ParsedRateLimit {
  const h = res.headers;
  expect(h['x-ratelimit-limit'], 'X-RateLimit-Limit').toMatch(INT);
  expect(h['x-ratelimit-remaining'], 'X-RateLimit-Remaining').toMatch(INT);
  expect(h['x-ratelimit-reset'], 'X-RateLimit-Reset').toMatch(INT);
  const limit = Number(h['x-ratelimit-limit']);
  const remaining = Number(h['x-ratelimit-remaining']);
  const reset = Number(h['x-ratelimit-reset']);
  expect(limit).toBe(expected.limit);
  expect(remaining).toBeLessThanOrEqual(limit);
  // A Unix timestamp in seconds, after the moment the request was sent, at most one window ahead.
  expect(reset * 1000).toBeGreaterThan(sentAtMs);
  expect(reset * 1000).toBeLessThanOrEqual(Date.now() + expected.windowSeconds * 1000 + 1000);

  const policy = /^"([^"]+)";q=(\d+);w=(\d+)$/.exec(h['ratelimit-policy'] ?? '');
  expect(policy, `RateLimit-Policy: ${h['ratelimit-policy']}`).not.toBeNull();
  const current = /^"([^"]+)";r=(\d+);t=(\d+)$/.exec(h.ratelimit ?? '');
  expect(current, `RateLimit: ${h.ratelimit}`).not.toBeNull();
  const policyName = policy?.[1] ?? '';
  expect(current?.[1]).toBe(policyName);
  expect(Number(policy?.[2])).toBe(limit);
  expect(Number(policy?.[3])).toBe(expected.windowSeconds);
  expect(Number(current?.[2])).toBe(remaining);
  const resetSeconds = Number(current?.[3]);
  expect(resetSeconds).toBeGreaterThanOrEqual(1);
  expect(resetSeconds).toBeLessThanOrEqual(expected.windowSeconds);
  return { limit, remaining, reset, policyName, windowSeconds: expected.windowSeconds, resetSeconds };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Sends the first request of a counting test. If its window ends in less than
 * `needMs`, waits for the next window and sends it again, so that the whole test runs
 * inside one fixed window. The wait is set-up, never asserted on.
 */
export async function firstInFreshWindow(send: () => Promise<ApiResponse>, needMs = 8000): Promise<{ res: ApiResponse; sentAtMs: number }> {
  let sentAtMs = Date.now();
  let res = await send();
  const reset = Number(res.headers['x-ratelimit-reset']);
  if (!Number.isFinite(reset)) throw new Error(`no X-RateLimit-Reset on the first response (${res.status})`);
  const left = reset * 1000 - Date.now();
  if (left < needMs) {
    await sleep(Math.max(0, left) + 100);
    sentAtMs = Date.now();
    res = await send();
  }
  return { res, sentAtMs };
}
