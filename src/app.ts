import cookie from '@fastify/cookie';
import http from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import type { Logger } from 'pino';
import './http/types.js';
import { ApiError, type ErrorCode } from './errors.js';
import { isStorageBusy, isStorageUnavailable, isTransientConflict, storageErrorKind, type Db } from './db/database.js';
import { newId } from './domain/ids.js';
import type { RosterEventBus } from './events/roster-events.js';
import { createValidatorCompiler } from './http/validation.js';
import { authenticate } from './pms/auth.js';
import { parseIdempotencyKey, requestFingerprint } from './pms/idempotency.js';
import { consume, ENDPOINT_LIMITS, UNAUTHENTICATED_LIMIT, type RateLimitResult, type RateLimitStore } from './pms/rate-limit.js';
import type { RequestLogWriter } from './pms/request-log.js';
import { loggedBodies } from './pms/request-log-body.js';
import { registerPmsRoutes } from './pms/routes.js';
import { registerDocsRoutes, OPENAPI_INFO } from './docs/routes.js';
import { registerHealthRoutes } from './http/health.js';
import { registerRequestMetrics, type Metrics, type RateLimitScope } from './http/metrics.js';
import { SecurityLog } from './http/security-log.js';
import { clientErrorHandler, createHttpsServer, lingerOnClose, whyEnded, type ConnectionLimits } from './http/transport.js';
import { parseJsonBody } from './http/json-body.js';
import { loadConfig } from './config.js';
import { registerDashboardRoutes } from './dashboard/routes.js';
import { LiveStreams } from './dashboard/live-events.js';
import { liveSessionIds } from './dashboard/session.js';
import { SetupLink } from './dashboard/setup-link.js';

export interface AppDeps {
  db: Db;
  bus: RosterEventBus;
  rateLimits: RateLimitStore;
  requestLog: RequestLogWriter;
  logger: Logger;
  /** TRUST_PROXY: addresses whose X-Forwarded-Proto/-For are believed. */
  trustProxy?: string[];
  /** Served over HTTPS with this key and certificate; omitted in tests that inject. */
  tls?: { key: string; cert: string } | null;
  /** The first-run setup link (server.ts issues its token while no hotel exists). */
  setupLink?: SetupLink;
  /** Prometheus metrics (METRICS_PORT); absent, nothing is counted. */
  metrics?: Metrics;
  /** Header, request and keep-alive time limits of the HTTPS listener (with `tls`). */
  limits?: ConnectionLimits;
}

const HSTS = 'max-age=31536000; includeSubDomains';
const JSON_TYPE = /^application\/json\s*(;.*)?$/i;
/** Every method Node's parser accepts but CONNECT (a tunnel, never a route): a known path answers each it does not serve with 405. */
const ALL_METHODS = http.METHODS.filter((m) => m !== 'CONNECT');
/** Responses of these paths are never stored by caches (the APIs and the probes). */
const NO_STORE = /^\/(api\/|dashboard\/api\/|healthz|readyz)/;

/** The 429 of a refused request, counted by the limit that refused it. */
function rateLimited(rl: RateLimitResult, scope: RateLimitScope, metrics: Metrics | undefined): ApiError {
  metrics?.rateLimited(scope);
  return new ApiError('RATE_LIMITED', {
    message: `Rate limit exceeded; retry in ${rl.retryAfterSeconds} seconds.`,
    extra: { retryAfter: rl.retryAfterSeconds },
    headers: { 'retry-after': String(rl.retryAfterSeconds) },
  });
}

