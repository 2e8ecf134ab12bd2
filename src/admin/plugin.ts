import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.js';
import { withFallbacks } from '../http/fallbacks.js';
import type { Metrics } from '../http/metrics.js';
import { noStore } from '../http/no-store.js';
import { idempotentWrites } from '../pms/hooks/idempotency.js';
import type { RateLimitStore } from '../rate-limit/stores.js';
import { limitPerToken, logOperatorRequests, requireOperatorToken } from './hooks.js';
import { hotelCreateRoutes, hotelRoutes } from './hotels.js';
import { adminOpenApi } from './openapi.js';

/** Where the provisioning API lives (docs/admin-api.md). */
export const ADMIN_PREFIX = '/api/admin/v1';

export interface AdminApiOptions {
  db: Db;
  rateLimits: RateLimitStore;
  metrics?: Metrics;
}

/**
 * The provisioning API for operators (docs/admin-api.md), registered under ADMIN_PREFIX:
 * every request in its own request log, never cached; every route answers only to an
 * operator token, within its rate limit; POST needs an Idempotency-Key scoped to the
 * token. Unknown paths and methods are answered first, as in the PMS API.
 */
export async function adminApi(api: FastifyInstance, opts: AdminApiOptions): Promise<void> {
  const deps = { db: opts.db };
  logOperatorRequests(api, opts.db);
  api.addHook('onSend', noStore);
  await withFallbacks(
    api,
    async (tokened) => {
      requireOperatorToken(tokened, opts.db);
      limitPerToken(tokened, opts.rateLimits, opts.metrics);
      const reference = adminOpenApi(tokened);
      await tokened.register(async (writes) => {
        idempotentWrites(writes, opts.metrics, (req) => req.operator?.tokenId ?? null);
        await writes.register(hotelCreateRoutes, deps);
      });
      await tokened.register(hotelRoutes, deps);
      tokened.get('/openapi.json', { schema: { hide: true } }, async (_req, reply) =>
        reply.type('application/json; charset=utf-8').send(JSON.stringify(reference.document(), null, 2)),
      );
    },
    { notFound: true },
  );
}
