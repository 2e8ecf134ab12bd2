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

/** Connection and time limits (README.md, "Operating it": HEADERS_TIMEOUT_SECONDS … MAX_CONNECTIONS_PER_IP). */
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
  /** HTTP/2: an answer none of whose bytes go out for this long (the client grants no flow-control window) is reset. */
  sendTimeoutMs: number;
}

/** How often Node looks for requests past their headers or request timeout. */
const TIMEOUT_CHECK_INTERVAL_MS = 500;
/** HTTP/2: streams one connection may have open at once. */
const MAX_CONCURRENT_STREAMS = 100;
/** HTTP/2: answer bytes one connection may hold unsent; past it, answers that made no progress are reset, newest first, and new streams refused. */
export const MAX_UNSENT_BYTES_PER_CONNECTION = 8 * 1024 * 1024;

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
    (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
      const serve = handler as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void;
      if (req.httpVersionMajor !== 2) return serve(req, res);
      // An HTTP/2 request reaches the app once the frames read with its HEADERS are processed:
      // a stream its client reset in the same read (HEADERS then RST_STREAM at once, the
      // "rapid reset" pattern) is dropped here and costs the app nothing.
      setImmediate(() => {
        if (!req.stream.closed && !req.stream.destroyed) serve(req, res);
      });
    },
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
    watchProgress(session, limits.sendTimeoutMs, metrics);
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

/**
 * HTTP/2 flow control lets a client take an answer as slowly as it likes, or not at all
 * (a zero window): the answer's bytes then wait in the server's memory, and a connection
 * with such a stream never finishes closing. Each answer with bytes still to send must make
 * progress: an answer whose unsent bytes have not shrunk, on a connection that sent no
 * DATA, for `sendTimeoutMs` is reset (RST_STREAM CANCEL). A connection holding more than
 * MAX_UNSENT_BYTES_PER_CONNECTION unsent has its answers that made no progress since the
 * last look reset (newest first) until it is under, and new streams refused meanwhile.
 */