/** A request header as sent (repeated headers joined), or null when absent. */
function givenHeader(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Maps anything thrown to the registry's error; unknown failures become 500 (logged, never shown). */
function toApiError(err: FastifyError | Error, req: FastifyRequest, metrics: Metrics | undefined): ApiError {
  if (err instanceof ApiError) return err;
  const code = (err as FastifyError).code;
  const status = (err as FastifyError).statusCode;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) return new ApiError('PAYLOAD_TOO_LARGE');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) return new ApiError('UNSUPPORTED_MEDIA_TYPE');
  if (err instanceof SyntaxError || code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') {
    return new ApiError('INVALID_JSON');
  }
  // PostgreSQL refuses a NUL character in text (22021) where no schema caught it first.
  if ((err as { code?: unknown }).code === '22021') {
    return new ApiError('VALIDATION_ERROR', { message: 'Text must not contain the NUL character (\\u0000).' });
  }
  const storageError = storageErrorKind(err);
  if (storageError) metrics?.databaseError(storageError);
  if (isStorageUnavailable(err)) {
    req.log.error({ err }, 'storage unavailable');
    return new ApiError('SERVICE_UNAVAILABLE', { headers: { 'retry-after': '5' } });
  }
  // A transaction that kept losing races (retried already), or storage too busy to
  // finish in time (a lock held past the lock timeout): rolled back; a retry will do.
  if (isTransientConflict(err) || isStorageBusy(err)) {
    req.log.warn({ err }, 'storage busy');
    return new ApiError('SERVICE_UNAVAILABLE', {
      message: 'The database was too busy to complete this request; nothing was changed. Send it again (with the same Idempotency-Key, if it had one).',
      headers: { 'retry-after': '1' },
    });
  }
  if (typeof status === 'number' && status >= 400 && status < 500) {
    req.log.warn({ err }, 'client error without a registry code');
    return new ApiError(status === 404 ? 'NOT_FOUND' : status === 405 ? 'METHOD_NOT_ALLOWED' : 'INVALID_JSON');
  }
  req.log.error({ err }, 'unhandled error');
  return new ApiError('INTERNAL_ERROR');
}

/** Refusals an operator watches for (guessing, forging, flooding): each gets its own log line with the client's address. */
const SECURITY_EVENTS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'UNAUTHORIZED',
  'LOGIN_FAILED',
  'CSRF_REJECTED',
  'FORBIDDEN',
  'RATE_LIMITED',
  'SETUP_LINK_INVALID',
]);

/**
 * What the log says a request was for: its route pattern (`/api/pms/v1/:slug/guests`),
 * never the URL as sent, whose path and query the client chooses (e-mails, setup tokens).
 */
function routeForLog(req: FastifyRequest): string {
  return req.routeOptions.url ?? 'unmatched';
}

/** The request's body stream broke under the parser: the client went away or was cut off. */
function isBodyAbort(err: Error & { code?: string }): boolean {
  return err.code === 'ECONNRESET' || err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.message === 'aborted';
}

function sendError(err: ApiError, req: FastifyRequest, reply: FastifyReply, security: SecurityLog): FastifyReply {
  if (SECURITY_EVENTS.has(err.code)) {
    security.note(req.log, err.code, req.clientIp ?? req.ip, { method: req.method, route: routeForLog(req) }, `security: ${err.code} refused`);
  }
  for (const [k, v] of Object.entries(err.headers)) void reply.header(k, v);
  return reply
    .code(err.status)
    .type('application/json; charset=utf-8')
    .send({ status: 'error', code: err.code, message: err.message, requestId: req.id, ...err.extra });
}

