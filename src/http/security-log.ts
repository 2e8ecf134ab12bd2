import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';
import { clientKey } from './client-address.js';

/** Lines per client address and kind of event in one window; the rest are counted, not written. */
const LINES_PER_WINDOW = 10;
const WINDOW_MS = 60_000;
/** Lines a minute in all: many addresses together must not flood the log either. */
const LINES_PER_WINDOW_IN_ALL = 300;
/** Addresses remembered at once; a flood from many addresses resets the memory rather than growing it. */
const MAX_TRACKED = 10_000;

/**
 * Security events (a refused key, a failed login, a CSRF refusal, a 429, a refused
 * connection) as warn lines of their own with the client's address. A flood from one
 * address must not flood the log: past LINES_PER_WINDOW a minute per (address, event), or LINES_PER_WINDOW_IN_ALL in all,
 * the events are counted, and the next line written says how many were left out.
 */
export class SecurityLog {
  private readonly windows = new Map<string, { start: number; written: number; skipped: number }>();
  private all = { start: 0, written: 0 };

  note(log: Logger | FastifyBaseLogger, event: string, ip: string, fields: Record<string, unknown>, message: string): void {
    // An IPv6 client counts by its /64 (client-address.ts); the line names the address itself.
    const key = `${event} ${clientKey(ip)}`;
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || now - w.start >= WINDOW_MS) {
      if (!w && this.windows.size >= MAX_TRACKED) this.windows.clear();
      w = { start: now, written: 0, skipped: w?.skipped ?? 0 };
      this.windows.set(key, w);
    }
    if (now - this.all.start >= WINDOW_MS) this.all = { start: now, written: 0 };
    if (w.written >= LINES_PER_WINDOW || this.all.written >= LINES_PER_WINDOW_IN_ALL) {
      w.skipped++;
      return;
    }
    w.written++;
    this.all.written++;
    const skipped = w.skipped;
    w.skipped = 0;
    log.warn({ event, ip, ...fields, ...(skipped > 0 ? { notLogged: skipped } : {}) }, message);
  }
}
