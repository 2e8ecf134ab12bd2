import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RosterChange, RosterEventBus } from '../events/roster-events.js';
import { ApiError } from '../errors.js';
import type { Metrics } from '../http/metrics.js';

const HEARTBEAT_MS = 15_000;
/** How often every open stream's session is checked, so an ended or expired one closes within this, change or no change. */
const SESSION_CHECK_MS = 5_000;
/** Streams one session may hold (tabs); opening another closes its oldest. */
const MAX_STREAMS_PER_SESSION = 5;
/** Streams open at once on this instance, per user (all their sessions) and per hotel (LIVE_STREAMS_PER_USER, LIVE_STREAMS_PER_HOTEL). */
export interface StreamLimits {
  perUser: number;
  perHotel: number;
}
export const DEFAULT_STREAM_LIMITS: StreamLimits = { perUser: 10, perHotel: 200 };
/** Changes waiting for one hotel's streams beyond this are dropped for a re-read (changes: []). */
const MAX_PENDING_CHANGES = 200;
/** After a failed delivery, the next try (a re-read) comes this much later. */
const RETRY_DELIVERY_MS = 1_000;
/** A stream whose client does not read (this many bytes unsent) is ended; the browser reconnects and re-reads. */
const MAX_UNSENT_BYTES = 1024 * 1024;

interface Stream {
  reply: FastifyReply;
  sessionId: string;
  userId: string;
  write(event: string, data: unknown): void;
}

interface HotelStreams {
  streams: Set<Stream>;
  unsubscribe: () => void;
  /**
   * Changes heard while a delivery was under way, handed out together in the next one
   * (so a burst costs one session check and one event per stream); null when none.
   * Past MAX_PENDING_CHANGES the list is dropped and the event tells clients to re-read.
   */
  pending: { at: string; changes: RosterChange['changes']; overflow: boolean } | null;
  delivering: boolean;
}

/** Which of these session ids still belong to a live session (not ended, expired or deactivated). */
export type SessionCheck = (sessionIds: string[]) => Promise<Set<string>>;

/**
 * The dashboard's live stream (docs/dashboard.md: Live events): server-sent events of the
 * hotel's committed roster changes, from the roster-change bus. The client re-reads the
 * roster on every `ready`, so a reconnect never loses a change.
 *
 * A stream belongs to the session that opened it: before each change is handed out, and
 * every SESSION_CHECK_MS besides, the open streams are checked against the sessions
 * table in one query, and the streams of sessions that ended (logout, deactivation,
 * expiry, on any instance) are closed. Logout and deactivation here close them at once.
 * A session holds at most MAX_STREAMS_PER_SESSION streams: a new one closes its oldest.
 * A user (all their sessions: display logins too) and a hotel hold at most `limits`: a
 * stream past them is refused, 429 TOO_MANY_STREAMS, and the streams open stay open (closing
 * the oldest instead would make every screen of a user over the limit reconnect in turn).
 */
export class LiveStreams {
  private readonly hotels = new Map<string, HotelStreams>();
  /** Each session's streams, oldest first. */
  private readonly bySession = new Map<string, Stream[]>();
  /** How many streams each user holds. */
  private readonly perUser = new Map<string, number>();
  private ticker: NodeJS.Timeout | null = null;
  private ticks = 0;

  constructor(
    private readonly bus: RosterEventBus,
    private readonly liveSessions: SessionCheck,
    private readonly onError: (err: unknown) => void,
    private readonly metrics?: Metrics,
    private readonly limits: StreamLimits = DEFAULT_STREAM_LIMITS,
  ) {}

