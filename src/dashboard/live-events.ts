import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RosterEventBus } from '../events/roster-events.js';

const HEARTBEAT_MS = 15_000;

/**
 * The dashboard's live stream (docs/dashboard.md: Live events): server-sent events of the
 * hotel's committed roster changes, from the roster-change bus. The client re-reads the
 * roster on every `ready`, so a reconnect never loses a change.
 */
export class LiveStreams {
  private readonly open = new Set<FastifyReply>();

  constructor(private readonly bus: RosterEventBus) {}

  /** Takes over the reply's socket until the client goes away or the server closes. */
  serve(req: FastifyRequest, reply: FastifyReply, hotelId: string, headers: Record<string, string>): void {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    const write = (event: string, data: unknown): void => {
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    // A reconnecting EventSource waits this long; the default (about 3 s) is slow for a front desk.
    res.write('retry: 1000\n\n');
    write('ready', { at: new Date().toISOString() });
    const unsubscribe = this.bus.subscribe(hotelId, (change) => write('roster', { at: change.at, changes: change.changes }));
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    this.open.add(reply);
    const cleanup = (): void => {
      clearInterval(heartbeat);
      unsubscribe();
      this.open.delete(reply);
    };
    req.raw.on('close', cleanup);
    res.on('close', cleanup);
  }

  /** Ends every stream (server shutdown): browsers reconnect to another instance or later. */
  closeAll(): void {
    for (const reply of this.open) reply.raw.end();
    this.open.clear();
  }
}
