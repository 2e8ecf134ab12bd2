import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { insertRequestLogRows, type RequestLogRow } from '../db/repositories/request-log.repository.js';
import { touchKeys } from '../db/repositories/api-key.repository.js';

/**
 * Collects request-log rows and key last-use times in memory and writes them in
 * batches off the request path (decisions.md: logging must not add to latency).
 */
export class RequestLogWriter {
  private rows: RequestLogRow[] = [];
  private lastUsed = new Map<string, string>();
  private flushing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  /** Requests begun and not yet answered (or aborted): close() waits for their rows. */
  private readonly open = new Set<object>();
  private drained: (() => void) | null = null;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly opts: { flushEveryMs: number; maxBatch: number } = { flushEveryMs: 200, maxBatch: 500 },
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

  /** Writes everything queued so far. Never throws: a failed batch is logged and dropped. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const rows = this.rows;
      const lastUsed = this.lastUsed;
      this.rows = [];
      this.lastUsed = new Map();
      if (rows.length === 0 && lastUsed.size === 0) return;
      try {
        await insertRequestLogRows(this.db, rows);
        await touchKeys(this.db, lastUsed);
      } catch (err) {
        this.log.error({ err, dropped: rows.length }, 'request log batch failed');
      }
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
    await this.flush();
  }
}
