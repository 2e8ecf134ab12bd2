import type http from 'node:http';
import fp from 'fastify-plugin';
import {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { Logger } from 'pino';
import './types.js';
import { loadConfig } from '../config.js';
import { newId } from '../domain/ids.js';
import { ApiError } from '../errors.js';
import type { RateLimitStore } from '../rate-limit/stores.js';
import { routeForLog, sendError, toApiError } from './error-reply.js';
import { ALL_METHODS, registerNotFound } from './fallbacks.js';
import { clientOf, ipLimit, rateLimited, type IpLimit } from './ip-limit.js';
import { parseJsonBody } from './json-body.js';
import { httpsLocation } from './https-redirect.js';
import { registerRequestMetrics, type Metrics } from './metrics.js';
import { SecurityLog } from './security-log.js';
import { answerUndelivered, clientErrorHandler, createHttpsServer, lingerOnClose, whyEnded, type ConnectionLimits } from './transport.js';
import { createValidatorCompiler, OWN_FORMATS } from './validation.js';
import { consume, UNAUTHENTICATED_LIMIT } from '../rate-limit/limits.js';
import { traceRequests, tracedHandler } from '../tracing/requests.js';

export interface CoreDeps {
  logger: Logger;
  rateLimits: RateLimitStore;
  /** TRUST_PROXY: addresses whose X-Forwarded-Proto/-For are believed. */
  trustProxy?: string[];
  /** Served over HTTPS with this key and certificate; omitted in tests that inject. */
  tls?: { key: string; cert: string } | null;
  /** Prometheus metrics (METRICS_PORT); absent, nothing is counted. */
  metrics?: Metrics;
  /** Header, request and keep-alive time limits of the HTTPS listener (with `tls`). */
  limits?: ConnectionLimits;
}

const HSTS = 'max-age=31536000; includeSubDomains';

/** The request's body stream broke under the parser: the client went away or was cut off. */
function isBodyAbort(err: Error & { code?: string }): boolean {
  return err.code === 'ECONNRESET' || err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.message === 'aborted';
}

/**
 * What every request of the service goes through, whichever part of it answers: the
 * transport (HTTPS only, HSTS, HTTP/2 or HTTP/1.1, gentle close), request ids, one log
 * line per request, the JSON body parser, validation, the error envelope, the per-IP
 * limit (decorated as `limitByIp` for the parts that apply it) and 404 for a path no
 * part serves. `options` go to Fastify's constructor; `plugin` is registered first.
 */
export function createCore(deps: CoreDeps): { options: FastifyServerOptions; plugin: (app: FastifyInstance) => Promise<void> } {
  const core = new Core(deps);
  return { options: core.options(), plugin: fp((app) => core.register(app), { name: 'innsync-core' }) };
}

class Core {
  private readonly security = new SecurityLog();
  private readonly limitByIp: IpLimit;
  /** The app's request for a raw one, for requests the transport ends (HTTP/2 request timeout). */
  private readonly requestsByRaw = new WeakMap<http.IncomingMessage, FastifyRequest>();
  private readonly earlyEndListeners: Array<(req: FastifyRequest) => void> = [];
  private readonly endedEarly = new WeakSet<FastifyRequest>();

  constructor(private readonly deps: CoreDeps) {
    this.limitByIp = ipLimit(deps.rateLimits, deps.metrics);
  }

  /**
   * The client went away (or its connection was cut) before the answer: one debug line, no
   * stack. Reached from onRequestAbort, from the error handler when the body's stream broke
   * (an HTTP/2 stream cut by its request timeout is not "aborted" for Fastify) or from the transport.
   */
  private endEarly(req: FastifyRequest): void {
    if (this.endedEarly.has(req)) return;
    this.endedEarly.add(req);
    req.log.debug({ ip: req.clientIp, method: req.method, route: routeForLog(req), reason: whyEnded(req.raw) }, 'request ended early');
    for (const listener of this.earlyEndListeners) listener(req);
  }

  options(): FastifyServerOptions {
    const { deps } = this;
    return {
      loggerInstance: deps.logger as FastifyBaseLogger,
      // One line per request is logged by the onResponse hook (transportHooks).
      logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
      genReqId: () => newId('req'),
      trustProxy: deps.trustProxy && deps.trustProxy.length > 0 ? deps.trustProxy : false,
      return503OnClosing: false,
      forceCloseConnections: 'idle',
      bodyLimit: 1024 * 1024,
      serializerOpts: { ajv: { formats: OWN_FORMATS } },
      // A path parameter longer than this never reaches a route (FST_ERR_MAX_PARAM_LENGTH, default
      // 100). Node refuses request lines over 16 KiB anyway, so an over-long slug is routed and
      // answered like any unknown slug (401), not as a framework error.
      routerOptions: { maxParamLength: 16 * 1024 },
      // HTTPS with HTTP/2 by ALPN and HTTP/1.1 on one port (http/transport.ts).
      ...(deps.tls ? { serverFactory: this.httpsFactory(deps.tls) } : {}),
      // A request Node's parser gave up on (timed out, headers too large, not HTTP): the usual envelope.
      clientErrorHandler: clientErrorHandler(deps.logger, deps.metrics),
      frameworkErrors: (err, req, reply) => this.answerFrameworkError(err, req, reply),
    };
  }

  /**
   * e.g. a malformed URL: no route can match it, and no hook runs. The same transport
   * check and per-IP limit as for any request not attributed to a key, so this answer too
   * carries the rate-limit headers (docs/pms-interface.md, "Rate limits") and plain HTTP
   * gets 403.
   */
  private answerFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
    const { deps } = this;
    const routingError =
      err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? new ApiError('NOT_FOUND') : toApiError(err, req, deps.metrics);
    consume(deps.rateLimits, clientOf(req), UNAUTHENTICATED_LIMIT, Date.now())
      .then((rl) => {
        void reply.headers(rl.headers);
        if (!rl.allowed) return rateLimited(rl, 'ip', deps.metrics);
        if (req.protocol !== 'https') return new ApiError('HTTPS_REQUIRED');
        void reply.header('strict-transport-security', HSTS);
        return routingError;
      })
      .catch((e: unknown) => toApiError(e instanceof Error ? e : new Error(String(e)), req, deps.metrics))
      .then((apiErr) => sendError(apiErr, req, reply, this.security))
      .catch((e: unknown) => req.log.error({ err: e }, 'framework error reply failed'));
  }

  /** The HTTPS listener's factory, typed as Fastify's HTTP/1 server, whose interface the compatibility API serves. */
  private httpsFactory(tls: { key: string; cert: string }): NonNullable<FastifyServerOptions['serverFactory']> {
    const onStreamCut = (raw: http.IncomingMessage): void => {
      const req = this.requestsByRaw.get(raw);
      if (req) this.endEarly(req);
    };
    const limits = this.deps.limits ?? loadConfig({}).limits;
    return (handler) =>
      createHttpsServer(tls, limits, tracedHandler(handler as unknown as http.RequestListener), onStreamCut, this.deps.metrics) as unknown as http.Server;
  }

  async register(app: FastifyInstance): Promise<void> {
    // The router learns every method, so TRACE, PROPFIND… on a known path are 405, not 404.
    for (const method of ALL_METHODS) {
      if (!app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
    }
    for (const name of [
      'auth',
      'idempotencyKey',
      'idempotency',
      'rawBody',
      'rawBodySha256',
      'responsePayload',
      'responseDigest',
      'replayOf',
      'clientIp',
      'staff',
      'operator',
    ] as const) {
      app.decorateRequest(name, null);
    }
    app.decorate('limitByIp', this.limitByIp);
    app.decorate('onEndedEarly', (listener: (req: FastifyRequest) => void) => void this.earlyEndListeners.push(listener));
    app.setValidatorCompiler(createValidatorCompiler());
    registerParsers(app);
    registerRequestMetrics(app, this.deps.metrics);
    traceRequests(app);
    this.transportHooks(app);
    this.errorHandler(app);
    // A path no part of the service serves.
    await registerNotFound(app);
  }

  /** Order of checks (docs/pms-interface.md, "Order of checks"): transport first, for every request; one log line at the end. */
  private transportHooks(app: FastifyInstance): void {
    app.addHook('onRequest', async (req, reply) => {
      // Read while the socket is open: once a `Connection: close` (or shutdown) response has
      // finished, the socket is destroyed and req.ip is undefined in onResponse.
      req.clientIp = req.ip;
      if (req.raw.httpVersionMajor === 2) this.requestsByRaw.set(req.raw, req);
      // Node keeps the first of several Host headers: such a request names two hosts and is refused.
      if (hostHeaders(req.raw.rawHeaders) > 1) throw new ApiError('HOST_HEADER_REPEATED');
      if (req.protocol !== 'https') {
        await this.limitByIp(req, reply);
        const location = this.httpsRedirect(app, req);
        if (location) return reply.redirect(location, 308);
        throw new ApiError('HTTPS_REQUIRED');
      }
      void reply.header('strict-transport-security', HSTS);
    });
    app.addHook('onSend', async (req, reply, payload) => {
      // Answered before the whole body arrived (413, 401 before the body is read): the client
      // may still be sending. If HTTP/1.1 closes the connection after this answer, it closes
      // gently so the client reads it; HTTP/2 has no connection header (the stream ends alone).
      if (req.raw.httpVersionMajor === 2) reply.removeHeader('connection');
      else if (!req.raw.complete) {
        // Close after this answer rather than read an unwanted body until the request timeout.
        void reply.header('connection', 'close');
        lingerOnClose(req.raw.socket);
      }
      return payload;
    });
    app.addHook('onRequestAbort', async (req) => this.endEarly(req));
    app.addHook('onResponse', async (req, reply) => {
      // An HTTP/2 stream reset before its answer was sent whole: its one line is "request ended early".
      if (answerUndelivered(req.raw)) return this.endEarly(req);
      const ms = Math.round(reply.elapsedTime * 10) / 10;
      req.log.info({ ip: req.clientIp ?? req.ip, method: req.method, route: routeForLog(req), status: reply.statusCode, ms }, 'request');
    });
  }

  /**
   * The HTTPS address of a plain-HTTP GET or HEAD of a route that asks for it (pages for
   * people), or null: refused. A request a proxy forwarded (X-Forwarded-Proto) is the
   * proxy's to redirect, since the port its clients use for HTTPS is not known here.
   */
  private httpsRedirect(app: FastifyInstance, req: FastifyRequest): string | null {
    if (!req.routeOptions.config.httpsRedirect || (req.method !== 'GET' && req.method !== 'HEAD')) return null;
    const address = this.deps.tls && !req.headers['x-forwarded-proto'] ? app.server.address() : null;
    return address && typeof address === 'object' ? httpsLocation(req.headers.host, req.url, address.port) : null;
  }

  private errorHandler(app: FastifyInstance): void {
    app.setErrorHandler((err: FastifyError, req, reply) => {
      // The client is gone (its connection or stream was cut, a request timeout): no one to
      // answer. A broken body stream is the client's doing (one debug line); any other error
      // is still classified, logged and counted as if it had been answered.
      // (Not req.raw.destroyed: a request whose body was read whole is destroyed too.)
      if (req.raw.aborted || req.raw.socket?.destroyed === true || reply.raw.destroyed || (isBodyAbort(err) && !req.raw.complete)) {
        if (!isBodyAbort(err)) toApiError(err, req, this.deps.metrics);
        this.endEarly(req);
        reply.hijack();
        return;
      }
      return sendError(toApiError(err, req, this.deps.metrics), req, reply, this.security);
    });
  }
}

/** How many Host headers the request carries (raw headers alternate name and value). */
function hostHeaders(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === 'host') n++;
  return n;
}

/** JSON only (docs/pms-interface.md, "Request bodies"): anything unparsable or not an object is INVALID_JSON; other types are read as text for the request log, then refused by the routes that take JSON. */
function registerParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  // Deep, wide or oversized bodies are refused as they arrive, before anything walks them.
  app.addContentTypeParser('application/json', (req, payload, done) => parseJsonBody(req, payload, done));
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    req.rawBody = body as string;
    done(null, undefined);
  });
}
