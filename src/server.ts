import http from 'node:http';
import type http2 from 'node:http2';
import type { TLSSocket } from 'node:tls';
import type net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle, type Db } from './db/database.js';
import { secureDataDir } from './db/data-dir.js';
import { migrateToLatest } from './db/migrations.js';
import { InProcessRosterEventBus, type RosterEventBus } from './events/roster-events.js';
import { PostgresRosterEventBus } from './events/postgres-roster-events.js';
import { loadTls } from './http/tls.js';
import { clientErrorHandler, ConnectionGate, createHttpServer } from './http/transport.js';
import { scheduleRetention } from './jobs/retention.js';
import { DatabaseRateLimitStore, MemoryRateLimitStore, type RateLimitStore } from './rate-limit/stores.js';
import { SetupLink } from './dashboard/setup-link.js';
import { countHotels } from './db/repositories/staff.repository.js';
import { ensurePartitionsAhead } from './db/partitions.js';
import { DEFAULT_REQUEST_LOG_OPTIONS, RequestLogWriter } from './pms/request-log.js';
import { listenMetrics, Metrics } from './http/metrics.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { flushTracing, traceLogFields, tracingOn } from './tracing/spans.js';
import { tracedHandler } from './tracing/requests.js';

export interface RunningServer {
  app: FastifyInstance;
  database: DatabaseHandle;
  bus: RosterEventBus;
  httpsPort: number;
  httpPort: number | null;
  /** The Prometheus listener's port (METRICS_PORT); null when off. */
  metricsPort: number | null;
  /** First run (no hotel in storage): the one-time link that creates the first hotel and its admin. */
  setupUrl: string | null;
  /** Stops accepting, finishes in-flight requests, flushes logs, closes storage. */
  close(): Promise<void>;
}

export function createLogger(level: string): Logger {
  return pino({
    level,
    // docs/architecture.md, "Traces": with tracing on, each line names its trace and span.
    ...(tracingOn() ? { mixin: traceLogFields } : {}),
    // Never log credentials, whatever a future log call passes in.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'password', '*.password'], censor: '[redacted]' },
  });
}

/**
 * What a failed start opened is released again (e.g. a port in use): otherwise the HTTPS
 * listener and the pool keep the process running after the error (README.md,
 * "Operating it": a failure exits non-zero with a one-line reason).
 */
class StartSteps {
  private readonly undo: Array<() => Promise<unknown>> = [];

  /** Runs `step`; if it fails, undoes every step before it, newest first, then throws. */
  async run<T>(step: Promise<T>): Promise<T> {
    try {
      return await step;
    } catch (err) {
      for (const fn of this.undo.reverse()) await fn().catch(() => undefined);
      throw err;
    }
  }

  onFailure(fn: () => Promise<unknown>): void {
    this.undo.push(fn);
  }
}

