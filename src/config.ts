import path from 'node:path';

/** Where the service stores data and how it listens. The only reader of process.env. */
export interface Config {
  readonly port: number;
  /** `null` when HTTP_PORT=off. */
  readonly httpPort: number | null;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly tlsCertFile: string | null;
  readonly tlsKeyFile: string | null;
  /** Proxy addresses whose X-Forwarded-Proto/-For are believed (decisions.md: Transport). */
  readonly trustProxy: string[];
  readonly logLevel: string;
  readonly sqliteSynchronous: 'normal' | 'full';
}

export class ConfigError extends Error {}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function parsePort(name: string, raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(`${name} must be a port number 0-65535, got "${raw}"`);
  }
  return Number(raw);
}

/** Validates the environment once; throws ConfigError naming the variable at fault. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const get = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const httpPortRaw = get('HTTP_PORT') ?? '8080';
  const databaseUrl = get('DATABASE_URL') ?? null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://');
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
  return Object.freeze({
    port: parsePort('PORT', get('PORT') ?? '8443'),
    httpPort: httpPortRaw.toLowerCase() === 'off' ? null : parsePort('HTTP_PORT', httpPortRaw),
    host: get('HOST') ?? '0.0.0.0',
    dataDir: path.resolve(get('DATA_DIR') ?? './data'),
    databaseUrl,
    tlsCertFile,
    tlsKeyFile,
    trustProxy: (get('TRUST_PROXY') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel,
    sqliteSynchronous: sync,
  });
}
