import path from 'node:path';
import { CliError } from './errors.js';
import { DEFAULT_SQLITE_GROUP_COMMIT_MS } from './db/sqlite-driver.js';
import { DEFAULT_STREAM_LIMITS, type StreamLimits } from './dashboard/live-events.js';
import { parseProxyEntry, PROXY_RANGE_NAMES, type ConnectionLimits } from './http/transport.js';

/** Where the service stores data and how it listens. The only reader of process.env. */
export interface Config {
  readonly port: number;
  /** `null` when HTTP_PORT=off. */
  readonly httpPort: number | null;
  readonly host: string;
  /** The Prometheus listener's port (METRICS_PORT); `null` when off, the default. */
  readonly metricsPort: number | null;
  readonly metricsHost: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  /** PostgreSQL: where the LISTEN session for live changes connects (DATABASE_LISTEN_URL; default: databaseUrl). */
  readonly databaseListenUrl: string | null;
  readonly tlsCertFile: string | null;
  readonly tlsKeyFile: string | null;
  /** Proxy addresses whose X-Forwarded-Proto/-For are believed (docs/pms-interface.md, "Transport"). */
  readonly trustProxy: string[];
  readonly logLevel: string;
  readonly sqliteSynchronous: 'normal' | 'full';
  /** SQLITE_READER: plain reads on a connection of their own beside the writer (`on`), or one connection for everything (`off`). */
  readonly sqliteReader: boolean;
  /** SQLITE_GROUP_COMMIT_MS: the longest a commit waits for more transactions to share it (0: each commits alone). */
  readonly sqliteGroupCommitMs: number;
  /** Connection and time limits of the listeners (HEADERS_TIMEOUT_SECONDS … MAX_CONNECTIONS_PER_IP). */
  readonly limits: ConnectionLimits;
  /** SHUTDOWN_TIMEOUT_SECONDS: on SIGTERM, connections still open this long after it are closed, whatever their clients do. */
  readonly shutdownTimeoutMs: number;
  /** GUEST_RETENTION_DAYS: guests checked out longer ago are anonymised; `null` when off. */
  readonly guestRetentionDays: number | null;
  /** ACCESS_LOG_RETENTION_DAYS: access entries and security events older than this are deleted (docs/dashboard.md, "Access trail"). */
  readonly accessLogRetentionDays: number;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: webhooks may use plain http:// and private or loopback addresses. */
  readonly webhookAllowPrivateNetworks: boolean;
  /** MAX_KEY_PAIRS_PER_HOTEL: active (not revoked) API key pairs a hotel may hold. */
  readonly maxKeyPairsPerHotel: number;
  /** LIVE_STREAMS_PER_USER, LIVE_STREAMS_PER_HOTEL: dashboard event streams open at once on this instance. */
  readonly liveStreams: StreamLimits;
  /** WEBHOOK_MAX_ENDPOINTS_PER_HOTEL: a hotel's webhook endpoints at most, and its deliveries under way at once. */
  readonly webhookMaxEndpointsPerHotel: number;
  /** REQUEST_LOG: `false` when off: no request-log rows are stored (README.md: Logs); key last-use times and the go-live checklist still are. */
  readonly requestLog: boolean;
}

/** The default of MAX_KEY_PAIRS_PER_HOTEL. */
export const DEFAULT_MAX_KEY_PAIRS_PER_HOTEL = 10;

/** An environment variable that is not valid (the `innsync` command's CONFIG_ERROR). */
export class ConfigError extends CliError {
  constructor(message: string) {
    super('CONFIG_ERROR', message);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function parsePort(name: string, raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(`${name} must be a port number 0-65535, got "${raw}"`);
  }
  return Number(raw);
}

function parsePositive(name: string, raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from 1 to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function parseGroupCommitMs(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_SQLITE_GROUP_COMMIT_MS;
  if (!/^\d+$/.test(raw) || Number(raw) > 1000) {
    throw new ConfigError(`SQLITE_GROUP_COMMIT_MS must be a whole number of milliseconds from 0 (each transaction commits alone) to 1000, got "${raw}"`);
  }
  return Number(raw);
}

function parseRetentionDays(raw: string | undefined): number | null {
  const value = (raw ?? '90').toLowerCase();
  if (value !== 'off' && (!/^\d+$/.test(value) || Number(value) > 36_500)) {
    throw new ConfigError(`GUEST_RETENTION_DAYS must be a whole number of days from 0 to 36500, or "off", got "${value}"`);
  }
  return value === 'off' ? null : Number(value);
}

/** Access entries and security events are kept this many days unless ACCESS_LOG_RETENTION_DAYS says otherwise. */
export const DEFAULT_ACCESS_LOG_RETENTION_DAYS = 365;

function parseAccessLogRetentionDays(raw: string | undefined): number {
  const value = raw ?? String(DEFAULT_ACCESS_LOG_RETENTION_DAYS);
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 36_500) {
    throw new ConfigError(`ACCESS_LOG_RETENTION_DAYS must be a whole number of days from 1 to 36500, got "${value}"`);
  }
  return Number(value);
}

function parseTrustProxy(raw: string | undefined): string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = entries.find((entry) => parseProxyEntry(entry) === null);
  if (bad !== undefined) {
    throw new ConfigError(
      `TRUST_PROXY must list addresses, subnets (10.0.0.0/8) or ${Object.keys(PROXY_RANGE_NAMES).join(', ')}, separated by commas; "${bad}" is none of these`,
    );
  }
  return entries;
}

