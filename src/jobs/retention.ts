import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { purgeRequestLog } from '../db/repositories/request-log.repository.js';
import { purgeExpired } from '../db/repositories/idempotency.repository.js';

/** spec 8.3: request logs are kept for 90 days. */
export const REQUEST_LOG_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

export interface PurgeResult {
  requestLog: number;
  idempotency: number;
}

/** Runs the retention purges once (`innsync purge` and the periodic job). */
export async function runRetention(db: Db, nowMs: number = Date.now()): Promise<PurgeResult> {
  const requestLog = await purgeRequestLog(db, new Date(nowMs - REQUEST_LOG_RETENTION_MS).toISOString());
  const idempotency = await purgeExpired(db, new Date(nowMs).toISOString());
  return { requestLog, idempotency };
}

/** Runs the purges now and then every `everyMs`; returns the stop function. */
export function scheduleRetention(db: Db, log: Logger, everyMs = 60 * 60 * 1000): () => void {
  const run = (): void => {
    runRetention(db)
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
