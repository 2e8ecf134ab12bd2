import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Agent, request } from 'undici';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import type { Engine } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { createHotel, issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { readResponse } from './http-response.js';
import { createDatabase } from './postgres-cluster.js';
import { throughPgBouncer } from './pgbouncer.js';

import { viaPgBouncer } from './engines.js';

export { testEngines } from './engines.js';

export interface TestStorage {
  dataDir: string;
  /** DATABASE_URL: through PgBouncer when this file runs through it (test/support/engines.ts). */
  databaseUrl: string | null;
  /** DATABASE_LISTEN_URL, the database's direct address, when databaseUrl leads through PgBouncer. */
  databaseListenUrl?: string | null;
}

/**
 * A fresh, empty database of `engine`: a new PostgreSQL database, or a new DATA_DIR. A
 * PostgreSQL database is reached through the run's PgBouncer (transaction mode) when this
 * file runs through it (viaPgBouncer), with the direct address for the LISTEN session.
 * `pgAdminUrl`: the PostgreSQL server to make it on (a cluster the test started itself,
 * reached directly), instead of the run's shared one.
 */
export async function createTestStorage(engine: Engine, pgAdminUrl?: string): Promise<TestStorage> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-test-'));
  if (engine === 'sqlite') return { dataDir, databaseUrl: null };
  const adminUrl = pgAdminUrl ?? inject('pgAdminUrl');
  if (!adminUrl) throw new Error('PostgreSQL tests need the cluster of test/support/global-setup.ts');
  const direct = await createDatabase(adminUrl, 'innsync');
  const bouncerPort = inject('pgBouncerPort');
  if (pgAdminUrl || !viaPgBouncer() || !bouncerPort) return { dataDir, databaseUrl: direct };
  return { dataDir, databaseUrl: throughPgBouncer(direct, bouncerPort), databaseListenUrl: direct };
}

/** DATABASE_URL and, through PgBouncer, DATABASE_LISTEN_URL of `storage`, as the service's environment. */
export function databaseEnv(storage: TestStorage): Record<string, string> {
  return {
    DATABASE_URL: storage.databaseUrl ?? '',
    ...(storage.databaseListenUrl ? { DATABASE_LISTEN_URL: storage.databaseListenUrl } : {}),
  };
}

/**
 * The database's own address, never a pooler's: for tools that need a session of their own
 * (pg_dump, LISTEN, a test's look at the rows it holds).
 */
export function directDatabaseUrl(config: Config): string {
  return config.databaseListenUrl ?? config.databaseUrl ?? '';
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary members
  body: any;
  text: string;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as is (not JSON-encoded): text, or bytes that need not be valid UTF-8. */
  rawBody?: string | Buffer;
  idempotencyKey?: string | null;
  headers?: Record<string, string>;
}

export interface TestServer {
  engine: Engine;
  server: RunningServer;
  config: Config;
  baseUrl: string;
  httpUrl: string;
  slug: string;
  /** The hotel's PMS API path, `/api/pms/v1/<slug>` (pmsBase). */
  pmsBase: string;
  keys: IssuedKeyPair;
  /** An HTTPS client that trusts the server's generated certificate. */
  agent: Agent;
  api(method: string, urlPath: string, opts?: RequestOptions): Promise<ApiResponse>;
  /** POST with the live key, a fresh Idempotency-Key and a JSON body. */
  post(urlPath: string, body: unknown, opts?: RequestOptions): Promise<ApiResponse>;
  /** Another hotel with its own key pair. */
  addHotel(slug: string): Promise<IssuedKeyPair>;
  close(): Promise<void>;
}

/** A hotel's PMS API path (docs/pms-interface.md): every endpoint is under it. */
export const pmsBase = (slug: string): string => `/api/pms/v1/${slug}`;

let counter = 0;
export const uniqueKey = (prefix = 'idem'): string => `${prefix}_${process.pid}_${++counter}_${randomId(6)}`;

/** The configuration of a test server on `storage`: free ports on 127.0.0.1, silent logs, `env` on top. */
export function testConfig(storage: TestStorage, env: Record<string, string> = {}): Config {
  return loadConfig({
    PORT: '0',
    HTTP_PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: storage.dataDir,
    ...databaseEnv(storage),
    LOG_LEVEL: 'silent',
    ...env,
  });
}

/**
 * Starts the real server (HTTPS + HTTP ports on free ports, migrations, generated
 * certificate) on a fresh database, with one hotel and one key pair. `pgAdminUrl`: make
 * the database on that PostgreSQL server (createTestStorage).
 */
export async function startTestServer(engine: Engine, env: Record<string, string> = {}, opts: { pgAdminUrl?: string } = {}): Promise<TestServer> {
  const storage = await createTestStorage(engine, opts.pgAdminUrl);
  const config = testConfig(storage, env);
  const server = await startServer(config, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }));
  const cert = fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8');
  const agent = new Agent({ connect: { ca: cert, servername: 'localhost' }, keepAliveTimeout: 10_000 });
  const slug = `hotel-${randomId(8)}`;
  await createHotel(server.database.db, slug, 'Test Hotel');
  const keys = await issueKeyPair(server.database.db, slug);
  const baseUrl = `https://127.0.0.1:${server.httpsPort}`;

  const api = async (method: string, urlPath: string, opts: RequestOptions = {}): Promise<ApiResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? keys.live : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    if (opts.idempotencyKey !== undefined && opts.idempotencyKey !== null) headers['idempotency-key'] = opts.idempotencyKey;
    return readResponse(await request(`${baseUrl}${urlPath}`, { method: method as 'GET', headers, body, dispatcher: agent }));
  };

  return {
    engine,
    server,
    config,
    baseUrl,
    httpUrl: `http://127.0.0.1:${server.httpPort ?? 0}`,
    slug,
    pmsBase: pmsBase(slug),
    keys,
    agent,
    api,
    post: (urlPath, body, opts = {}) => api('POST', urlPath, { idempotencyKey: uniqueKey(), ...opts, body }),
    async addHotel(otherSlug: string) {
      await createHotel(server.database.db, otherSlug, `Hotel ${otherSlug}`);
      return issueKeyPair(server.database.db, otherSlug);
    },
    async close() {
      await agent.close();
      await server.close();
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    },
  };
}

/** A valid check-in body; `over` replaces or adds members. */
export function guest(over: Record<string, unknown> = {}): Record<string, unknown> {
  const id = randomId(8);
  return {
    pmsGuestId: `PMS-${id}`,
    firstName: 'Ada',
    lastName: 'Lovelace',
    roomNumber: `R${id}`,
    checkInDate: '2026-11-23',
    checkOutDate: '2026-11-26',
    ...over,
  };
}
