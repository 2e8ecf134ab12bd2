import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { Logger } from 'pino';
import { ApiError } from '../errors.js';
import { clientKey, normalise } from './client-address.js';
import { newId } from '../domain/ids.js';
import type { Metrics } from './metrics.js';
import { SecurityLog } from './security-log.js';
import { TLS_CIPHERS } from './tls.js';

/** Connection and time limits (operations.md: HEADERS_TIMEOUT_SECONDS … MAX_CONNECTIONS_PER_IP). */
export interface ConnectionLimits {
  /** Until the request's headers are complete. */
  headersTimeoutMs: number;
  /** Until the whole request, headers and body, is received. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection (or HTTP/2 session) is closed after this. */
  keepAliveTimeoutMs: number;
  /** Connections open at once, all clients together. */
  maxConnections: number;
  /** Connections open at once from one socket address (TRUST_PROXY addresses exempt). */
  maxConnectionsPerIp: number;
}

/** How often Node looks for requests past their headers or request timeout. */
const TIMEOUT_CHECK_INTERVAL_MS = 500;
/** HTTP/2: streams one connection may have open at once. */
const MAX_CONCURRENT_STREAMS = 100;

type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * The HTTPS listener: HTTP/2 offered by ALPN, HTTP/1.1 still served on the same port (a
 * browser then multiplexes every dashboard tab's event stream over one connection). TLS
 * 1.2 only with ECDHE and AEAD suites, TLS 1.3 as Node offers it.
 */
export function createHttpsServer(
  tls: { key: string; cert: string },
  limits: ConnectionLimits,
  handler: RequestHandler,
  /** An HTTP/2 request was answered 408 here and its stream closed: the app never sees it end otherwise. */
  onStreamCut: (req: http.IncomingMessage) => void = () => undefined,
  metrics?: Metrics,
): http2.Http2SecureServer {
  const server = http2.createSecureServer(
    {
      key: tls.key,
      cert: tls.cert,
      minVersion: 'TLSv1.2',
      ciphers: TLS_CIPHERS,
      allowHTTP1: true,
      settings: { maxConcurrentStreams: MAX_CONCURRENT_STREAMS },
      // A client that opens a connection and never completes its TLS handshake holds it no
      // longer than one that never completes its headers.
      handshakeTimeout: limits.headersTimeoutMs,
    },
    handler as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
  );
  // HTTP/1.1 connections on this server are served by Node's HTTP/1 code, which reads
  // these from the server object (the constructor does not take them for HTTP/2 servers).
  applyHttp1Limits(server as unknown as http.Server, limits);
  server.on('session', (session: http2.ServerHttp2Session) => {
    // An HTTP/2 connection with no frame in either direction for this long is closed
    // (a dashboard's event stream sends a keep-alive comment well within it).
    session.setTimeout(limits.keepAliveTimeoutMs, () => session.close());
    // The header-time limit of HTTP/2: a connection whose first request's headers have not
    // arrived within it is closed (a slow or silent client holds nothing longer).
    const firstHeaders = setTimeout(() => session.destroy(), limits.headersTimeoutMs);
    firstHeaders.unref();
    session.once('stream', () => clearTimeout(firstHeaders));
    session.once('close', () => clearTimeout(firstHeaders));
  });
  // HTTP/2 streams have no request timeout of Node's own: a body still arriving when the
  // time is up is answered 408 and its stream closed.
  server.on('request', (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    if (req.httpVersionMajor !== 2 || req.readableEnded || req.stream.endAfterHeaders) return;
    const timer = setTimeout(() => {
      if (req.readableEnded || req.stream.destroyed) return;
      endReasons.set(req, 'ERR_HTTP_REQUEST_TIMEOUT');
      metrics?.requestCut('REQUEST_TIMEOUT');
      onStreamCut(req as unknown as http.IncomingMessage);
      // RFC 9113 §8.1: a complete answer, then RST_STREAM NO_ERROR tells the client to stop sending.
      const stop = (): void => req.stream.close(http2.constants.NGHTTP2_NO_ERROR);
      if (res.headersSent) return stop();
      const { headers, body } = errorAnswer(new ApiError('REQUEST_TIMEOUT'));
      res.writeHead(408, headers);
      res.end(body, stop);
    }, limits.requestTimeoutMs);
    timer.unref();
    req.once('end', () => clearTimeout(timer));
    req.once('close', () => clearTimeout(timer));
  });
  return server;
}

/** The plain-HTTP listener (403 HTTPS_REQUIRED, or a redirect of the dashboard's pages to HTTPS), under the same limits. */
export function createHttpServer(limits: ConnectionLimits, handler: RequestHandler): http.Server {
  const server = http.createServer({ connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS }, handler);
  applyHttp1Limits(server, limits);
  return server;
}

function applyHttp1Limits(server: http.Server, limits: ConnectionLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Read by Node when the server starts listening (HTTP/2 servers take no constructor option for it).
  (server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = TIMEOUT_CHECK_INTERVAL_MS;
}

/** The usual error envelope, for answers written before a request reached the app. */
function errorAnswer(err: ApiError): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify({ status: 'error', code: err.code, message: err.message, requestId: newId('req') });
  return {
    headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), 'cache-control': 'no-store' },
    body,
  };
}

