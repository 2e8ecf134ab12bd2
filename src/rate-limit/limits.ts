import { counterName, type RateLimitStore } from './stores.js';

export interface RateLimitPolicy {
  /** Name in the RateLimit-Policy field. */
  name: string;
  limit: number;
  windowMs: number;
}

/** docs/pms-interface.md, "Rate limits": per API key and endpoint. */
export const ENDPOINT_LIMITS = {
  checkin: { name: 'checkin', limit: 60, windowMs: 60_000 },
  update: { name: 'update', limit: 60, windowMs: 60_000 },
  checkout: { name: 'checkout', limit: 60, windowMs: 60_000 },
  list: { name: 'list', limit: 30, windowMs: 60_000 },
  sync: { name: 'sync', limit: 10, windowMs: 3_600_000 },
} as const satisfies Record<string, RateLimitPolicy>;

export type PmsEndpoint = keyof typeof ENDPOINT_LIMITS;

/** docs/pms-interface.md, "Rate limits": requests not attributed to a valid key, per client IP. */
export const UNAUTHENTICATED_LIMIT: RateLimitPolicy = { name: 'unauthenticated', limit: 100, windowMs: 60_000 };

/** docs/admin-api.md, "Rate limits": every request of one operator token, whatever the route. */
export const OPERATOR_TOKEN_LIMIT: RateLimitPolicy = { name: 'operator', limit: 120, windowMs: 60_000 };

export interface RateLimitResult {
  allowed: boolean;
  headers: Record<string, string>;
  retryAfterSeconds: number;
}

/** The stored name of a policy's counter for one bucket (a key id, an address, …). */
export const policyBucket = (policy: RateLimitPolicy, bucket: string): string => `${policy.name}:${bucket}`;

/** The stored counter names of every endpoint limit of one API key (what a reset of its limits deletes). */
export function keyCounterNames(keyId: string): string[] {
  return Object.values(ENDPOINT_LIMITS).map((policy) => counterName(policyBucket(policy, keyId), policy.windowMs));
}

/**
 * Counts one request and gives the headers every response carries (docs/pms-interface.md,
 * "Rate limits": X-RateLimit-* and the IETF fields). Hits counted before `forgetBefore`
 * (epoch ms) no longer count (RateLimitStore.hit).
 */
export async function consume(
  store: RateLimitStore,
  bucket: string,
  policy: RateLimitPolicy,
  nowMs: number,
  forgetBefore?: number | null,
): Promise<RateLimitResult> {
  const count = await store.hit(policyBucket(policy, bucket), policy.windowMs, nowMs, forgetBefore);
  return limitResult(policy, count, nowMs);
}

/**
 * The answer of a limit already spent in this window: what a request past it gets (a
 * test key's rehearsal of a 429, pms/sandbox-triggers.ts, answers with exactly these).
 */
export function exhaustedLimit(policy: RateLimitPolicy, nowMs: number): RateLimitResult {
  return limitResult(policy, policy.limit + 1, nowMs);
}

/** The result and headers of the `count`th request of a window. */
function limitResult(policy: RateLimitPolicy, count: number, nowMs: number): RateLimitResult {
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
