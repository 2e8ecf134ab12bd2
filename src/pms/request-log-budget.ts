import type { Logger } from 'pino';
import { clientKey } from '../http/client-address.js';
import type { Metrics } from '../http/metrics.js';
import { SecurityLog } from '../http/security-log.js';

/** Rows a minute of requests no valid key sent, per client address (an IPv6 client by its /64). */
export const UNATTRIBUTED_ROWS_PER_ADDRESS = 20;
/** Rows a minute of such requests from all addresses together: many addresses must not fill the disk either. */
const UNATTRIBUTED_ROWS_IN_ALL = 600;
const WINDOW_MS = 60_000;
/** Addresses remembered at once; a flood from many addresses resets the memory rather than growing it. */
const MAX_TRACKED = 10_000;

/**
 * How many request-log rows requests that no valid key sent (401, unknown path, 405, 429 by
 * IP, plain HTTP…) may write (README.md, "Logs"): UNATTRIBUTED_ROWS_PER_ADDRESS a minute per
 * client address and UNATTRIBUTED_ROWS_IN_ALL a minute in all. The rest are not written;
 * they are counted (innsync_request_log_rows_skipped_total by `limit`), and the first one
 * an address has skipped in a minute is one `security:` warn line (REQUEST_LOG_BUDGET, under
 * the security log's own budget of lines). A request of a hotel's key is always written.
 */
export class UnattributedBudget {
  private readonly windows = new Map<string, { start: number; written: number; skipped: number }>();
  private all = { start: 0, written: 0 };
  private readonly security = new SecurityLog();

  constructor(
    private readonly log: Logger,
    private readonly metrics?: Metrics,
  ) {}

  /** Whether a row of a request no valid key sent, from `ip`, may be written now (counted if not). */
  take(ip: string, now = Date.now()): boolean {
    const address = clientKey(ip);
    let w = this.windows.get(address);
    if (!w || now - w.start >= WINDOW_MS) {
      if (!w && this.windows.size >= MAX_TRACKED) this.windows.clear();
      w = { start: now, written: 0, skipped: 0 };
      this.windows.set(address, w);
    }
    if (now - this.all.start >= WINDOW_MS) this.all = { start: now, written: 0 };
    const overAddress = w.written >= UNATTRIBUTED_ROWS_PER_ADDRESS;
    if (overAddress || this.all.written >= UNATTRIBUTED_ROWS_IN_ALL) {
      const limit = overAddress ? 'per-address' : 'total';
      this.metrics?.requestLogRowsSkipped(limit);
      if (w.skipped++ === 0) {
        const max = overAddress ? UNATTRIBUTED_ROWS_PER_ADDRESS : UNATTRIBUTED_ROWS_IN_ALL;
        this.security.note(
          this.log,
          'REQUEST_LOG_BUDGET',
          address,
          { limit, max },
          `security: request log keeps no more rows of requests without a valid key ${overAddress ? 'from this address' : 'from any address'} this minute (${max} a minute); the rest are counted, not written`,
        );
      }
      return false;
    }
    w.written++;
    this.all.written++;
    return true;
  }
}
