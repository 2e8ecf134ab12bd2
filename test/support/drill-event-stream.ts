import https from 'node:https';
import type { RosterChange } from '../../src/events/roster-events.js';
import { SseParser } from './sse.js';

/** A `roster` event as a dashboard receives it, with the time it arrived. */
export interface ReceivedEvent {
  receivedAt: number;
  changes: RosterChange['changes'];
}

/**
 * The dashboard's live stream (/dashboard/api/events) read as the browser does, with a
 * staff session's cookie. Reconnects by itself when the stream ends (as EventSource does).
 */
export class DashboardStream {
  readonly events: ReceivedEvent[] = [];
  readyCount = 0;
  private req: ReturnType<typeof https.get> | null = null;
  private closed = false;
  private readonly listeners = new Set<(e: ReceivedEvent) => void>();

  constructor(
    private readonly baseUrl: () => string,
    private readonly cookie: string,
  ) {
    this.open();
  }

  onEvent(fn: (e: ReceivedEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private open(): void {
    if (this.closed) return;
    const retry = () => {
      this.req = null;
      if (!this.closed) setTimeout(() => this.open(), 500);
    };
    const req = https.get(
      `${this.baseUrl()}/dashboard/api/events`,
      { rejectUnauthorized: false, headers: { cookie: `__Host-innsync_session=${this.cookie}` } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          retry();
          return;
        }
        const parser = new SseParser();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          for (const m of parser.push(chunk)) {
            if (m.event === 'ready') this.readyCount += 1;
            if (m.event !== 'roster') continue;
            const e = { receivedAt: Date.now(), changes: (JSON.parse(m.data) as { changes: RosterChange['changes'] }).changes };
            this.events.push(e);
            for (const fn of this.listeners) fn(e);
          }
        });
        res.on('end', retry);
        res.on('error', () => undefined);
      },
    );
    req.on('error', retry);
    this.req = req;
  }

  /** Resolves when an event names `guestId` (true), or after `timeoutMs` (false). */
  waitFor(guestId: string, sinceMs: number, timeoutMs: number): Promise<boolean> {
    if (this.events.some((e) => e.receivedAt >= sinceMs && e.changes.some((c) => c.guestId === guestId))) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        off();
        resolve(false);
      }, timeoutMs);
      const off = this.onEvent((e) => {
        if (e.changes.some((c) => c.guestId === guestId)) {
          clearTimeout(timer);
          off();
          resolve(true);
        }
      });
    });
  }

  close(): void {
    this.closed = true;
    this.req?.destroy();
  }
}
