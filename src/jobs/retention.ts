import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { ensurePartitionsAhead } from '../db/partitions.js';
import { purgeRequestLog } from '../db/repositories/request-log.repository.js';
import { purgeExpired } from '../db/repositories/idempotency.repository.js';
import { anonymiseExpiredGuests } from '../privacy/guest-privacy.js';
import { purgeWebhookHistory } from '../db/repositories/webhook.repository.js';
import { WEBHOOK_HISTORY_MS } from '../webhooks/events.js';
import { purgeSessions } from '../db/repositories/staff.repository.js';
import { SESSION_IDLE_MS, SESSION_MAX_MS } from '../staff/sessions.js';
import { purgeAccessTrail } from '../db/repositories/access-trail.repository.js';
import { purgeDisplayPairings } from '../db/repositories/factors.repository.js';
import { pairingUnusedSince } from '../staff/factors.js';
import { DEFAULT_ACCESS_LOG_RETENTION_DAYS } from '../config.js';
import { purgeOperatorRequests } from '../db/repositories/operator.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** docs/pms-interface.md, "Request and activity logs": request logs are kept for 90 days. */
export const REQUEST_LOG_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

export interface PurgeResult {
  requestLog: number;
  idempotency: number;
  /** Stays anonymised under GUEST_RETENTION_DAYS (0 when it is off). */
  guests: number;
  /** Outgoing webhook events older than 30 days, deleted with their deliveries. */
  webhookEvents: number;
  /** Dashboard sessions past their idle or absolute expiry (a user who never came back). */
  sessions: number;
  /** Access entries older than ACCESS_LOG_RETENTION_DAYS (docs/dashboard.md, "Access trail"). */
  accessLog: number;
  /** Security events older than ACCESS_LOG_RETENTION_DAYS. */
  securityEvents: number;
  /** Front-desk display pairings unused for 90 days (docs/dashboard.md, "Second factors"). */
  pairedDisplays: number;
  /** Display pairing codes past their expiry, never used. */
  pairingCodes: number;
  /** Rows of the provisioning API's request log older than 90 days (docs/admin-api.md, "Request log"). */
  operatorRequestLog: number;
}

/**
 * Runs the retention jobs once (`innsync purge` and the periodic job): request log 90
 * days, idempotency records 24 hours, then guests checked out more than
 * `guestRetentionDays` ago are anonymised (`null`: GUEST_RETENTION_DAYS=off), and
 * outgoing webhook events are kept 30 days, expired dashboard sessions are deleted, and
 * access entries and security events are kept `accessLogRetentionDays` (ACCESS_LOG_RETENTION_DAYS),
 * and display pairings unused for 90 days and expired pairing codes are deleted, and the
 * provisioning API's request log is kept 90 days as the PMS API's.
 */
export async function runRetention(
  db: Db,
  guestRetentionDays: number | null,
  nowMs: number = Date.now(),
  accessLogRetentionDays: number = DEFAULT_ACCESS_LOG_RETENTION_DAYS,
): Promise<PurgeResult> {
  // PostgreSQL: the next days' request-log partitions exist before their first row (db/partitions.ts).
  await ensurePartitionsAhead(db, nowMs);
  const requestLog = await purgeRequestLog(db, new Date(nowMs - REQUEST_LOG_RETENTION_MS).toISOString());
  const idempotency = await purgeExpired(db, new Date(nowMs).toISOString());
  const guests = guestRetentionDays === null ? 0 : await anonymiseExpiredGuests(db, guestRetentionDays, nowMs);
  const webhookEvents = await purgeWebhookHistory(db, new Date(nowMs - WEBHOOK_HISTORY_MS).toISOString());
  const sessions = await purgeSessions(db, new Date(nowMs - SESSION_IDLE_MS).toISOString(), new Date(nowMs - SESSION_MAX_MS).toISOString());
  const trail = await purgeAccessTrail(db, new Date(nowMs - accessLogRetentionDays * DAY_MS).toISOString());
  const pairings = await purgeDisplayPairings(db, pairingUnusedSince(nowMs), new Date(nowMs).toISOString());
  const operatorRequestLog = await purgeOperatorRequests(db, new Date(nowMs - REQUEST_LOG_RETENTION_MS).toISOString());
  return { requestLog, idempotency, guests, webhookEvents, sessions, ...trail, ...pairings, operatorRequestLog };
}

/** Runs the jobs now and then every `everyMs`; returns the stop function. */
export function scheduleRetention(db: Db, log: Logger, days: { guests: number | null; accessLog: number }, everyMs = 60 * 60 * 1000): () => void {
  const run = (): void => {
    runRetention(db, days.guests, Date.now(), days.accessLog)
      .then((r) => log.info(r, 'retention purge done'))
      .catch((err: unknown) => log.error({ err }, 'retention purge failed'));
  };
  const first = setTimeout(run, 5_000);
  const timer = setInterval(run, everyMs);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
