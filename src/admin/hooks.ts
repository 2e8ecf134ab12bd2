import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.js';
import { findActiveToken, insertOperatorRequest, markTokenUsed, type OperatorToken } from '../db/repositories/operator.repository.js';
import { sha256Hex } from '../domain/ids.js';
import { ApiError } from '../errors.js';
import { rateLimited } from '../http/ip-limit.js';
import type { Metrics } from '../http/metrics.js';
import { operatorTokenChecksumHolds } from '../keys/key-format.js';
import { consume, OPERATOR_TOKEN_LIMIT } from '../rate-limit/limits.js';
import type { RateLimitStore } from '../rate-limit/stores.js';

// The provisioning API's checks (docs/admin-api.md, "Authentication", "Rate limits",
// "Request log"), in the PMS API's order: token, rate limit, then the route.

// RFC 9110 11.1: the scheme name is case-insensitive; the token is compared by hash.
const BEARER = /^bearer +(\S+)$/i;

/** A token's last use is written at most once a minute, not at every request. */
const LAST_USED_EVERY_MS = 60_000;

/** The unrevoked operator token of the Authorization header, or null (one answer for every failure). */
async function authenticate(db: Db, authorization: string | undefined): Promise<OperatorToken | null> {
  const token = authorization ? BEARER.exec(authorization.trim())?.[1] : undefined;
  if (!token || !operatorTokenChecksumHolds(token)) return null;
  return findActiveToken(db, sha256Hex(token));
}

/** The 401's message: which token to send. */
export const OPERATOR_TOKEN_REFUSED =
  'Missing, invalid or revoked operator token: send Authorization: Bearer op_… with a token from innsync operator token create.';

/**
 * Every route of `scope` answers only to an operator token: a refused one (a PMS key
 * included) is one 401, counted against the per-IP limit of requests no key answers for.
 */
export function requireOperatorToken(scope: FastifyInstance, db: Db): void {
  scope.addHook('onRequest', async (req, reply) => {
    const token = await authenticate(db, req.headers.authorization);
    if (!token) {
      await scope.limitByIp(req, reply);
      throw new ApiError('UNAUTHORIZED', { message: OPERATOR_TOKEN_REFUSED });
    }
    req.operator = token;
    const now = Date.now();
    if (token.lastUsedAt === null || Date.parse(token.lastUsedAt) < now - LAST_USED_EVERY_MS)
      await markTokenUsed(db, token.tokenId, new Date(now).toISOString());
  });
}

/** docs/admin-api.md, "Rate limits": OPERATOR_TOKEN_LIMIT per token; every answer carries the headers. */
export function limitPerToken(scope: FastifyInstance, store: RateLimitStore, metrics: Metrics | undefined): void {
  scope.addHook('onRequest', async (req, reply) => {
    if (!req.operator) throw new Error('an operator route without a token');
    const rl = await consume(store, req.operator.tokenId, OPERATOR_TOKEN_LIMIT, Date.now());
    void reply.headers(rl.headers);
    if (!rl.allowed) throw rateLimited(rl, 'key', metrics);
  });
}

/** The most characters of an unknown path the request log keeps. */
const ROUTE_CAP = 200;

/** docs/admin-api.md, "Request log": one row per request of `scope`, without bodies, in the operator's own table. */
export function logOperatorRequests(scope: FastifyInstance, db: Db): void {
  scope.addHook('onResponse', async (req, reply) => {
    try {
      await insertOperatorRequest(db, {
        at: new Date().toISOString(),
        tokenId: req.operator?.tokenId ?? null,
        method: req.method,
        // An unknown path has no pattern: its path, cut short (no query, at most ROUTE_CAP characters).
        route: req.routeOptions.url ?? (req.url.split('?')[0] ?? '').slice(0, ROUTE_CAP),
        status: reply.statusCode,
        durationMs: reply.elapsedTime,
        clientIp: req.clientIp ?? req.ip ?? '',
      });
    } catch (err) {
      req.log.error({ err }, 'operator request log write failed');
    }
  });
}
