import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { type RateLimitStore } from '../rate-limit/stores.js';
import { consume, UNAUTHENTICATED_LIMIT, type RateLimitResult } from '../rate-limit/limits.js';
import { clientKey } from './client-address.js';
import type { Metrics, RateLimitScope } from './metrics.js';

/**
 * The 429 of a refused request, counted by the limit that refused it, with the limit's
 * headers. A test key's rehearsal (`rehearsal`, pms/sandbox-triggers.ts) is the same
 * answer, neither counted nor logged as a security event.
 */
export function rateLimited(rl: RateLimitResult, scope: RateLimitScope, metrics: Metrics | undefined, rehearsal = false): ApiError {
  if (!rehearsal) metrics?.rateLimited(scope);
  return new ApiError('RATE_LIMITED', {
    message: `Rate limit exceeded; retry in ${rl.retryAfterSeconds} seconds.`,
    extra: { retryAfter: rl.retryAfterSeconds },
    headers: { ...rl.headers, 'retry-after': String(rl.retryAfterSeconds) },
    rehearsal,
  });
}

/** The client a per-address limit counts: its address, or its IPv6 address's /64 (client-address.ts). */
export const clientOf = (req: FastifyRequest): string => clientKey(req.ip);

export type IpLimit = (req: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The per-IP limit of requests no API key answers for (docs/pms-interface.md,
 * "Rate limits": 100 a minute per client address): plain HTTP, unknown paths and methods,
 * refused keys, the API reference and the dashboard's login and setup. Its headers go on
 * the answer whatever it is. An IPv6 client counts by its /64, as the connection cap
 * does.
 */
export function ipLimit(store: RateLimitStore, metrics: Metrics | undefined): IpLimit {
  return async (req, reply) => {
    const rl = await consume(store, clientOf(req), UNAUTHENTICATED_LIMIT, Date.now());
    void reply.headers(rl.headers);
    if (!rl.allowed) throw rateLimited(rl, 'ip', metrics);
  };
}
