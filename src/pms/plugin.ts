import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/database.js';
import type { RosterEventBus } from '../events/roster-events.js';
import { withFallbacks } from '../http/fallbacks.js';
import type { Metrics } from '../http/metrics.js';
import { noStore } from '../http/no-store.js';
import { requireApiKey } from './hooks/auth.js';
import { idempotentWrites } from './hooks/idempotency.js';
import { limitPerKey } from './hooks/rate-limit.js';
import { logRequests } from './hooks/request-log.js';
import type { RateLimitStore } from '../rate-limit/stores.js';
import type { RequestLogWriter } from './request-log.js';
import type { WebhookOutbox } from '../webhooks/dispatcher.js';
import { guestEventRoutes } from './routes/guest-events.js';
import { guestListRoutes } from './routes/guest-list.js';
import { syncRoutes } from './routes/sync.js';

/** Where the PMS API of one hotel lives (docs/pms-interface.md, "Paths and versions"). */
export const PMS_PREFIX = '/api/pms/v1/:slug';

export interface PmsApiOptions {
  db: Db;
  bus: RosterEventBus;
  rateLimits: RateLimitStore;
  requestLog: RequestLogWriter;
  metrics?: Metrics;
  /** Woken after a change that wrote webhook events. */
  webhooks?: WebhookOutbox;
}

/**
 * The PMS API, registered under PMS_PREFIX. Every request is written to the request log
 * and never cached; the routes answer only to the hotel's API key, within its rate
 * limits (docs/pms-interface.md, "Order of checks": authentication, rate limit, then for writes the
 * Idempotency-Key, content type and body). Unknown paths and methods are answered
 * before any of those, as for everyone.
 */
export async function pmsApi(api: FastifyInstance, opts: PmsApiOptions): Promise<void> {
  const deps = { db: opts.db, bus: opts.bus, metrics: opts.metrics, outbox: opts.webhooks };
  logRequests(api, opts.requestLog);
  api.addHook('onSend', noStore);
  await withFallbacks(
    api,
    async (keyed) => {
      requireApiKey(keyed, opts.db);
      limitPerKey(keyed, opts.rateLimits, opts.metrics);
      await keyed.register(async (writes) => {
        idempotentWrites(writes, opts.metrics);
        await writes.register(guestEventRoutes, deps);
        await writes.register(syncRoutes, deps);
      });
      await keyed.register(guestListRoutes, deps);
    },
    { notFound: true },
  );
}