/** Database → migrations → certificate → app → HTTPS and plain-HTTP listeners. */
export async function startServer(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  const steps = new StartSteps();
  const database = await openStorage(config, logger, steps);
  const tls = await steps.run(loadTls({ certFile: config.tlsCertFile, keyFile: config.tlsKeyFile, dataDir: config.dataDir }));
  if (tls.origin === 'generated') logger.info({ dir: `${config.dataDir}/tls` }, 'generated a self-signed certificate');
  const bus = await startBus(config, database, logger, steps);
  // docs/pms-interface.md, "Rate limits": with PostgreSQL the counters are shared by every instance.
  const rateLimits: RateLimitStore = database.engine === 'postgres' ? new DatabaseRateLimitStore(database.db) : new MemoryRateLimitStore();
  // Collected only when someone can scrape them.
  const metrics = config.metricsPort === null ? undefined : new Metrics();
  if (database.engine === 'sqlite') metrics?.watchCommits(() => database.commitStats());
  const requestLog = new RequestLogWriter(database.background, logger, metrics, { ...DEFAULT_REQUEST_LOG_OPTIONS, store: config.requestLog });
  const setupLink = new SetupLink();
  const webhooks = new WebhookDispatcher(database.db, logger, {
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    maxEndpointsPerHotel: config.webhookMaxEndpointsPerHotel,
    metrics,
  });
  const app = await steps.run(
    buildApp({
      db: database.db,
      bus,
      rateLimits,
      requestLog,
      logger,
      trustProxy: config.trustProxy,
      tls,
      setupLink,
      limits: config.limits,
      metrics,
      webhooks,
      maxKeyPairsPerHotel: config.maxKeyPairsPerHotel,
      streamLimits: config.liveStreams,
    }),
  );
  steps.onFailure(() => app.close());
  // One count of open connections across both listeners (http/transport.ts).
  const gate = new ConnectionGate(config.limits, config.trustProxy, logger, metrics);
  gate.watch(app.server);
  // Fastify names the address it listens on with http:// whenever it does not create the
  // TLS server itself (ours comes from http/core.ts's serverFactory): it is HTTPS.
  await steps.run(
    app.listen({ port: config.port, host: config.host, listenTextResolver: (address) => `Server listening at ${address.replace(/^http:/, 'https:')}` }),
  );
  const httpsPort = (app.server.address() as AddressInfo).port;
  const httpsConnections = trackConnections(app.server, 'secureConnection');
  const httpServer = config.httpPort === null ? null : await listenPlainHttp(config, config.httpPort, app, gate, logger, metrics, steps);
  const metricsServer = metrics && config.metricsPort !== null ? await steps.run(listenMetrics(metrics, config.metricsPort, config.metricsHost, logger)) : null;
  if (metricsServer) steps.onFailure(() => closeListener(metricsServer));
  const portOf = (server: http.Server | null): number | null => (server ? (server.address() as AddressInfo).port : null);
  const stopRetention = scheduleRetention(database.db, logger, { guests: config.guestRetentionDays, accessLog: config.accessLogRetentionDays });
  // Events written before a stop (or by another instance) are sent from now on.
  await steps.run(webhooks.start());
  logger.info(
    { https: httpsPort, http: portOf(httpServer), metrics: portOf(metricsServer), engine: database.engine },
    `innsync listening on https://localhost:${httpsPort}`,
  );
  const setupUrl = await steps.run(firstRunLink(database.db, httpsPort, setupLink, logger));

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopRetention();
      await closeListeners(app, httpServer, metricsServer, httpsConnections, config.shutdownTimeoutMs, logger);
      // Deliveries under way finish (10 s at most); those still due wait in the outbox for the next start.
      await webhooks.stop();
      await requestLog.close();
      await bus.close();
      rateLimits.close();
      await database.close();
      // The spans of the last requests are sent before the process exits.
      await flushTracing();
    })();
    return closing;
  };
  return { app, database, bus, httpsPort, httpPort: portOf(httpServer), metricsPort: portOf(metricsServer), setupUrl, close };
}

/** DATA_DIR made private, the database opened and migrated. */
async function openStorage(config: Config, logger: Logger, steps: StartSteps): Promise<DatabaseHandle> {
  // DATA_DIR holds the database (SQLite) and the certificate's key: the service's user alone may read it.
  const tightened = secureDataDir(config.dataDir);
  if (tightened.length > 0)
    logger.warn({ dataDir: config.dataDir, tightened: tightened.length }, 'DATA_DIR was readable by other users: tightened to 0700 (folders) and 0600 (files)');
  const database = openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    sqliteSynchronous: config.sqliteSynchronous,
    sqliteReader: config.sqliteReader,
    sqliteGroupCommitMs: config.sqliteGroupCommitMs,
    onConnectionError: (err) => logger.warn({ err }, 'database connection lost'),
  });
  steps.onFailure(() => database.close());
  const applied = await steps.run(migrateToLatest(database.db));
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  // PostgreSQL: today's and the next days' request-log partitions, before the first request (db/partitions.ts).
  await steps.run(ensurePartitionsAhead(database.db));
  return database;
}

/** With PostgreSQL several instances may serve one hotel: changes travel by NOTIFY, sent in each change's transaction. */
async function startBus(config: Config, database: DatabaseHandle, logger: Logger, steps: StartSteps): Promise<RosterEventBus> {
  if (database.engine !== 'postgres' || !config.databaseListenUrl) return new InProcessRosterEventBus();
  const pgBus = new PostgresRosterEventBus(config.databaseListenUrl, database.db, logger);
  await steps.run(pgBus.start());
  steps.onFailure(() => pgBus.close());
  return pgBus;
}

/**
 * The plain-HTTP listener. The same app answers it: its transport check refuses with 403
 * HTTPS_REQUIRED (or redirects a GET of the dashboard's pages to HTTPS) unless a trusted
 * proxy says the client used HTTPS (TRUST_PROXY).
 */
async function listenPlainHttp(
  config: Config,
  port: number,
  app: FastifyInstance,
  gate: ConnectionGate,
  logger: Logger,
  metrics: Metrics | undefined,
  steps: StartSteps,
): Promise<http.Server & TrackedConnections> {
  const server = createHttpServer(config.limits, tracedHandler(app.routing));
  server.on('clientError', clientErrorHandler(logger, metrics));
  gate.watch(server);
  const tracked = trackConnections(server, 'connection');
  await steps.run(
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, config.host, () => resolve());
    }),
  );
  steps.onFailure(() => closeListener(server));
  return Object.assign(server, tracked);
}

