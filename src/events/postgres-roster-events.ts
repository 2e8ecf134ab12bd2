import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { InProcessRosterEventBus, type RosterChange, type RosterEventBus } from './roster-events.js';

const CHANNEL = 'innsync_roster';
/** NOTIFY payloads must stay under 8,000 bytes; a large sync is sent in several. */
const MAX_PAYLOAD_BYTES = 7_000;
const RECONNECT_MS = 1_000;

/** Splits a change into notifications that each fit a NOTIFY payload. */
export function toPayloads(change: RosterChange): string[] {
  const whole = JSON.stringify(change);
  if (Buffer.byteLength(whole) <= MAX_PAYLOAD_BYTES || change.changes.length <= 1) return [whole];
  const half = Math.ceil(change.changes.length / 2);
  return [...toPayloads({ ...change, changes: change.changes.slice(0, half) }), ...toPayloads({ ...change, changes: change.changes.slice(half) })];
}

/**
 * The roster-change bus across instances (several servers on one PostgreSQL database):
 * a change is published with NOTIFY, and every instance, this one included, hears it on
 * its own LISTEN connection and hands it to its local subscribers (the dashboard streams).
 * When the LISTEN connection drops, changes may be missed until it is back; then every
 * subscribed hotel gets an empty change, and dashboards re-read their roster.
 */
export class PostgresRosterEventBus implements RosterEventBus {
  private readonly local = new InProcessRosterEventBus();
  private readonly hotels = new Map<string, number>();
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {}

  /** Connects the LISTEN session; resolves once listening (rejects when the first attempt fails). */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', (msg) => {
      if (msg.channel !== CHANNEL || !msg.payload) return;
      try {
        this.local.publish(JSON.parse(msg.payload) as RosterChange);
      } catch (err) {
        this.log.warn({ err }, 'unreadable roster notification');
      }
    });
    client.on('error', (err) => {
      this.log.warn({ err }, 'roster event connection lost');
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
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
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect()
        .then(() => {
          this.log.info('roster event connection restored');
          // Whatever was published meanwhile was not heard: every open view re-reads.
          const at = new Date().toISOString();
          for (const hotelId of this.hotels.keys()) this.local.publish({ hotelId, at, changes: [] });
        })
        .catch((err: unknown) => {
          this.log.warn({ err }, 'roster event connection: reconnect failed');
          this.scheduleConnect();
        });
    }, RECONNECT_MS);
    this.retry.unref();
  }

  /**
   * Notifications leave one at a time, in publishing order: each is its own transaction,
   * and PostgreSQL delivers them in commit order, so listeners see changes in the order
   * they were committed here.
   */
  publish(change: RosterChange): void {
    const payloads = toPayloads(change);
    this.sending = this.sending.then(async () => {
      try {
        for (const payload of payloads) await sql`select pg_notify(${CHANNEL}, ${payload})`.execute(this.db);
      } catch (err) {
        this.log.warn({ err }, 'roster notification not sent');
        // At least this instance's open views re-read the roster (other instances' do at their next change).
        this.local.publish({ hotelId: change.hotelId, at: change.at, changes: [] });
      }
    });
  }

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
    await this.sending;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
