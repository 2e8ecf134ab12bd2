import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import { ConfigError } from '../config.js';
import { writeLater, type Db, type DbOrTrx } from '../db/database.js';
import { InProcessRosterEventBus, type RosterChange, type RosterEventBus } from './roster-events.js';

const CHANNEL = 'innsync_roster';
/** NOTIFY payloads must stay under 8,000 bytes. */
const MAX_PAYLOAD_BYTES = 7_000;
/** The LISTEN connection is tried again after 200 ms, then ever less often, at most every 2 s. */
const RECONNECT_MS = [200, 500, 1_000, 2_000];
/** How long the start waits for its own probe to arrive on the LISTEN connection. */
const PROBE_TIMEOUT_MS = 5_000;

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
  private readonly probes = new Map<string, () => void>();

  /**
   * `listenUrl` is DATABASE_LISTEN_URL (README.md, "Operating it"): a session of its own,
   * directly to the primary, never through a pooler in transaction mode (which hands the
   * LISTEN to a server connection other clients then use). `db` sends the start's probe.
   */
  constructor(
    private readonly listenUrl: string,
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  /**
   * Connects the LISTEN session, then proves that it hears: a probe sent through the pool
   * (DATABASE_URL) must arrive on it. Rejects with an error naming DATABASE_LISTEN_URL
   * when it cannot connect, or connects somewhere the service's changes never reach.
   */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (err) {
      throw new ConfigError(
        `DATABASE_LISTEN_URL (default: DATABASE_URL) could not be reached for live changes: ${(err as Error).message}. Give a direct connection to the primary PostgreSQL server.`,
      );
    }
    const id = randomUUID();
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
      this.probes.set(id, () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    try {
      await sql`select pg_notify(${CHANNEL}, ${JSON.stringify({ probe: id })})`.execute(this.db);
      if (!(await heard)) {
        await this.close();
        throw new ConfigError(
          `DATABASE_LISTEN_URL (default: DATABASE_URL) does not hear the changes this service makes: a notification sent on DATABASE_URL did not arrive within ${PROBE_TIMEOUT_MS / 1000} s. Give DATABASE_LISTEN_URL a direct connection to the primary (a pooler in transaction mode cannot keep a LISTEN session), and make both variables lead to the same database.`,
        );
      }
    } finally {
      this.probes.delete(id);
    }
  }

  private async connect(): Promise<void> {
    // TCP keepalive: a half-open connection (a failover, a partition) is noticed and replaced.
    const client = new pg.Client({
      connectionString: this.listenUrl,
      connectionTimeoutMillis: PROBE_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    client.on('notification', (msg) => {
      if (msg.channel !== CHANNEL || !msg.payload) return;
      try {
        const parsed = JSON.parse(msg.payload) as RosterChange | { probe: string };
        if ('probe' in parsed) this.probes.get(parsed.probe)?.();
        else this.local.emit(parsed);
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

  /**
   * One NOTIFY, sent with the change's transaction, in its COMMIT's round trip (writeLater;
   * a failure rolls the change back: it is answered 503 and retried).
   */
  async publishInTransaction(trx: DbOrTrx, change: RosterChange): Promise<void> {
    await writeLater(trx, sql`select pg_notify(${CHANNEL}, ${toPayload(change)})`.compile(trx));
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