function parseOnOff(name: string, raw: string | undefined, fallback: boolean): boolean {
  const value = (raw ?? (fallback ? 'on' : 'off')).toLowerCase();
  if (value !== 'on' && value !== 'off') throw new ConfigError(`${name} must be "on" or "off", got "${value}"`);
  return value === 'on';
}

function parseFlag(name: string, raw: string | undefined, fallback: boolean): boolean {
  const value = (raw ?? String(fallback)).toLowerCase();
  if (value !== 'true' && value !== 'false') throw new ConfigError(`${name} must be "true" or "false", got "${value}"`);
  return value === 'true';
}

/**
 * Every environment variable the service reads (README.md, "Operating it"): loadConfig reads
 * no other (its `get` takes only these names), and the tests that start the command clear them
 * all from the environment they pass on.
 */
export const CONFIG_VARIABLES = [
  'PORT',
  'HTTP_PORT',
  'HOST',
  'DATA_DIR',
  'DATABASE_URL',
  'DATABASE_LISTEN_URL',
  'TLS_CERT_FILE',
  'TLS_KEY_FILE',
  'TRUST_PROXY',
  'LOG_LEVEL',
  'SQLITE_SYNCHRONOUS',
  'SQLITE_READER',
  'SQLITE_GROUP_COMMIT_MS',
  'METRICS_PORT',
  'METRICS_HOST',
  'HEADERS_TIMEOUT_SECONDS',
  'REQUEST_TIMEOUT_SECONDS',
  'KEEP_ALIVE_TIMEOUT_SECONDS',
  'SEND_TIMEOUT_SECONDS',
  'SHUTDOWN_TIMEOUT_SECONDS',
  'MAX_CONNECTIONS',
  'MAX_CONNECTIONS_PER_IP',
  'REQUEST_LOG',
  'GUEST_RETENTION_DAYS',
  'ACCESS_LOG_RETENTION_DAYS',
  'LIVE_STREAMS_PER_USER',
  'LIVE_STREAMS_PER_HOTEL',
  'MAX_KEY_PAIRS_PER_HOTEL',
  'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
  'WEBHOOK_MAX_ENDPOINTS_PER_HOTEL',
  // Read by the tracing SDK itself (tracing/start.ts), never by loadConfig: docs/architecture.md, "Traces".
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_SERVICE_NAME',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
] as const;

