import type { Logger } from 'pino';
import { isStorageBusy, isStorageUnavailable, storageErrorKind, type Db } from '../db/database.js';
import { insertLoggedRequests, type LoggedRequest } from '../db/repositories/request-log.repository.js';
import { touchKeys } from '../db/repositories/api-key.repository.js';
import type { Metrics } from '../http/metrics.js';
import { KeyChecklistRecorder } from './key-checklist.js';
import { UnattributedBudget } from './request-log-budget.js';
import { detached } from '../tracing/spans.js';

/** Rows held for a database that does not answer; beyond it the oldest are dropped (counted and logged). */
const MAX_QUEUED_ROWS = 50_000;

export interface RequestLogOptions {
  flushEveryMs: number;
  maxBatch: number;
  touchEveryMs: number;
  /** False (REQUEST_LOG=off): the rows are not stored; key last-use times and the go-live checklist still are. */
  store: boolean;
}

export const DEFAULT_REQUEST_LOG_OPTIONS: RequestLogOptions = { flushEveryMs: 100, maxBatch: 500, touchEveryMs: 5_000, store: true };

/**
 * Collects request-log rows and key last-use times in memory and writes them in
 * batches off the request path (logging adds nothing to a request's latency:
 * docs/pms-interface.md, "Request and activity logs").
 *
 * A batch leaves every 100 ms (or at 500 rows), one multi-row INSERT at a time, on a
 * connection that serves no request (DatabaseHandle.background): so the writer keeps up
 * with any load the rate limits allow, and a process killed without warning loses at most
 * the rows of its last ~100-200 ms. SIGTERM flushes everything (close()). While storage is
 * unreachable, rows wait (at most MAX_QUEUED_ROWS) and are written once it is back. Key
 * last-use times are coarse (dashboard: "last used") and written at most every 5 s.
 */
