import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { StorageErrorKind } from '../db/database.js';

/** Which limit refused a request: the API key's per-endpoint limit, the per-IP limit, or the dashboard's failed-login limit. */
export type RateLimitScope = 'key' | 'ip' | 'login' | 'streams';

/** The route label of a request no route matched (a 404): never the raw URL. */
const UNMATCHED_ROUTE = 'unmatched';

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SYNC_SECONDS_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Up to the 20,000 guests a sync may list (docs/pms-interface.md, "Full sync"). */
const SYNC_GUEST_BUCKETS = [0, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 20_000];

const STANDARD_METHODS = new Set(http.METHODS);

/**
 * The service's Prometheus metrics (README.md, "Metrics": METRICS_PORT), in a registry of their
 * own: several servers in one process (the tests) never share or clash. Labels are
 * bounded sets (route patterns, methods, statuses, fixed kinds): no URL, key, e-mail or
 * guest data ever becomes a label.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly httpRequests: Counter<'route' | 'method' | 'status'>;
  private readonly httpDuration: Histogram<'route' | 'method' | 'status'>;
  private readonly replays: Counter<'endpoint'>;
  private readonly refusals: Counter<'scope'>;
  private readonly syncDuration: Histogram;
  private readonly syncGuests: Histogram;
  private readonly rosterEvents: Counter;
  private readonly eventStreams: Gauge;
  private readonly requestLogRows: Counter;
  private readonly requestLogBatch: Histogram;
  private readonly requestLogDropped: Counter;
  private readonly requestLogSkipped: Counter<'limit'>;
  private readonly databaseErrors: Counter<'kind'>;
  private requestLogQueued: () => number = () => 0;
  private connectionsOpen: () => number = () => 0;
  private readonly connectionsRefused: Counter<'limit'>;
  private readonly streamResetFloods: Counter<'scope'>;
  private readonly streamsStalled: Counter;
  private readonly requestsCut: Counter<'code'>;
  private readonly webhookAttempts: Counter<'outcome'>;
  private webhookOutboxAge: () => Promise<number> = () => Promise.resolve(0);

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'innsync_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status.',
      labelNames: ['route', 'method', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'innsync_http_request_duration_seconds',
      help: 'Time from request to answer, by route pattern, method and status.',
      labelNames: ['route', 'method', 'status'],
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.replays = new Counter({
      name: 'innsync_idempotent_replays_total',
      help: 'PMS requests answered with the stored response of their Idempotency-Key, by endpoint.',
      labelNames: ['endpoint'],
      registers,
    });
    this.refusals = new Counter({
      name: 'innsync_rate_limited_total',
      help: 'Requests refused with 429 RATE_LIMITED, by the limit that refused them (key, ip, login).',
      labelNames: ['scope'],
      registers,
    });
    this.syncDuration = new Histogram({
      name: 'innsync_sync_duration_seconds',
      help: 'Duration of completed live syncs (the whole transaction).',
      buckets: SYNC_SECONDS_BUCKETS,
      registers,
    });
    this.syncGuests = new Histogram({
      name: 'innsync_sync_guests',
      help: 'Guests listed in each completed live sync.',
      buckets: SYNC_GUEST_BUCKETS,
      registers,
    });
    this.rosterEvents = new Counter({
      name: 'innsync_roster_events_published_total',
      help: 'Committed roster changes published to the dashboards.',
      registers,
    });
    this.eventStreams = new Gauge({ name: 'innsync_event_streams_open', help: 'Dashboard event streams open on this instance.', registers });
    // Read at each scrape from the request-log writer (watchRequestLogQueue).
    this.gaugeAtScrape('innsync_request_log_queue_rows', 'Request-log rows waiting to be written.', () => this.requestLogQueued());
    this.requestLogRows = new Counter({ name: 'innsync_request_log_rows_written_total', help: 'Request-log rows written to storage.', registers });
    this.requestLogBatch = new Histogram({
      name: 'innsync_request_log_batch_seconds',
      help: 'Time to write one batch of request-log rows (its bodies and guest index included).',
      buckets: SECONDS_BUCKETS,
      registers,
    });
    this.requestLogDropped = new Counter({
      name: 'innsync_request_log_rows_dropped_total',
      help: 'Request-log rows dropped (refused by the database, or over the queue bound while storage was unreachable).',
      registers,
    });
    this.requestLogSkipped = new Counter({
      name: 'innsync_request_log_rows_skipped_total',
      help: 'Requests without a valid key not written to the request log: their address (per-address) or all addresses together (total) had used the budget of rows for the minute.',
      labelNames: ['limit'],
      registers,
    });
    this.gaugeAtScrape('innsync_connections_open', 'Client connections open on the HTTPS and HTTP listeners.', () => this.connectionsOpen());
    this.connectionsRefused = new Counter({
      name: 'innsync_connections_refused_total',
      help: 'Connections closed at once for a connection cap, by limit (total, per-address, resets: an address refused for resetting too many HTTP/2 streams).',
      labelNames: ['limit'],
      registers,
    });
    this.streamResetFloods = new Counter({
      name: 'innsync_http2_reset_floods_total',
      help: 'HTTP/2 clients that reset too many streams before their answer, by scope: connection (closed with ENHANCE_YOUR_CALM), address (refused new connections for a minute).',
      labelNames: ['scope'],
      registers,
    });
    this.streamsStalled = new Counter({
      name: 'innsync_http2_streams_stalled_total',
      help: 'HTTP/2 answers reset because the client took none of their bytes for SEND_TIMEOUT_SECONDS, or its connection held too many unsent bytes.',
      registers,
    });
    this.requestsCut = new Counter({
      name: 'innsync_requests_cut_total',
      help: 'HTTP requests the transport answered and closed before the app saw them complete, by error code (REQUEST_TIMEOUT, HEADERS_TOO_LARGE, MALFORMED_REQUEST).',
      labelNames: ['code'],
      registers,
    });
    this.webhookAttempts = new Counter({
      name: 'innsync_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome: succeeded (a 2xx), retry (to be sent again), failed (given up after 3 days).',
      labelNames: ['outcome'],
      registers,
    });
    const outboxAge = (): Promise<number> => this.webhookOutboxAge();
    new Gauge({
      name: 'innsync_webhook_outbox_oldest_seconds',
      help: 'Age of the oldest webhook delivery not yet delivered or given up (0: none); its last value while the database does not answer.',
      registers,
      async collect() {
        // Read from the database: a scrape while storage is down or slow keeps the last value
        // rather than failing every other metric with it (or waiting on the pool).
        const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), 1_000).unref());
        const age = await Promise.race([outboxAge().catch(() => null), timeout]);
        if (age !== null) this.set(age);
      },
    });
    this.databaseErrors = new Counter({
      name: 'innsync_database_errors_total',
      help: 'Storage failures, by kind: unavailable, busy, conflict (a race lost on every retry), other.',
      labelNames: ['kind'],
      registers,
    });
  }

  /** A gauge whose value is read from `read` at each scrape. */
  private gaugeAtScrape(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  webhookAttempt(outcome: 'succeeded' | 'retry' | 'failed'): void {
    this.webhookAttempts.inc({ outcome });
  }

  /**
   * SQLite's commits (docs/architecture.md, "SQLite: group commit"), read at each scrape:
   * the writer's COMMITs, and the transactions they made durable (more than the commits
   * when transactions shared them).
   */
  watchCommits(read: () => { commits: number; transactions: number } | null): void {
    const counter = (name: string, help: string, pick: (s: { commits: number; transactions: number }) => number): void => {
      let reported = 0;
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          const stats = read();
          if (!stats) return;
          this.inc(pick(stats) - reported);
          reported = pick(stats);
        },
      });
    };
    counter('innsync_sqlite_commits_total', "COMMITs of the SQLite writer's transactions.", (s) => s.commits);
    counter(
      'innsync_sqlite_transactions_committed_total',
      'SQLite transactions made durable by those commits (several share one commit under load).',
      (s) => s.transactions,
    );
  }

  /** Where the outbox-age gauge reads its value at each scrape. */
  watchWebhookOutbox(read: () => Promise<number>): void {
    this.webhookOutboxAge = read;
  }

  /** The Prometheus text exposition of every metric. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  request(route: string, method: string, status: number, seconds: number): void {
    // HTTP/2 lets a client send any token as its method: only standard ones become labels.
    const labels = { route, method: STANDARD_METHODS.has(method) ? method : 'other', status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  replayed(endpoint: string): void {
    this.replays.inc({ endpoint });
  }

  rateLimited(scope: RateLimitScope): void {
    this.refusals.inc({ scope });
  }

  synced(seconds: number, guests: number): void {
    this.syncDuration.observe(seconds);
    this.syncGuests.observe(guests);
  }

  rosterEventPublished(): void {
    this.rosterEvents.inc();
  }

  streamOpened(): void {
    this.eventStreams.inc();
  }

  streamClosed(): void {
    this.eventStreams.dec();
  }

  /** Where the number of open connections is read at each scrape. */
  watchConnections(open: () => number): void {
    this.connectionsOpen = open;
  }

  connectionRefused(limit: 'total' | 'per-address' | 'resets'): void {
    this.connectionsRefused.inc({ limit });
  }

  /** An HTTP/2 answer reset for making no progress (http/transport.ts). */
  streamStalled(): void {
    this.streamsStalled.inc();
  }

  /** An HTTP/2 connection closed (`connection`), or an address refused for a while (`address`), for resetting too many streams. */
  streamResetFlood(scope: 'connection' | 'address'): void {
    this.streamResetFloods.inc({ scope });
  }

  requestCut(code: 'REQUEST_TIMEOUT' | 'HEADERS_TOO_LARGE' | 'MALFORMED_REQUEST'): void {
    this.requestsCut.inc({ code });
  }

  /** Where the request-log queue depth is read at each scrape. */
  watchRequestLogQueue(queued: () => number): void {
    this.requestLogQueued = queued;
  }

  requestLogWritten(rows: number, seconds: number): void {
    this.requestLogRows.inc(rows);
    this.requestLogBatch.observe(seconds);
  }

  requestLogRowsDropped(rows: number): void {
    this.requestLogDropped.inc(rows);
  }

  requestLogRowsSkipped(limit: 'per-address' | 'total'): void {
    this.requestLogSkipped.inc({ limit });
  }

  databaseError(kind: StorageErrorKind): void {
    this.databaseErrors.inc({ kind });
  }
}

/** Counts every answered request by route pattern (UNMATCHED_ROUTE for a 404 of no route), method and status. */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics | undefined): void {
  if (!metrics) return;
  app.addHook('onResponse', async (req, reply) => {
    const route = req.is404 ? UNMATCHED_ROUTE : (req.routeOptions.url ?? UNMATCHED_ROUTE);
    metrics.request(route, req.method, reply.statusCode, reply.elapsedTime / 1000);
  });
}

/**
 * The plain-HTTP listener of METRICS_PORT (node:http, apart from the app: no TLS, no
 * rate limit, no request log): GET /metrics, 405 for other methods there, 404 elsewhere.
 * Resolves once listening.
 */
export async function listenMetrics(metrics: Metrics, port: number, host: string, logger: Logger): Promise<http.Server> {
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 30_000 }, (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return plain(res, 404, 'Not found: the metrics are at /metrics.\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return plain(res, 405, 'Method not allowed.\n');
    }
    metrics.scrape().then(
      (text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        logger.error({ err }, 'metrics scrape failed');
        plain(res, 500, 'Metrics could not be collected.\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err }, 'metrics listener failed'));
  return server;
}

function plain(res: http.ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(text);
}
