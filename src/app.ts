import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Db } from './db/database.js';
import { dashboard } from './dashboard/plugin.js';
import { LiveStreams, type StreamLimits } from './dashboard/live-events.js';
import { liveSessionIds } from './dashboard/session.js';
import { SetupLink } from './dashboard/setup-link.js';
import { docs, OPENAPI_INFO } from './docs/routes.js';
import { completeOpenApi } from './docs/openapi-extras.js';
import type { RosterEventBus } from './events/roster-events.js';
import { createCore, type CoreDeps } from './http/core.js';
import { probes } from './http/health.js';
import { pmsApi, PMS_PREFIX } from './pms/plugin.js';
import { adminApi, ADMIN_PREFIX } from './admin/plugin.js';
import type { RequestLogWriter } from './pms/request-log.js';
import { NO_OUTBOX, type WebhookOutbox } from './webhooks/dispatcher.js';

export interface AppDeps extends CoreDeps {
  db: Db;
  bus: RosterEventBus;
  requestLog: RequestLogWriter;
  /** The first-run setup link (server.ts issues its token while no hotel exists). */
  setupLink?: SetupLink;
  /** The webhook sender (server.ts); woken after commits that wrote events. */
  webhooks?: WebhookOutbox;
  /** MAX_KEY_PAIRS_PER_HOTEL (config.ts): the dashboard's Keys page issues no more active pairs. */
  maxKeyPairsPerHotel?: number;
  /** Dashboard event streams per user and per hotel (LIVE_STREAMS_PER_USER, LIVE_STREAMS_PER_HOTEL). */
  streamLimits?: StreamLimits;
}

/**
 * The whole service as a Fastify app, a tree of plugins; never listens (server.ts does).
 * The core comes first (every request passes it); the OpenAPI collector sees every route
 * registered after it; each part registers its own hooks under its own prefix.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const core = createCore(deps);
  const app = Fastify(core.options).withTypeProvider<TypeBoxTypeProvider>();
  await app.register(core.plugin);
  await app.register(cookie);
  await app.register(swagger, { openapi: OPENAPI_INFO, hideUntagged: true, transformObject: completeOpenApi as never });

  await app.register(probes, { db: deps.db, metrics: deps.metrics });
  await app.register(docs);
  await app.register(pmsApi, {
    prefix: PMS_PREFIX,
    db: deps.db,
    bus: deps.bus,
    rateLimits: deps.rateLimits,
    requestLog: deps.requestLog,
    metrics: deps.metrics,
    webhooks: deps.webhooks,
  });

  await app.register(adminApi, { prefix: ADMIN_PREFIX, db: deps.db, rateLimits: deps.rateLimits, metrics: deps.metrics });

  const streams = new LiveStreams(
    deps.bus,
    (ids) => liveSessionIds(deps.db, ids),
    (err) => deps.logger.error({ err }, 'live event delivery failed'),
    deps.metrics,
    deps.streamLimits,
  );
  // Open event streams would hold app.close() forever; browsers reconnect after a restart.
  app.addHook('preClose', async () => streams.closeAll());
  const setupLink = deps.setupLink ?? new SetupLink();
  await app.register(dashboard, { prefix: '/dashboard', ...deps, setupLink, streams, webhooks: deps.webhooks ?? NO_OUTBOX });
  return app;
}
