import type { FastifyInstance } from 'fastify';
import { rateLimited } from '../../http/ip-limit.js';
import type { Metrics } from '../../http/metrics.js';
import { consume, ENDPOINT_LIMITS } from '../../rate-limit/limits.js';
import type { RateLimitStore } from '../../rate-limit/stores.js';

/**
 * docs/pms-interface.md, "Rate limits": each route of `scope` counts against its
 * endpoint's limit (its route's `config.endpoint`) per API key, after authentication;
 * every answer carries the headers. Counts made before the key's last reset (`innsync key
 * reset-limits`) are forgotten.
 */
export function limitPerKey(scope: FastifyInstance, store: RateLimitStore, metrics: Metrics | undefined): void {
  scope.addHook('onRequest', async (req, reply) => {
    const { endpoint } = req.routeOptions.config;
    if (!req.auth || !endpoint) throw new Error(`a PMS route without an API key or an endpoint: ${req.routeOptions.url ?? ''}`);
    const rl = await consume(store, req.auth.keyId, ENDPOINT_LIMITS[endpoint], Date.now(), req.auth.limitsResetAt);
    void reply.headers(rl.headers);
    if (!rl.allowed) throw rateLimited(rl, 'key', metrics);
  });
}