function watchProgress(session: http2.ServerHttp2Session, sendTimeoutMs: number, metrics?: Metrics): void {
  /** Per stream: unsent bytes at the last look, when they last shrank, when the stream or its connection last sent something. */
  const streams = new Map<http2.ServerHttp2Stream, { unsent: number; buffered: number; shrank: boolean; moved: boolean; progressAt: number }>();
  let windowSeen = -1;
  let over = false;
  /**
   * What waits to be sent: an answer's bytes are handed over in pieces of its stream's
   * buffer size, the rest waiting behind them; until a piece has gone, its whole
   * Content-Length is counted.
   */
  const unsentOf = (stream: http2.ServerHttp2Stream, moved: boolean): number => {
    if (stream.destroyed) return 0;
    const buffered = stream.writableLength;
    if (moved || buffered === 0) return buffered;
    const declared = Number(stream.sentHeaders?.['content-length'] ?? 0);
    return Number.isFinite(declared) ? Math.max(buffered, declared) : buffered;
  };
  const reset = (stream: http2.ServerHttp2Stream): void => {
    streams.delete(stream);
    cutStreams.add(stream);
    metrics?.streamStalled();
    stream.close(http2.constants.NGHTTP2_CANCEL);
  };
  const look = (): void => {
    if (session.destroyed) return;
    const now = Date.now();
    // The connection's send window shrinks only by DATA sent (the client's WINDOW_UPDATEs grow it):
    // a large answer handed over in one piece shows its progress there first.
    let window = -1;
    try {
      window = session.state.remoteWindowSize ?? -1;
    } catch {
      // the session is closing
    }
    const sentData = windowSeen >= 0 && window >= 0 && window < windowSeen;
    windowSeen = window;
    let total = 0;
    for (const [stream, seen] of streams) {
      const buffered = stream.destroyed ? 0 : stream.writableLength;
      seen.moved ||= buffered < seen.buffered;
      seen.buffered = buffered;
      const unsent = unsentOf(stream, seen.moved);
      total += unsent;
      seen.shrank = unsent === 0 || unsent < seen.unsent;
      seen.unsent = unsent;
      if (seen.shrank || sentData) seen.progressAt = now;
      else if (now - seen.progressAt >= sendTimeoutMs) {
        total -= unsent;
        reset(stream);
      }
    }
    // Over the cap: the answers that did not shrink since the last look go, newest first.
    for (const [stream, seen] of [...streams].reverse()) {
      if (total <= MAX_UNSENT_BYTES_PER_CONNECTION) break;
      if (seen.shrank) continue;
      total -= seen.unsent;
      reset(stream);
    }
    over = total > MAX_UNSENT_BYTES_PER_CONNECTION;
  };
  const timer = setInterval(look, Math.min(1_000, Math.max(50, Math.floor(sendTimeoutMs / 4))));
  timer.unref();
  session.once('close', () => clearInterval(timer));
  session.on('stream', (stream: http2.ServerHttp2Stream) => {
    if (over) {
      cutStreams.add(stream);
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    streams.set(stream, { unsent: 0, buffered: 0, shrank: true, moved: false, progressAt: Date.now() });
    stream.once('close', () => streams.delete(stream));
  });
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

/**
 * The answer never reached the client whole: its HTTP/2 stream was reset (by the client, or
 * by the service for an answer that made no progress) before its last byte went out, or
 * its client went away first. Node's compatibility layer still ends such a response when
 * the stream closes, so "finished" alone does not tell.
 */
export function answerUndelivered(raw: http.IncomingMessage): boolean {
  if (raw.aborted) return true;
  const stream = (raw as unknown as Partial<http2.Http2ServerRequest>).stream;
  return raw.httpVersionMajor === 2 && stream !== undefined && stream.rstCode !== undefined && stream.rstCode !== http2.constants.NGHTTP2_NO_ERROR;
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

/** HTTP/2 streams one connection may see reset by its client before their answer within RESET_WINDOW_MS; one more closes it. */
export const MAX_RESETS_PER_CONNECTION = 100;
const RESET_WINDOW_MS = 10_000;
/** The same, all connections of one client address together (an IPv6 /64) within ADDRESS_RESET_WINDOW_MS. */
export const MAX_RESETS_PER_ADDRESS = 300;
const ADDRESS_RESET_WINDOW_MS = 60_000;
/** An address past MAX_RESETS_PER_ADDRESS has its new connections refused this long. */
const RESET_BLOCK_MS = 60_000;
/** Addresses whose resets are counted at once; a flood from many addresses forgets the quiet ones first. */
const MAX_TRACKED_ADDRESSES = 10_000;

interface ResetCount {
  windowStart: number;
  resets: number;
}

/** Counts `n` more resets in a fixed window; true when the count is now past `max`. */
function countReset(count: ResetCount, now: number, windowMs: number, max: number): boolean {
  if (now - count.windowStart >= windowMs) {
    count.windowStart = now;
    count.resets = 0;
  }
  count.resets++;
  return count.resets > max;
}

/**
 * HTTP/2 "rapid reset": a client opens streams and resets each at once (RST_STREAM), so the
 * service starts work for requests no one waits for, without the cap on concurrent streams
 * ever holding it back. Streams reset by the client before their answer was complete are
 * counted per connection and per client address; a connection past its count is sent
 * GOAWAY ENHANCE_YOUR_CALM and closed, and an address past its count is refused new
 * connections for RESET_BLOCK_MS (its open HTTP/2 connections are closed the same way).
 */
class ResetGuard {
  private readonly addresses = new Map<string, ResetCount & { blockedUntil: number; sessions: Set<http2.ServerHttp2Session> }>();
  /** Sessions closed here or streams cut by the service itself: their streams' resets are not the client's. */
  private readonly cut = new WeakSet<http2.ServerHttp2Session>();

  constructor(private readonly onCut: (client: string, scope: 'connection' | 'address') => void) {}

  /** True while `client` is refused new connections. */
  blocked(client: string, now = Date.now()): boolean {
    return (this.addresses.get(client)?.blockedUntil ?? 0) > now;
  }

  watch(session: http2.ServerHttp2Session, client: string, exempt: boolean): void {
    const own: ResetCount = { windowStart: Date.now(), resets: 0 };
    const address = exempt ? null : this.address(client);
    address?.sessions.add(session);
    session.once('close', () => {
      address?.sessions.delete(session);
      if (address && address.sessions.size === 0 && !this.blocked(client) && Date.now() - address.windowStart >= ADDRESS_RESET_WINDOW_MS) {
        this.addresses.delete(client);
      }
    });
    session.on('stream', (stream: http2.ServerHttp2Stream) => {
      stream.once('close', () => {
        // NO_ERROR: answered (or ended by the service's own request timeout). Any other code
        // on a session the service did not close is the client's RST_STREAM.
        if (stream.rstCode === http2.constants.NGHTTP2_NO_ERROR || stream.rstCode === undefined) return;
        if (session.closed || session.destroyed || this.cut.has(session) || cutStreams.has(stream)) return;
        const now = Date.now();
        if (countReset(own, now, RESET_WINDOW_MS, MAX_RESETS_PER_CONNECTION)) {
          this.calm(session);
          this.onCut(client, 'connection');
        }
        if (address && countReset(address, now, ADDRESS_RESET_WINDOW_MS, MAX_RESETS_PER_ADDRESS)) {
          const first = address.blockedUntil <= now;
          address.blockedUntil = now + RESET_BLOCK_MS;
          for (const other of address.sessions) this.calm(other);
          if (first) this.onCut(client, 'address');
        }
      });
    });
  }

  /** GOAWAY with ENHANCE_YOUR_CALM, then the connection is closed (streams still open are reset). */
  private calm(session: http2.ServerHttp2Session): void {
    if (this.cut.has(session) || session.destroyed) return;
    this.cut.add(session);
    session.destroy(new Error('too many streams reset by the client'), http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
  }

  private address(client: string): ResetCount & { blockedUntil: number; sessions: Set<http2.ServerHttp2Session> } {
    let entry = this.addresses.get(client);
    if (!entry) {
      if (this.addresses.size >= MAX_TRACKED_ADDRESSES) this.forgetQuiet();
      entry = { windowStart: Date.now(), resets: 0, blockedUntil: 0, sessions: new Set() };
      this.addresses.set(client, entry);
    }
    return entry;
  }

  private forgetQuiet(): void {
    const now = Date.now();
    for (const [client, entry] of this.addresses) {
      if (entry.sessions.size === 0 && entry.blockedUntil <= now) this.addresses.delete(client);
    }
  }
}

/** Streams the service reset itself (an answer that made no progress): not counted as the client's resets. */
const cutStreams = new WeakSet<http2.ServerHttp2Stream>();

/**
 * Caps connections open at once: in total and per socket address (a proxy declared in
 * TRUST_PROXY is exempt: its connections carry many clients). A connection over a cap is
 * closed at once, before its TLS handshake costs anything; so is one from an address that
 * keeps resetting HTTP/2 streams (ResetGuard). Shared by every listener.
 */
export class ConnectionGate {
  private total = 0;
  private readonly perAddress = new Map<string, number>();
  private readonly exempt = new net.BlockList();
  private readonly security = new SecurityLog();
  private readonly resets = new ResetGuard((client, scope) => {
    this.metrics?.streamResetFlood(scope);
    this.security.note(
      this.logger,
      'STREAM_RESET_FLOOD',
      client,
      { scope, max: scope === 'connection' ? MAX_RESETS_PER_CONNECTION : MAX_RESETS_PER_ADDRESS },
      scope === 'connection'
        ? 'security: HTTP/2 connection closed (ENHANCE_YOUR_CALM), its client reset too many streams before their answer'
        : 'security: this address reset too many HTTP/2 streams before their answer; its new connections are refused for a minute',
    );
  });

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
    // HTTP/2 listeners only: streams reset by their clients are counted (ResetGuard).
    server.on('session', (session: http2.ServerHttp2Session) => {
      const address = normalise(session.socket?.remoteAddress ?? '');
      this.resets.watch(session, clientKey(address), address !== '' && this.isExempt(address));
    });
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
    if (!exempt && this.resets.blocked(client)) {
      this.metrics?.connectionRefused('resets');
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
