import http from 'node:http';
import type http2 from 'node:http2';
import type { TLSSocket } from 'node:tls';
import type net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { buildApp } from './app.js';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
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
import { RequestLogWriter } from './pms/request-log.js';
import { listenMetrics, Metrics } from './http/metrics.js';

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
    // Never log credentials, whatever a future log call passes in.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'password', '*.password'], censor: '[redacted]' },
  });
}

/** Database → migrations → certificate → app → HTTPS and HTTP-refuser listeners. */
export async function startServer(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<RunningServer> {
  // DATA_DIR holds the database (SQLite) and the certificate's key: the service's user alone may read it.
  const tightened = secureDataDir(config.dataDir);
  if (tightened.length > 0)
    logger.warn({ dataDir: config.dataDir, tightened: tightened.length }, 'DATA_DIR was readable by other users: tightened to 0700 (folders) and 0600 (files)');
  const database = openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    sqliteSynchronous: config.sqliteSynchronous,
    onConnectionError: (err) => logger.warn({ err }, 'database connection lost'),
  });
  // A failed start (e.g. a port in use) releases what it opened: otherwise the HTTPS
  // listener and the pool keep the process running after the error (operations.md:
  // a failure exits non-zero with a one-line reason).
  const undo: Array<() => Promise<unknown>> = [() => database.close()];
  const orUndo = async <T>(step: Promise<T>): Promise<T> => {
    try {
      return await step;
    } catch (err) {
      for (const fn of undo.reverse()) await fn().catch(() => undefined);
      throw err;
    }
  };
  const applied = await orUndo(migrateToLatest(database.db));
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  const tls = await orUndo(loadTls({ certFile: config.tlsCertFile, keyFile: config.tlsKeyFile, dataDir: config.dataDir }));
  if (tls.origin === 'generated') logger.info({ dir: `${config.dataDir}/tls` }, 'generated a self-signed certificate');

  // With PostgreSQL several instances may serve one hotel: changes travel by NOTIFY, sent in each change's transaction.
  let bus: RosterEventBus;
  if (database.engine === 'postgres' && config.databaseUrl) {
    const pgBus = new PostgresRosterEventBus(config.databaseUrl, logger);
    await orUndo(pgBus.start());
    undo.push(() => pgBus.close());
    bus = pgBus;
  } else bus = new InProcessRosterEventBus();
  // decisions.md: with PostgreSQL the counters are shared by every instance.
  const rateLimits: RateLimitStore = database.engine === 'postgres' ? new DatabaseRateLimitStore(database.db) : new MemoryRateLimitStore();
  // Collected only when someone can scrape them.
  const metrics = config.metricsPort === null ? undefined : new Metrics();
  const requestLog = new RequestLogWriter(database.background, logger, metrics);
  const setupLink = new SetupLink();
  const app = await orUndo(
    buildApp({ db: database.db, bus, rateLimits, requestLog, logger, trustProxy: config.trustProxy, tls, setupLink, limits: config.limits, metrics }),
  );
  undo.push(() => app.close());
  // One count of open connections across both listeners (http/transport.ts).
  const gate = new ConnectionGate(config.limits, config.trustProxy, logger, metrics);
  gate.watch(app.server);
  await orUndo(app.listen({ port: config.port, host: config.host }));
  const httpsPort = (app.server.address() as AddressInfo).port;
  const closeIdleHttps = trackConnections(app.server, 'secureConnection');

  let httpServer: http.Server | null = null;
  let closeIdleHttp = (): void => undefined;
  if (config.httpPort !== null) {
    // The same app answers plain HTTP: its transport check refuses with 403 HTTPS_REQUIRED
    // unless a trusted proxy says the client used HTTPS (TRUST_PROXY).
    const server = createHttpServer(config.limits, app.routing);
    server.on('clientError', clientErrorHandler(logger, metrics));
    gate.watch(server);
    httpServer = server;
    closeIdleHttp = trackConnections(server, 'connection');
    await orUndo(
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.httpPort ?? 0, config.host, () => resolve());
      }),
    );
    undo.push(() => closeListener(server));
  }
  const httpPort = httpServer ? (httpServer.address() as AddressInfo).port : null;
  // operations.md: METRICS_PORT, plain HTTP on METRICS_HOST (loopback by default), apart from the app.
  let metricsServer: http.Server | null = null;
  if (metrics && config.metricsPort !== null) {
    const server = await orUndo(listenMetrics(metrics, config.metricsPort, config.metricsHost, logger));
    undo.push(() => closeListener(server));
    metricsServer = server;
  }
  const metricsPort = metricsServer ? (metricsServer.address() as AddressInfo).port : null;
  const stopRetention = scheduleRetention(database.db, logger, config.guestRetentionDays);
  logger.info({ https: httpsPort, http: httpPort, metrics: metricsPort, engine: database.engine }, `innsync listening on https://localhost:${httpsPort}`);
  let setupUrl: string | null = null;
  if ((await orUndo(countHotels(database.db))) === 0) {
    // docs/dashboard.md: first run. The token dies when the first hotel is created.
    setupUrl = `https://localhost:${httpsPort}/dashboard/#/setup/${setupLink.issue()}`;
    logger.info({ setupUrl }, 'first run: open the setup link to create the first hotel and its admin');
  }

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      stopRetention();
      const httpClosed = httpServer
        ? new Promise<void>((resolve) => {
            httpServer.close(() => resolve());
            httpServer.closeIdleConnections();
          })
        : Promise.resolve();
      // Node closes the connections it sees idle when the listeners close, but not those
      // that never sent a request (a browser's preconnected sockets) nor those that were in
      // their TLS handshake then; left open they would hold the shutdown until the browser
      // drops them. Until every connection is gone, idle ones are closed; a connection
      // serving a request is never cut.
      const sweep = setInterval(() => {
        closeIdleHttps();
        closeIdleHttp();
      }, 250);
      try {
        await Promise.all([app.close(), httpClosed, metricsServer ? closeListener(metricsServer) : undefined]);
      } finally {
        clearInterval(sweep);
      }
      await requestLog.close();
      await bus.close();
      rateLimits.close();
      await database.close();
    })();
    return closing;
  };
  return { app, database, bus, httpsPort, httpPort, metricsPort, setupUrl, close };
}

/** Stops a plain-HTTP listener: idle connections close now, a request being answered finishes first. */
function closeListener(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

/**
 * Follows a server's connections and the requests each is serving; the function returned
 * destroys every connection that serves none.
 */
function trackConnections(server: net.Server, event: 'secureConnection' | 'connection'): () => void {
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
  return () => {
    for (const socket of sockets) if (!busy.has(socket)) socket.destroy();
    let streamsOpen = 0;
    for (const [session, open] of sessions) {
      streamsOpen += open;
      if (open === 0) session.destroy();
      else if (!session.closed) session.close();
    }
    if (streamsOpen === 0) for (const socket of h2Sockets) socket.destroy();
  };
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