/** Why a connection or HTTP/2 request was cut (a Node error code), for the one log line of the request it ends. */
const endReasons = new WeakMap<object, string>();

/** True when the transport answered this request itself (an HTTP/2 request timeout): the app must not answer it. */
export function wasCut(raw: http.IncomingMessage): boolean {
  return endReasons.has(raw);
}

/** Why this request ended before its answer: a timeout or a parse error we cut it for, else the client closed. */
export function whyEnded(raw: http.IncomingMessage): string {
  return endReasons.get(raw) ?? endReasons.get(raw.socket) ?? 'client closed';
}

const CLIENT_ERRORS: Record<string, 'REQUEST_TIMEOUT' | 'HEADERS_TOO_LARGE'> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
};

/**
 * Node's HTTP/1 parser gave up on a connection: the request timed out, its headers are too
 * large or it is not HTTP. Answered in the usual envelope when the socket can still take
 * it, then closed. Logged once at debug level, never with a stack: clients do this.
 */
export function clientErrorHandler(logger: Logger, metrics?: Metrics): (err: Error & { code?: string }, socket: net.Socket) => void {
  const answered = new WeakSet<net.Socket>();
  return (err, socket) => {
    const code = err.code ?? 'unknown';
    // Only HTTP-level failures can be answered in HTTP; anything else (a TLS handshake that
    // timed out, a reset) has no one to read an answer.
    const http1 = code.startsWith('HPE_') || code.startsWith('ERR_HTTP_');
    if (!http1 || socket.destroyed || answered.has(socket)) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    endReasons.set(socket, code);
    // A request Fastify has already seen is logged once, with its id, when it ends (http/core.ts).
    const inFlight = (socket as net.Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (!inFlight) logger.debug({ ip: socket.remoteAddress, reason: code }, 'request ended early');
    const errorCode = CLIENT_ERRORS[code] ?? 'MALFORMED_REQUEST';
    metrics?.requestCut(errorCode);
    const apiErr = new ApiError(errorCode);
    // Nothing of a response may have gone out yet (a request that timed out mid-answer
    // cannot happen: the timeout only covers receiving it).
    if (socket.writable && !inFlight?.headersSent) {
      const { headers, body } = errorAnswer(apiErr);
      const head = Object.entries({ ...headers, connection: 'close' })
        .map(([k, v]) => `${k}: ${v}`)
        .join('\r\n');
      socket.end(`HTTP/1.1 ${apiErr.status} ${http.STATUS_CODES[apiErr.status] ?? ''}\r\n${head}\r\n\r\n${body}`);
      // A client that does not read its answer does not keep the socket.
      setTimeout(() => socket.destroy(), 2_000).unref();
    } else socket.destroy();
  };
}

/**
 * Caps connections open at once: in total and per socket address (a proxy declared in
 * TRUST_PROXY is exempt: its connections carry many clients). A connection over a cap is
 * closed at once, before its TLS handshake costs anything. Shared by every listener.
 */
export class ConnectionGate {
  private total = 0;
  private readonly perAddress = new Map<string, number>();
  private readonly exempt = new net.BlockList();
  private readonly security = new SecurityLog();

  constructor(
    private readonly limits: ConnectionLimits,
    trustedProxies: string[],
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {
    for (const entry of trustedProxies) addToBlockList(this.exempt, entry);
    metrics?.watchConnections(() => this.total);
  }

  /** Follows the raw TCP connections of a listener ('connection' comes before TLS). */
  watch(server: net.Server): void {
    server.on('connection', (socket: net.Socket) => this.admit(socket));
  }

  private admit(socket: net.Socket): void {
    const address = normalise(socket.remoteAddress ?? '');
    const exempt = address !== '' && this.isExempt(address);
    // One IPv6 client usually holds a whole /64: its addresses share one count.
    const client = clientKey(address);
    const fromAddress = this.perAddress.get(client) ?? 0;
    const overTotal = this.total >= this.limits.maxConnections;
    if (overTotal || (!exempt && fromAddress >= this.limits.maxConnectionsPerIp)) {
      this.metrics?.connectionRefused(overTotal ? 'total' : 'per-address');
      this.warn(client, overTotal ? 'total' : 'per-address');
      socket.destroy();
      return;
    }
    this.total++;
    this.perAddress.set(client, fromAddress + 1);
    socket.once('close', () => {
      this.total--;
      const left = (this.perAddress.get(client) ?? 1) - 1;
      if (left > 0) this.perAddress.set(client, left);
      else this.perAddress.delete(client);
    });
  }

  private isExempt(address: string): boolean {
    return this.exempt.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4');
  }

  private warn(address: string, limit: 'total' | 'per-address'): void {
    const max = limit === 'total' ? this.limits.maxConnections : this.limits.maxConnectionsPerIp;
    this.security.note(
      this.logger,
      'CONNECTION_REFUSED',
      address,
      { limit, max },
      `security: connection refused, ${limit === 'total' ? 'the service' : 'this address'} already has ${max} open`,
    );
  }
}

/** The names TRUST_PROXY accepts besides addresses and subnets (as Fastify's proxy-addr does). */
export const PROXY_RANGE_NAMES: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

/** An address, a subnet (`10.0.0.0/8`) or a range name; null when `entry` is none of these. */
export function parseProxyEntry(entry: string): Array<{ ip: string; prefix: number | null; family: 'ipv4' | 'ipv6' }> | null {
  const named = PROXY_RANGE_NAMES[entry];
  if (named) return named.flatMap((e) => parseProxyEntry(e) ?? []);
  const [ip = '', prefix, extra] = entry.split('/');
  const family = net.isIPv6(ip) ? 'ipv6' : net.isIPv4(ip) ? 'ipv4' : null;
  if (family === null || extra !== undefined) return null;
  if (prefix === undefined) return [{ ip: normalise(ip), prefix: null, family }];
  const bits = Number(prefix);
  if (!/^\d+$/.test(prefix) || bits > (family === 'ipv4' ? 32 : 128)) return null;
  return [{ ip, prefix: bits, family }];
}

function addToBlockList(list: net.BlockList, entry: string): void {
  for (const { ip, prefix, family } of parseProxyEntry(entry) ?? []) {
    if (prefix === null) list.addAddress(ip, family);
    else list.addSubnet(ip, prefix, family);
  }
}

/** After a refused upload, how long and how much of the rest is read and thrown away. */
const LINGER_MS = 5_000;
const LINGER_BYTES = 32 * 1024 * 1024;

/**
 * RFC 9112 §9.6: a server that answers before the request body has arrived (413, 400)
 * and closes at once makes the client's TCP stack drop that answer (the bytes it is
 * still sending meet a reset; undici and Node's https report EPIPE instead). When Node
 * closes this socket after the answer, it half-closes instead: the answer and a FIN go
 * out, and what the client still sends is read and discarded, for at most LINGER_MS and
 * LINGER_BYTES, until the client closes its side.
 */
export function lingerOnClose(socket: net.Socket): void {
  socket.destroySoon = function lingeringClose(this: net.Socket): void {
    // What arrives now is thrown away, not parsed: Node's HTTP parser stops being fed (a
    // request pipelined behind the refused body is not run with no one to answer it).
    this.removeAllListeners('data');
    let read = 0;
    const done = (): void => {
      clearTimeout(timer);
      this.destroy();
    };
    const timer = setTimeout(done, LINGER_MS);
    timer.unref();
    this.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > LINGER_BYTES) done();
    });
    this.once('end', done);
    this.resume();
    // Node's HTTP server stopped reading this socket when it decided to close it; reading
    // starts again here (what net.Socket does on resume when its handle is idle).
    const handle = (this as net.Socket & { _handle?: { reading?: boolean; readStart?: () => number } | null })._handle;
    if (handle && !handle.reading && typeof handle.readStart === 'function') {
      handle.reading = true;
      handle.readStart();
    }
    this.end();
  };
}