  /**
   * Takes over the reply's socket until the client goes away, its session ends or the
   * server closes; throws TOO_MANY_STREAMS (before anything is written) past the limits.
   */
  serve(req: FastifyRequest, reply: FastifyReply, owner: { hotelId: string; sessionId: string; userId: string }, headers: Record<string, string>): void {
    this.admit(owner);
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    const stream: Stream = {
      reply,
      sessionId: owner.sessionId,
      userId: owner.userId,
      write: (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
    };
    // A reconnecting EventSource waits this long; the default (about 3 s) is slow for a front desk.
    res.write('retry: 1000\n\n');
    stream.write('ready', { at: new Date().toISOString() });
    const hotel = this.hotel(owner.hotelId);
    hotel.streams.add(stream);
    const mine = this.bySession.get(owner.sessionId) ?? [];
    mine.push(stream);
    this.bySession.set(owner.sessionId, mine);
    this.perUser.set(owner.userId, (this.perUser.get(owner.userId) ?? 0) + 1);
    this.metrics?.streamOpened();
    if (mine.length > MAX_STREAMS_PER_SESSION) mine[0]?.reply.raw.end();
    this.startTicker();
    let cleaned = false;
    const cleanup = (): void => {
      if (cleaned) return;
      cleaned = true;
      this.metrics?.streamClosed();
      hotel.streams.delete(stream);
      const userLeft = (this.perUser.get(owner.userId) ?? 1) - 1;
      if (userLeft > 0) this.perUser.set(owner.userId, userLeft);
      else this.perUser.delete(owner.userId);
      const left = (this.bySession.get(owner.sessionId) ?? []).filter((s) => s !== stream);
      if (left.length > 0) this.bySession.set(owner.sessionId, left);
      else this.bySession.delete(owner.sessionId);
      if (hotel.streams.size === 0 && this.hotels.get(owner.hotelId) === hotel) {
        hotel.unsubscribe();
        this.hotels.delete(owner.hotelId);
      }
      if (this.bySession.size === 0) this.stopTicker();
    };
    req.raw.on('close', cleanup);
    res.on('close', cleanup);
  }

  /**
   * A new stream of a session that holds its MAX_STREAMS_PER_SESSION closes that session's
   * oldest, so it adds none and is always let in; any other is counted against the user's
   * and the hotel's limits.
   */
  private admit(owner: { hotelId: string; sessionId: string; userId: string }): void {
    if ((this.bySession.get(owner.sessionId)?.length ?? 0) >= MAX_STREAMS_PER_SESSION) return;
    const over =
      (this.perUser.get(owner.userId) ?? 0) >= this.limits.perUser
        ? { limit: 'user', max: this.limits.perUser }
        : (this.hotels.get(owner.hotelId)?.streams.size ?? 0) >= this.limits.perHotel
          ? { limit: 'hotel', max: this.limits.perHotel }
          : null;
    if (over) {
      this.metrics?.rateLimited('streams');
      throw new ApiError('TOO_MANY_STREAMS', { extra: over });
    }
  }

  /** One timer for all streams: the session check every SESSION_CHECK_MS, a keep-alive comment every HEARTBEAT_MS. */
  private startTicker(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => {
      this.ticks += 1;
      const streams = [...this.bySession.values()].flat();
      if (this.ticks % Math.round(HEARTBEAT_MS / SESSION_CHECK_MS) === 0) for (const s of streams) s.reply.raw.write(': keep-alive\n\n');
      void this.liveSessions([...this.bySession.keys()])
        .then((live) => {
          for (const s of streams) if (!live.has(s.sessionId)) s.reply.raw.end();
        })
        .catch(this.onError);
    }, SESSION_CHECK_MS);
    this.ticker.unref();
  }

  private stopTicker(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
  }

  private hotel(hotelId: string): HotelStreams {
    const existing = this.hotels.get(hotelId);
    if (existing) return existing;
    const hotel: HotelStreams = { streams: new Set(), unsubscribe: () => undefined, pending: null, delivering: false };
    hotel.unsubscribe = this.bus.subscribe(hotelId, (change) => this.enqueue(hotel, change));
    this.hotels.set(hotelId, hotel);
    return hotel;
  }

  /** Memory per hotel is bounded whatever the rate of changes: pending holds at most MAX_PENDING_CHANGES. */
  private enqueue(hotel: HotelStreams, change: RosterChange): void {
    const p = hotel.pending ?? { at: change.at, changes: [], overflow: false };
    p.at = change.at;
    // An empty change asks for a re-read; so does a backlog too long to list.
    if (change.changes.length === 0 || p.changes.length + change.changes.length > MAX_PENDING_CHANGES) {
      p.overflow = true;
      p.changes = [];
    } else if (!p.overflow) p.changes.push(...change.changes);
    hotel.pending = p;
    if (!hotel.delivering) void this.drain(hotel);
  }

  /** Hands out the pending changes, one delivery at a time, in the order the bus delivered them. */
  private async drain(hotel: HotelStreams): Promise<void> {
    hotel.delivering = true;
    try {
      while (hotel.pending) {
        const { at, changes } = hotel.pending;
        hotel.pending = null;
        try {
          await this.deliver(hotel, { at, changes });
        } catch (err) {
          // The session check failed (storage unreachable): the change has not reached the
          // dashboards. They are told to re-read once a delivery succeeds, a second from now.
          this.onError(err);
          const arrived = hotel.pending as HotelStreams['pending']; // heard while the delivery failed
          hotel.pending = { at: arrived?.at ?? at, changes: [], overflow: true };
          await new Promise((resolve) => setTimeout(resolve, RETRY_DELIVERY_MS).unref());
        }
      }
    } finally {
      hotel.delivering = false;
    }
  }

  private async deliver(hotel: HotelStreams, event: { at: string; changes: RosterChange['changes'] }): Promise<void> {
    const streams = [...hotel.streams];
    if (streams.length === 0) return;
    const live = await this.liveSessions([...new Set(streams.map((s) => s.sessionId))]);
    for (const s of streams) {
      if (!live.has(s.sessionId)) s.reply.raw.end();
      else if (s.reply.raw.writableLength > MAX_UNSENT_BYTES) s.reply.raw.destroy();
      else s.write('roster', event);
    }
  }

  /** Logout: the session's streams end now. */
  endSession(sessionId: string): void {
    this.endWhere((s) => s.sessionId === sessionId);
  }

  /** Deactivation: every stream of the user ends now. */
  endUser(userId: string): void {
    this.endWhere((s) => s.userId === userId);
  }

  private endWhere(match: (s: Stream) => boolean): void {
    for (const hotel of this.hotels.values()) for (const s of hotel.streams) if (match(s)) s.reply.raw.end();
  }

  /**
   * Ends every stream (server shutdown): browsers reconnect to another instance or later.
   * The sockets are destroyed, not only the responses ended: an ended stream's connection
   * would stay open as an idle keep-alive one, after the server already closed its idle
   * connections, and hold the shutdown.
   */
  closeAll(): void {
    this.stopTicker();
    for (const hotel of this.hotels.values()) for (const s of hotel.streams) s.reply.raw.destroy();
  }
}