/** The whole service as a Fastify app; never listens (server.ts does). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const trustProxy = deps.trustProxy && deps.trustProxy.length > 0 ? deps.trustProxy : false;
  const tls = deps.tls;
  // The app's request for a raw one, for requests the transport ends (HTTP/2 request timeout).
  const requestsByRaw = new WeakMap<http.IncomingMessage, FastifyRequest>();
  const security = new SecurityLog();
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request is logged by the onResponse hook below.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    genReqId: () => newId('req'),
    trustProxy,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    bodyLimit: 1024 * 1024,
    // A path parameter longer than this never reaches a route (FST_ERR_MAX_PARAM_LENGTH, default
    // 100). Node refuses request lines over 16 KiB anyway, so an over-long slug is routed and
    // answered like any unknown slug (401), not as a framework error.
    routerOptions: { maxParamLength: 16 * 1024 },
    // HTTPS with HTTP/2 by ALPN and HTTP/1.1 on one port (http/transport.ts); typed as
    // Fastify's HTTP/1 server, whose interface the compatibility API serves.
    ...(tls
      ? {
          serverFactory: (handler: http.RequestListener) =>
            createHttpsServer(
              tls,
              deps.limits ?? loadConfig({}).limits,
              handler,
              (raw) => {
                const req = requestsByRaw.get(raw);
                if (req) endEarly(req);
              },
              deps.metrics,
            ) as unknown as http.Server,
        }
      : {}),
    // A request Node's parser gave up on (timed out, headers too large, not HTTP): the usual envelope.
    clientErrorHandler: clientErrorHandler(deps.logger, deps.metrics),
    frameworkErrors: (err, req, reply) => {
      // e.g. a malformed URL: no route can match it, and no hook runs. The same transport
      // check and per-IP limit as for any request not attributed to a key, so this answer
      // too carries the rate-limit headers (spec 8.1) and plain HTTP gets 403.
      const routingError =
        err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? new ApiError('NOT_FOUND') : toApiError(err, req, deps.metrics);
      consume(deps.rateLimits, req.ip, UNAUTHENTICATED_LIMIT, Date.now())
        .then((rl) => {
          void reply.headers(rl.headers);
          if (!rl.allowed) return rateLimited(rl, 'ip', deps.metrics);
          if (req.protocol !== 'https') return new ApiError('HTTPS_REQUIRED');
          void reply.header('strict-transport-security', HSTS);
          return routingError;
        })
        .catch((e: unknown) => toApiError(e instanceof Error ? e : new Error(String(e)), req, deps.metrics))
        .then((apiErr) => sendError(apiErr, req, reply, security))
        .catch((e: unknown) => req.log.error({ err: e }, 'framework error reply failed'));
    },
  });

  // The router learns every method, so TRACE, PROPFIND… on a known path are 405, not 404.
  for (const method of ALL_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }

  for (const name of ['auth', 'idempotencyKey', 'idempotency', 'rawBody', 'responsePayload', 'clientIp', 'staff'] as const) {
    app.decorateRequest(name, null);
  }

  app.setValidatorCompiler(createValidatorCompiler());

  // JSON only (decisions.md): anything unparsable or not an object is INVALID_JSON.
  app.removeAllContentTypeParsers();
  // Deep, wide or oversized bodies are refused as they arrive, before anything walks them.
  app.addContentTypeParser('application/json', (req, payload, done) => parseJsonBody(req, payload, done));
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    req.rawBody = body as string;
    done(null, undefined);
  });

  registerRequestMetrics(app, deps.metrics);

  const limitByIp = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const rl = await consume(deps.rateLimits, req.ip, UNAUTHENTICATED_LIMIT, Date.now());
    void reply.headers(rl.headers);
    if (!rl.allowed) throw rateLimited(rl, 'ip', deps.metrics);
  };

  // Order of checks (decisions.md): transport → route/method → authentication →
  // rate limit → idempotency header → content type, size, JSON → validation → state.
  app.addHook('onRequest', async (req, reply) => {
    // Requests of the PMS API get a request-log row; close() waits for those still running.
    if (req.url.startsWith('/api/pms/') && !req.routeOptions.config.docs) deps.requestLog.begin(req);
    // Read while the socket is open: once a `Connection: close` (or shutdown) response has
    // finished, the socket is destroyed and req.ip is undefined in onResponse.
    req.clientIp = req.ip;
    if (req.raw.httpVersionMajor === 2) requestsByRaw.set(req.raw, req);
    if (req.protocol !== 'https') {
      await limitByIp(req, reply);
      throw new ApiError('HTTPS_REQUIRED');
    }
    void reply.header('strict-transport-security', HSTS);
    // Probes are answered to anyone, as often as they ask (load balancers poll them).
    if (req.routeOptions.config.probe) return;
    // The dashboard has its own guards (session, CSRF, login limits): docs/dashboard.md.
    // Its login and first-run setup also count against the per-IP limit, before the body is read.
    if (req.routeOptions.config.dashboard) {
      if (req.routeOptions.config.ipLimited) await limitByIp(req, reply);
      return;
    }
    const endpoint = req.routeOptions.config.endpoint;
    if (!endpoint) {
      await limitByIp(req, reply);
      // Route before body checks: an unknown path is 404 even with an unparsable or huge body.
      if (req.is404) throw new ApiError('NOT_FOUND');
      return;
    }
    const slug = (req.params as { slug?: string }).slug ?? '';
    const auth = await authenticate(deps.db, req.headers.authorization, slug);
    if (!auth) {
      await limitByIp(req, reply);
      throw new ApiError('UNAUTHORIZED');
    }
    req.auth = auth;
    if (auth.mode === 'test') req.id = req.id.replace(/^req_/, 'req_test_');
    const rl = await consume(deps.rateLimits, auth.keyId, ENDPOINT_LIMITS[endpoint], Date.now());
    void reply.headers(rl.headers);
    if (!rl.allowed) throw rateLimited(rl, 'key', deps.metrics);
    if (req.method === 'POST') req.idempotencyKey = parseIdempotencyKey(req.headers['idempotency-key']);
  });

  app.addHook('preParsing', async (req, _reply, payload) => {
    if (req.method === 'POST' && req.routeOptions.config.endpoint) {
      const type = req.headers['content-type'];
      if (type === undefined || !JSON_TYPE.test(type.trim())) throw new ApiError('UNSUPPORTED_MEDIA_TYPE');
    }
    return payload;
  });

  // The fingerprint is taken from the body as sent, before validation may trim it. The
  // key is claimed later, inside the change's own transaction (pms/idempotency.ts).
  app.addHook('preValidation', async (req) => {
    if (req.idempotencyKey !== null && req.auth) {
      req.idempotency = {
        apiKeyId: req.auth.keyId,
        key: req.idempotencyKey,
        fingerprint: requestFingerprint(req.method, req.url.split('?')[0] ?? req.url, req.body),
      };
    }
  });

  app.addHook('onSend', async (req, reply, payload) => {
    if (typeof payload === 'string') req.responsePayload = payload;
    // Answered before the whole body arrived (413, 401 before the body is read): the client
    // may still be sending. If HTTP/1.1 closes the connection after this answer, it closes
    // gently so the client reads it; HTTP/2 has no connection header (the stream ends alone).
    if (req.raw.httpVersionMajor === 2) reply.removeHeader('connection');
    else if (!req.raw.complete) {
      // Close after this answer rather than read an unwanted body until the request timeout.
      void reply.header('connection', 'close');
      lingerOnClose(req.raw.socket);
    }
    // API answers carry guests' personal data and fresh keys: never kept by a cache.
    if (NO_STORE.test(req.url) && !reply.hasHeader('cache-control')) void reply.header('cache-control', 'no-store');
    return payload;
  });

  // The client went away (or its connection was cut) before the answer: one debug line, no
  // stack. Reached from onRequestAbort, or from the error handler when the body's stream
  // broke (an HTTP/2 stream cut by its request timeout is not "aborted" for Fastify).
  const endedEarly = new WeakSet<FastifyRequest>();
  const endEarly = (req: FastifyRequest): void => {
    if (endedEarly.has(req)) return;
    endedEarly.add(req);
    req.log.debug({ ip: req.clientIp, method: req.method, route: routeForLog(req), reason: whyEnded(req.raw) }, 'request ended early');
    deps.requestLog.end(req);
  };
  app.addHook('onRequestAbort', async (req) => endEarly(req));

  app.addHook('onResponse', async (req, reply) => {
    try {
      logResponse(req, reply);
    } finally {
      deps.requestLog.end(req);
    }
  });

  const logResponse = (req: FastifyRequest, reply: FastifyReply): void => {
    const durationMs = reply.elapsedTime;
    req.log.info(
      { ip: req.clientIp ?? req.ip, method: req.method, route: routeForLog(req), status: reply.statusCode, ms: Math.round(durationMs * 10) / 10 },
      'request',
    );
    if (!req.url.startsWith('/api/pms/') || req.routeOptions.config.docs) return;
    const slug = (req.params as { slug?: string } | undefined)?.slug ?? null;
    deps.requestLog.write(
      {
        id: req.id,
        at: new Date().toISOString(),
        hotelId: req.auth?.hotelId ?? null,
        slug,
        keyId: req.auth?.pairId ?? null,
        mode: req.auth?.mode ?? null,
        method: req.method,
        path: req.url,
        statusCode: reply.statusCode,
        // Capped, GET /guests as its count and ids, none when unattributed (pms/request-log-body.ts).
        ...loggedBodies({
          attributed: Boolean(req.auth),
          route: req.routeOptions.url,
          statusCode: reply.statusCode,
          requestBody: req.rawBody,
          contentLength: req.headers['content-length'],
          responseBody: req.responsePayload,
        }),
        clientIp: req.clientIp ?? req.ip ?? 'unknown',
        userAgent: req.headers['user-agent'] ?? null,
        durationMs,
        // spec 8.3: "idempotency key when given", also when the request was refused
        // before the key was read (401, 429) or the key itself was refused (400).
        idempotencyKey: req.idempotencyKey ?? givenHeader(req.headers['idempotency-key']),
      },
      req.auth?.keyId,
    );
  };

  app.setErrorHandler((err: FastifyError, req, reply) => {
    // The client is gone (its connection or stream was cut, a request timeout): no one to
    // answer. A broken body stream is the client's doing (one debug line); any other error
    // is still classified, logged and counted as if it had been answered.
    // (Not req.raw.destroyed: a request whose body was read whole is destroyed too.)
    if (req.raw.aborted || req.raw.socket?.destroyed === true || reply.raw.destroyed || (isBodyAbort(err) && !req.raw.complete)) {
      if (!isBodyAbort(err)) toApiError(err, req, deps.metrics);
      endEarly(req);
      reply.hijack();
      return;
    }
    return sendError(toApiError(err, req, deps.metrics), req, reply, security);
  });
  app.setNotFoundHandler(() => Promise.reject(new ApiError('NOT_FOUND')));

  // The dashboard's session cookie (read in dashboard/session.ts).
  await app.register(cookie);
  await app.register(swagger, { openapi: OPENAPI_INFO, hideUntagged: true });

  // 405 for a known path with another method (decisions.md), before authentication.
  const methodsByUrl = new Map<string, Set<string>>();
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const set = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const m of methods) set.add(m);
    methodsByUrl.set(route.url, set);
  });

  registerPmsRoutes(app, { db: deps.db, bus: deps.bus, metrics: deps.metrics });
  registerDocsRoutes(app);
  registerHealthRoutes(app, deps.db, deps.metrics);
  const streams = new LiveStreams(
    deps.bus,
    (ids) => liveSessionIds(deps.db, ids),
    (err) => deps.logger.error({ err }, 'live event delivery failed'),
    deps.metrics,
  );
  // Open event streams would hold app.close() forever; browsers reconnect after a restart.
  app.addHook('preClose', async () => streams.closeAll());
  registerDashboardRoutes(app, {
    db: deps.db,
    bus: deps.bus,
    rateLimits: deps.rateLimits,
    setupLink: deps.setupLink ?? new SetupLink(),
    streams,
    metrics: deps.metrics,
    requestLog: deps.requestLog,
  });

  await app.after();
  for (const [url, methods] of [...methodsByUrl]) {
    const allowed = ALL_METHODS.filter((m) => methods.has(m));
    const others = ALL_METHODS.filter((m) => !methods.has(m));
    if (others.length === 0) continue;
    const notAllowed = () => Promise.reject(new ApiError('METHOD_NOT_ALLOWED', { headers: { allow: allowed.join(', ') } }));
    // Answered in onRequest (after the global hook's per-IP limit), before the body is read.
    app.route({ method: others, url, onRequest: notAllowed, handler: notAllowed });
  }
  return app;
}
