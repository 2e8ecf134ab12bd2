import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { insertRequestLogRows, type RequestLogRow } from '../db/repositories/request-log.repository.js';
import { touchKeys } from '../db/repositories/api-key.repository.js';

/**
 * Collects request-log rows and key last-use times in memory and writes them in
 * batches off the request path (decisions.md: logging must not add to latency).
 *
 * A batch leaves every 100 ms (or at 500 rows), one multi-row INSERT, on a connection
 * that serves no request (DatabaseHandle.background): so the writer keeps up with any
 * load the rate limits allow, and a process killed without warning loses at most the
 * rows of its last ~100-200 ms. SIGTERM flushes everything (close()). Key last-use times
 * are coarse (dashboard: "last used") and written at most every 5 s.
 */
export class RequestLogWriter {
  private rows: RequestLogRow[] = [];
  private lastUsed = new Map<string, string>();
  private lastTouchMs = 0;
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  /** Requests begun and not yet answered (or aborted): close() waits for their rows. */
  private readonly open = new Set<object>();
  private drained: (() => void) | null = null;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly opts: { flushEveryMs: number; maxBatch: number; touchEveryMs: number } = { flushEveryMs: 100, maxBatch: 500, touchEveryMs: 5_000 },
  ) {
    this.timer = setInterval(() => void this.flush(), opts.flushEveryMs);
    this.timer.unref();
  }

  /** A request has started; its row (or its abort) is awaited by close(). */
  begin(request: object): void {
    this.open.add(request);
  }

  /** The request is answered or aborted; called after its row (if any) was written. */
  end(request: object): void {
    if (this.open.delete(request) && this.open.size === 0) this.drained?.();
  }

  write(row: RequestLogRow, keyId?: string): void {
    this.rows.push(row);
    if (keyId) this.lastUsed.set(keyId, row.created_at);
    if (this.rows.length >= this.opts.maxBatch) void this.flush();
  }

  /**
   * Writes the rows queued so far, and the key last-use times when they are due (or
   * `all`). Never throws: a failed batch is logged and dropped.
   */
  flush(all = false): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const rows = this.rows;
      this.rows = [];
      let lastUsed = new Map<string, string>();
      if (all || Date.now() - this.lastTouchMs >= this.opts.touchEveryMs) {
        lastUsed = this.lastUsed;
        this.lastUsed = new Map();
        this.lastTouchMs = Date.now();
      }
      if (rows.length > 0) {
        try {
          await insertRequestLogRows(this.db, rows);
        } catch (err) {
          this.log.error({ err, dropped: rows.length }, 'request log batch failed');
        }
      }
      if (lastUsed.size > 0) await touchKeys(this.db, lastUsed).catch((err: unknown) => this.log.warn({ err }, 'key last-use update failed'));
    });
    return this.flushing;
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
    await this.flush(true);
  }
}
