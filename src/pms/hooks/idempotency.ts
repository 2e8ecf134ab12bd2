import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import type { Metrics } from '../../http/metrics.js';
import { parseIdempotencyKey, requestFingerprintInSlices, sendStoredResponse, StoredResponse } from '../idempotency.js';

const JSON_TYPE = /^application\/json\s*(;.*)?$/i;

/**
 * The writes of the PMS API (docs/pms-interface.md, "Order of checks"): after authentication and
 * the rate limit, the Idempotency-Key header, then the content type, then the body. The
 * fingerprint is taken from the body as sent, before validation may trim it; the key is
 * claimed later, inside the change's own transaction (pms/idempotency.ts); a key that
 * already has a committed answer is answered with it, counted as a replay.
 */
/** The scope of a PMS request's Idempotency-Key: its API key. */
const byApiKey = (req: FastifyRequest): string | null => req.auth?.keyId ?? null;

/**
 * `scopeOf` names the scope of a request's keys (docs/pms-interface.md, "Idempotency": the
 * API key; docs/admin-api.md: the operator token); null: not authenticated.
 */
export function idempotentWrites(scope: FastifyInstance, metrics: Metrics | undefined, scopeOf: (req: FastifyRequest) => string | null = byApiKey): void {
  scope.addHook('onRequest', async (req) => {
    req.idempotencyKey = parseIdempotencyKey(req.headers['idempotency-key']);
  });
  scope.addHook('preParsing', async (req, _reply, payload) => {
    const type = req.headers['content-type'];
    if (type === undefined || !JSON_TYPE.test(type.trim())) throw new ApiError('UNSUPPORTED_MEDIA_TYPE');
    return payload;
  });
  scope.addHook('preValidation', async (req) => {
    const owner = scopeOf(req);
    if (req.idempotencyKey === null || owner === null) return;
    req.idempotency = {
      apiKeyId: owner,
      key: req.idempotencyKey,
      fingerprint: await requestFingerprintInSlices(req.method, req.url.split('?')[0] ?? req.url, req.body),
    };
  });
  // Any other error goes on to the service's error handler.
  scope.setErrorHandler(async (err, req, reply) => {
    if (!(err instanceof StoredResponse)) throw err;
    metrics?.replayed(req.routeOptions.config.endpoint ?? 'unknown');
    return sendStoredResponse(reply, err);
  });
}