/** docs/dashboard.md, first run: while no hotel exists, a link that creates the first one; its token dies when that is done. */
async function firstRunLink(db: Db, httpsPort: number, setupLink: SetupLink, logger: Logger): Promise<string | null> {
  if ((await countHotels(db)) > 0) return null;
  const setupUrl = `https://localhost:${httpsPort}/dashboard/#/setup/${setupLink.issue()}`;
  logger.info({ setupUrl }, 'first run: open the setup link to create the first hotel and its admin');
  return setupUrl;
}

/**
 * Stops the listeners. Node closes the connections it sees idle when they close, but not
 * those that never sent a request (a browser's preconnected sockets) nor those that were in
 * their TLS handshake then; left open they would hold the shutdown until the browser drops
 * them. Until every connection is gone, idle ones are closed; a connection serving a
 * request is left to finish it until `deadlineMs` (SHUTDOWN_TIMEOUT_SECONDS), then every
 * connection still open is closed, whatever its client does (one that does not read its
 * answer, for instance).
 */
async function closeListeners(
  app: FastifyInstance,
  httpServer: (http.Server & TrackedConnections) | null,
  metricsServer: http.Server | null,
  httpsConnections: TrackedConnections,
  deadlineMs: number,
  logger: Logger,
): Promise<void> {
  const sweep = setInterval(() => {
    httpsConnections.closeIdle();
    httpServer?.closeIdle();
  }, 250);
  const deadline = setTimeout(() => {
    const open = httpsConnections.closeAll() + (httpServer?.closeAll() ?? 0);
    if (open > 0) logger.warn({ connections: open, afterMs: deadlineMs }, 'shutdown: connections still open at the shutdown deadline were closed');
  }, deadlineMs);
  try {
    await Promise.all([app.close(), httpServer ? closeListener(httpServer) : undefined, metricsServer ? closeListener(metricsServer) : undefined]);
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
}

interface TrackedConnections {
  /** Closes every connection serving no request (HTTP/2: gracefully, GOAWAY first, when its streams are not done). */
  closeIdle: () => void;
  /** Closes every connection now; how many there were. */
  closeAll: () => number;
}

/** Stops a plain-HTTP listener: idle connections close now, a request being answered finishes first. */
function closeListener(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/** Follows a server's connections and the requests each is serving. */
function trackConnections(server: net.Server, event: 'secureConnection' | 'connection'): TrackedConnections {
  const sockets = new Set<net.Socket>();
  const busy = new Map<net.Socket, number>();
  // HTTP/2 connections serving a request are closed gracefully (GOAWAY, open streams
  // finish, then the connection closes); those serving none are closed at once.
  const sessions = new Map<http2.Http2Session, number>();
  server.on('session', (session: http2.ServerHttp2Session) => {
    sessions.set(session, 0);
    session.once('close', () => sessions.delete(session));
  });
  server.on('stream', (stream: http2.ServerHttp2Stream) => {
    const session = stream.session;
    if (!session) return;
    sessions.set(session, (sessions.get(session) ?? 0) + 1);
    stream.once('close', () => {
      if (sessions.has(session)) sessions.set(session, Math.max(0, (sessions.get(session) ?? 1) - 1));
    });
  });
  // The TLS sockets under HTTP/2 sessions: a session ended while its peer holds the
  // connection open does not close its socket by itself.
  const h2Sockets = new Set<net.Socket>();
  server.on(event, (socket: net.Socket) => {
    if ((socket as TLSSocket).alpnProtocol === 'h2') {
      h2Sockets.add(socket);
      socket.once('close', () => h2Sockets.delete(socket));
      return;
    }
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.httpVersionMajor === 2) return;
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const n = (busy.get(socket) ?? 1) - 1;
      if (n > 0) busy.set(socket, n);
      else busy.delete(socket);
    });
  });
  const closeIdle = (): void => {
    for (const socket of sockets) if (!busy.has(socket)) socket.destroy();
    let streamsOpen = 0;
    for (const [session, open] of sessions) {
      streamsOpen += open;
      if (open === 0) session.destroy();
      else if (!session.closed) session.close();
    }
    if (streamsOpen === 0) for (const socket of h2Sockets) socket.destroy();
  };
  const closeAll = (): number => {
    const open = sockets.size + h2Sockets.size;
    for (const session of sessions.keys()) session.destroy();
    for (const socket of [...sockets, ...h2Sockets]) socket.destroy();
    return open;
  };
  return { closeIdle, closeAll };
}

/** SIGTERM/SIGINT: stop accepting, finish in-flight requests, flush logs, exit 0. */
export function closeOnSignals(server: RunningServer, logger: Logger): void {
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    server
      .close()
      .then(() => {
        logger.info('stopped');
        logger.flush();
        process.exit(0);
      })
      .catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        logger.flush();
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