export class RequestLogWriter {
  private rows: LoggedRequest[] = [];
  private lastUsed = new Map<string, { hotelId: string; at: string }>();
  private lastTouchMs = 0;
  private inFlight: Promise<void> | null = null;
  private dropped = 0;
  private readonly timer: NodeJS.Timeout;
  /** Requests begun and not yet answered (or aborted): close() waits for their rows. */
  private readonly open = new Set<object>();
  private drained: (() => void) | null = null;
  private readonly checklist: KeyChecklistRecorder;
  /** Rows of requests no valid key sent: a few a minute per address, the rest counted (pms/request-log-budget.ts). */
  private readonly unattributed: UnattributedBudget;
  /**
   * The checklist's updates of the batches written, one after another and apart from the
   * batches themselves: the next batch of rows never waits for them.
   */
  private checklistDone: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly metrics?: Metrics,
    private readonly opts: RequestLogOptions = DEFAULT_REQUEST_LOG_OPTIONS,
  ) {
    this.timer = setInterval(() => void this.flush(), opts.flushEveryMs);
    this.timer.unref();
    this.checklist = new KeyChecklistRecorder(db);
    this.unattributed = new UnattributedBudget(log, metrics);
    metrics?.watchRequestLogQueue(() => this.rows.length);
  }

  /** A request has started; its row (or its abort) is awaited by close(). */
  begin(request: object): void {
    this.open.add(request);
  }

  /** The request is answered or aborted; called after its row (if any) was written. */
  end(request: object): void {
    if (this.open.delete(request) && this.open.size === 0) this.drained?.();
  }

  /** Queues a request's row; one that no valid key sent only within its address's budget. */
  write(row: LoggedRequest, keyId?: string): void {
    if (row.hotelId === null && !this.unattributed.take(row.clientIp)) return;
    this.rows.push(row);
    if (keyId && row.hotelId !== null) this.lastUsed.set(keyId, { hotelId: row.hotelId, at: row.at });
    if (this.rows.length >= this.opts.maxBatch) void this.flush();
  }

  /**
   * Writes the rows queued so far (one batch at a time: while one is being written, this
   * returns it), and the key last-use times when they are due (or `all`). Never throws.
   */
  flush(all = false): Promise<void> {
    // A full batch is written from the request that filled it, outside that request's trace.
    this.inFlight ??= detached(() => this.writeBatch(all)).finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async writeBatch(all: boolean): Promise<void> {
    const rows = this.rows;
    this.rows = [];
    if (rows.length > 0) {
      try {
        if (this.opts.store) {
          const started = performance.now();
          await insertLoggedRequests(this.db, rows.map(withoutNul));
          this.metrics?.requestLogWritten(rows.length, (performance.now() - started) / 1000);
        }
        this.recordChecklist(rows);
      } catch (err) {
        this.countFailure(err);
        if (isStorageUnavailable(err) || isStorageBusy(err)) this.requeue(rows, err);
        else this.recordChecklist(await this.writeOneByOne(rows));
      }
    }
    if (all || Date.now() - this.lastTouchMs >= this.opts.touchEveryMs) {
      const lastUsed = this.lastUsed;
      this.lastUsed = new Map();
      this.lastTouchMs = Date.now();
      if (lastUsed.size > 0) {
        await touchKeys(this.db, lastUsed).catch((err: unknown) => {
          this.countFailure(err);
          this.log.warn({ err }, 'key last-use update failed');
        });
      }
    }
  }

  /** Storage did not answer: the rows go back to the front of the queue, the oldest dropped past the bound. */
  private requeue(rows: LoggedRequest[], err: unknown): void {
    this.rows = rows.concat(this.rows);
    const over = this.rows.length - MAX_QUEUED_ROWS;
    if (over > 0) {
      this.rows.splice(0, over);
      this.dropped += over;
      this.metrics?.requestLogRowsDropped(over);
      this.log.error({ err, dropped: over, droppedTotal: this.dropped }, 'request log: storage unreachable for too long; the oldest rows were dropped');
    } else this.log.warn({ err, queued: this.rows.length }, 'request log: storage unreachable; rows kept for the next batch');
  }

  /** Queues the go-live checklist of the rows written (pms/key-checklist.ts); a failure costs only checklist ticks. */
  private recordChecklist(rows: LoggedRequest[]): void {
    if (rows.length === 0) return;
    this.checklistDone = this.checklistDone.then(() =>
      this.checklist.record(rows).catch((err: unknown) => {
        this.countFailure(err);
        this.log.warn({ err }, 'go-live checklist update failed');
      }),
    );
  }

  /** A batch the database refused for its content: each row alone, so one bad row costs only itself. Returns the rows written. */
  private async writeOneByOne(rows: LoggedRequest[]): Promise<LoggedRequest[]> {
    const written: LoggedRequest[] = [];
    for (const row of rows) {
      try {
        const started = performance.now();
        await insertLoggedRequests(this.db, [withoutNul(row)]);
        this.metrics?.requestLogWritten(1, (performance.now() - started) / 1000);
        written.push(row);
      } catch (err) {
        this.countFailure(err);
        this.dropped += 1;
        this.metrics?.requestLogRowsDropped(1);
        this.log.error({ err, requestId: row.id }, 'request log row refused by the database; dropped');
      }
    }
    return written;
  }

  /** A write storage refused or could not take, counted by kind (innsync_database_errors_total). */
  private countFailure(err: unknown): void {
    this.metrics?.databaseError(storageErrorKind(err) ?? 'other');
  }

  /**
   * Waits (at most `waitMs`) for requests still being answered: the server stops
   * listening before their onResponse hooks have run, and their rows must not be lost.
   */
  async close(waitMs = 10_000): Promise<void> {
    if (this.open.size > 0) {
      await new Promise<void>((resolve) => {
        const timeout = setTimeout(resolve, waitMs);
        this.drained = () => {
          clearTimeout(timeout);
          resolve();
        };
      });
    }
    clearInterval(this.timer);
    // The batch under way, then everything queued since, key times included.
    await this.inFlight;
    await this.flush(true);
    await this.checklistDone;
  }
}

/** PostgreSQL text cannot hold a NUL character: a body that carried one is logged with it escaped (\u0000). */
function withoutNul(row: LoggedRequest): LoggedRequest {
  const fields = ['requestBody', 'responseBody', 'userAgent', 'path'] as const;
  if (!fields.some((f) => row[f]?.includes('\u0000'))) return row;
  const copy = { ...row };
  for (const f of fields) {
    const v = copy[f];
    if (typeof v === 'string') copy[f] = v.replaceAll('\u0000', '\\u0000');
  }
  return copy;
}
