import type { Db } from '../db/database.js';
import type { RosterEventBus } from '../events/roster-events.js';
import type { Metrics } from '../http/metrics.js';
import type { RateLimitStore } from '../rate-limit/stores.js';
import type { RequestLogWriter } from '../pms/request-log.js';
import type { WebhookOutbox } from '../webhooks/dispatcher.js';
import type { LiveStreams } from './live-events.js';
import type { SetupLink } from './setup-link.js';

/** What the dashboard's plugin and its routes are given (app.ts builds it once). */
export interface DashboardDeps {
  db: Db;
  bus: RosterEventBus;
  rateLimits: RateLimitStore;
  setupLink: SetupLink;
  streams: LiveStreams;
  metrics?: Metrics;
  /** Flushed before an erasure, so request-log rows still queued are searched too. */
  requestLog?: Pick<RequestLogWriter, 'flush'>;
  /** The webhook sender: woken when the page queues a delivery. */
  webhooks: WebhookOutbox;
  /** MAX_KEY_PAIRS_PER_HOTEL (config.ts); its default when not given. */
  maxKeyPairsPerHotel?: number;
}