/** Validates the environment once; throws ConfigError naming the variable at fault. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const get = (name: (typeof CONFIG_VARIABLES)[number]): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const httpPortRaw = get('HTTP_PORT') ?? '8080';
  const metricsPortRaw = get('METRICS_PORT') ?? 'off';
  const databaseUrl = get('DATABASE_URL') ?? null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const databaseListenUrl = get('DATABASE_LISTEN_URL') ?? null;
  if (databaseListenUrl !== null && databaseUrl === null) {
    throw new ConfigError('DATABASE_LISTEN_URL is used only with PostgreSQL: set DATABASE_URL too, or remove DATABASE_LISTEN_URL');
  }
  if (databaseListenUrl !== null && !/^postgres(ql)?:\/\//.test(databaseListenUrl)) {
    throw new ConfigError('DATABASE_LISTEN_URL must start with postgres:// or postgresql://');
  }
  const tlsCertFile = get('TLS_CERT_FILE') ?? null;
  const tlsKeyFile = get('TLS_KEY_FILE') ?? null;
  if ((tlsCertFile === null) !== (tlsKeyFile === null)) {
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  const logLevel = (get('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const sync = (get('SQLITE_SYNCHRONOUS') ?? 'normal').toLowerCase();
  if (sync !== 'normal' && sync !== 'full') {
    throw new ConfigError('SQLITE_SYNCHRONOUS must be "normal" or "full"');
  }
  const reader = (get('SQLITE_READER') ?? 'on').toLowerCase();
  if (reader !== 'on' && reader !== 'off') {
    throw new ConfigError('SQLITE_READER must be "on" or "off"');
  }
  const limits: ConnectionLimits = Object.freeze({
    headersTimeoutMs: parsePositive('HEADERS_TIMEOUT_SECONDS', get('HEADERS_TIMEOUT_SECONDS'), 10, 3600) * 1000,
    requestTimeoutMs: parsePositive('REQUEST_TIMEOUT_SECONDS', get('REQUEST_TIMEOUT_SECONDS'), 60, 3600) * 1000,
    keepAliveTimeoutMs: parsePositive('KEEP_ALIVE_TIMEOUT_SECONDS', get('KEEP_ALIVE_TIMEOUT_SECONDS'), 30, 3600) * 1000,
    maxConnections: parsePositive('MAX_CONNECTIONS', get('MAX_CONNECTIONS'), 10_000, 1_000_000),
    maxConnectionsPerIp: parsePositive('MAX_CONNECTIONS_PER_IP', get('MAX_CONNECTIONS_PER_IP'), 100, 1_000_000),
    sendTimeoutMs: parsePositive('SEND_TIMEOUT_SECONDS', get('SEND_TIMEOUT_SECONDS'), 30, 3600) * 1000,
  });
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError('HEADERS_TIMEOUT_SECONDS must not be longer than REQUEST_TIMEOUT_SECONDS (the request time includes its headers)');
  }
  return Object.freeze({
    port: parsePort('PORT', get('PORT') ?? '8443'),
    httpPort: httpPortRaw.toLowerCase() === 'off' ? null : parsePort('HTTP_PORT', httpPortRaw),
    host: get('HOST') ?? '0.0.0.0',
    metricsPort: metricsPortRaw.toLowerCase() === 'off' ? null : parsePort('METRICS_PORT', metricsPortRaw),
    metricsHost: get('METRICS_HOST') ?? '127.0.0.1',
    dataDir: path.resolve(get('DATA_DIR') ?? './data'),
    databaseUrl,
    databaseListenUrl: databaseListenUrl ?? databaseUrl,
    tlsCertFile,
    tlsKeyFile,
    trustProxy: parseTrustProxy(get('TRUST_PROXY')),
    logLevel,
    sqliteSynchronous: sync,
    sqliteReader: reader === 'on',
    sqliteGroupCommitMs: parseGroupCommitMs(get('SQLITE_GROUP_COMMIT_MS')),
    limits,
    shutdownTimeoutMs: parsePositive('SHUTDOWN_TIMEOUT_SECONDS', get('SHUTDOWN_TIMEOUT_SECONDS'), 20, 3600) * 1000,
    guestRetentionDays: parseRetentionDays(get('GUEST_RETENTION_DAYS')),
    accessLogRetentionDays: parseAccessLogRetentionDays(get('ACCESS_LOG_RETENTION_DAYS')),
    webhookAllowPrivateNetworks: parseFlag('WEBHOOK_ALLOW_PRIVATE_NETWORKS', get('WEBHOOK_ALLOW_PRIVATE_NETWORKS'), false),
    maxKeyPairsPerHotel: parsePositive('MAX_KEY_PAIRS_PER_HOTEL', get('MAX_KEY_PAIRS_PER_HOTEL'), DEFAULT_MAX_KEY_PAIRS_PER_HOTEL, 1000),
    liveStreams: Object.freeze({
      perUser: parsePositive('LIVE_STREAMS_PER_USER', get('LIVE_STREAMS_PER_USER'), DEFAULT_STREAM_LIMITS.perUser, 100_000),
      perHotel: parsePositive('LIVE_STREAMS_PER_HOTEL', get('LIVE_STREAMS_PER_HOTEL'), DEFAULT_STREAM_LIMITS.perHotel, 1_000_000),
    }),
    webhookMaxEndpointsPerHotel: parsePositive('WEBHOOK_MAX_ENDPOINTS_PER_HOTEL', get('WEBHOOK_MAX_ENDPOINTS_PER_HOTEL'), 10, 1000),
    requestLog: parseOnOff('REQUEST_LOG', get('REQUEST_LOG'), true),
  });
}

/** What tracing/start.ts needs of the OTEL_* variables the SDK does not read itself (docs/architecture.md, "Traces"). */
export interface TracingSettings {
  protocol: 'http/json' | 'http/protobuf';
  serviceName: string;
}

export function loadTracingSettings(env: Record<string, string | undefined> = process.env): TracingSettings {
  const protocol = env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/protobuf';
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, not "${protocol}"`);
  }
  return { protocol, serviceName: env.OTEL_SERVICE_NAME?.trim() || 'innsync' };
}
