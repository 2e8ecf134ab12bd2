import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DbOrTrx } from '../db/database.js';
import { InProcessRosterEventBus, type RosterChange, type RosterEventBus } from './roster-events.js';

const CHANNEL = 'innsync_roster';
/** NOTIFY payloads must stay under 8,000 bytes. */
const MAX_PAYLOAD_BYTES = 7_000;
/** The LISTEN connection is tried again after 200 ms, then ever less often, at most every 2 s. */
const RECONNECT_MS = [200, 500, 1_000, 2_000];

/**
 * The one notification of a change: the change itself, or, when it does not fit a NOTIFY
 * payload (a large sync), the same change without its list, which tells listeners to
 * re-read the roster.
 */
export function toPayload(change: RosterChange): string {
  const whole = JSON.stringify(change);
  if (Buffer.byteLength(whole) <= MAX_PAYLOAD_BYTES) return whole;
  return JSON.stringify({ hotelId: change.hotelId, at: change.at, changes: [] } satisfies RosterChange);
}

/**
 * The roster-change bus across instances (several servers on one PostgreSQL database).
 * Each change sends one NOTIFY inside its own transaction: PostgreSQL delivers it when,
 * and only if, the change commits, in commit order, to every instance listening (this
 * one included), on a dedicated LISTEN connection. Nothing queues in this process
 * between the commit and the delivery.
 *
 * When the LISTEN connection drops, changes may be missed until it is back; then every
 * subscribed hotel gets an empty change, and dashboards re-read their roster.
 */
export class PostgresRosterEventBus implements RosterEventBus {
  private readonly local = new InProcessRosterEventBus();
  private readonly hotels = new Map<string, number>();
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private attempts = 0;

  constructor(
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {}

  /** Connects the LISTEN session; resolves once listening (rejects when the first attempt fails). */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    // TCP keepalive: a half-open connection (a failover, a partition) is noticed and replaced.
    const client = new pg.Client({ connectionString: this.connectionString, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    client.on('notification', (msg) => {
      if (msg.channel !== CHANNEL || !msg.payload) return;
      try {
        this.local.emit(JSON.parse(msg.payload) as RosterChange);
      } catch (err) {
        this.log.warn({ err }, 'unreadable roster notification');
      }
    });
    client.on('error', (err) => {
      this.log.warn({ err }, 'roster event connection lost');
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    this.scheduleConnect();
  }

  private scheduleConnect(): void {
    if (this.closed || this.retry) return;
    const delay = RECONNECT_MS[Math.min(this.attempts, RECONNECT_MS.length - 1)];
    this.attempts += 1;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect()
        .then(() => {
          this.attempts = 0;
          if (this.closed) {
            void this.client?.end().catch(() => undefined);
            return;
          }
          this.log.info('roster event connection restored');
          // Whatever was published meanwhile was not heard: every open view re-reads.
          const at = new Date().toISOString();
          for (const hotelId of this.hotels.keys()) this.local.emit({ hotelId, at, changes: [] });
        })
        .catch((err: unknown) => {
          this.log.warn({ err }, 'roster event connection: reconnect failed');
          this.scheduleConnect();
        });
    }, delay);
    this.retry.unref();
  }

  /** One NOTIFY, sent with the change's transaction (a failure rolls the change back: it is answered 503 and retried). */
  async publishInTransaction(trx: DbOrTrx, change: RosterChange): Promise<void> {
    await sql`select pg_notify(${CHANNEL}, ${toPayload(change)})`.execute(trx);
  }

  /** Nothing to do: the LISTEN connection hands the change to this instance's subscribers too. */
  committed(): void {}

  subscribe(hotelId: string, listener: (change: RosterChange) => void): () => void {
    this.hotels.set(hotelId, (this.hotels.get(hotelId) ?? 0) + 1);
    const off = this.local.subscribe(hotelId, listener);
    return () => {
      off();
      const n = (this.hotels.get(hotelId) ?? 1) - 1;
      if (n <= 0) this.hotels.delete(hotelId);
      else this.hotels.set(hotelId, n);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
