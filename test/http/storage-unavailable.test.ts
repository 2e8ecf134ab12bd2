import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createHotel, issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { testEngines } from '../support/engines.js';

// docs/pms-interface.md, "Errors": 503 SERVICE_UNAVAILABLE when storage is unreachable,
// with Retry-After. This file stops a PostgreSQL cluster of its own under a running
// server.
describe.skipIf(!testEngines().includes('postgres'))('storage unreachable (postgres)', () => {
  let cluster: PostgresCluster;
  let server: RunningServer;
  let keys: IssuedKeyPair;
  let agent: Agent;
  let dataDir: string;

  beforeAll(async () => {
    cluster = await startPostgresCluster();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-503-'));
    const config = loadConfig({
      PORT: '0',
      HTTP_PORT: 'off',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: cluster.adminUrl,
      LOG_LEVEL: 'silent',
      METRICS_PORT: '0',
    });
    server = await startServer(config, pino({ level: 'silent' }));
    await createHotel(server.database.db, 'down-hotel', 'Down Hotel');
    keys = await issueKeyPair(server.database.db, 'down-hotel');
    agent = new Agent({ connect: { ca: fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
  });

  afterAll(async () => {
    await agent.close();
    await server.close().catch(() => undefined);
    cluster.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const list = async () => {
    const res = await request(`https://127.0.0.1:${server.httpsPort}/api/pms/v1/down-hotel/guests`, {
      headers: { authorization: `Bearer ${keys.live}` },
      dispatcher: agent,
    });
    return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as Record<string, unknown> };
  };

  /** innsync_database_errors_total{kind="unavailable"} as the metrics listener says it now. */
  const unavailableErrors = async (): Promise<number> => {
    const text = await (await request(`http://127.0.0.1:${server.metricsPort}/metrics`)).body.text();
    const line = text.split('\n').find((l) => l.startsWith('innsync_database_errors_total{kind="unavailable"}'));
    return line ? Number(line.split(' ').pop()) : 0;
  };

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After while the database is down, and recovers after', async () => {
    expect((await list()).status).toBe(200);
    cluster.pause();
    const down = await list();
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'error', code: 'SERVICE_UNAVAILABLE', requestId: expect.stringMatching(/^req_/) });
    expect(Number(down.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.stringify(down.body)).not.toMatch(/ECONNREFUSED|at .*\.js|select /i);
    // Counted as a database error of kind `unavailable`.
    expect(await unavailableErrors()).toBeGreaterThanOrEqual(1);
    cluster.resume();
    expect((await list()).status).toBe(200);
  });

  it("API reference, test-key trigger values: the test key's trigger pmsGuestId innsync-test-503 answers as a live key does while the database is down", async () => {
    const checkin = async (key: string, pmsGuestId: string) => {
      const res = await request(`https://127.0.0.1:${server.httpsPort}/api/pms/v1/down-hotel/guests/checkin`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `k-${pmsGuestId}-${Date.now()}` },
        body: JSON.stringify({ pmsGuestId, lastName: 'Lovelace', roomNumber: `R-${pmsGuestId}`, checkInDate: '2026-11-23', checkOutDate: '2026-11-26' }),
        dispatcher: agent,
      });
      return { status: res.statusCode, headers: res.headers, body: (await res.body.json()) as Record<string, unknown> };
    };
    cluster.pause();
    let live: Awaited<ReturnType<typeof checkin>>;
    try {
      live = await checkin(keys.live, 'G-503');
    } finally {
      cluster.resume();
    }
    await expect.poll(async () => (await list()).status).toBe(200);
    const test = await checkin(keys.test, 'innsync-test-503');
    expect(live.status).toBe(503);
    expect(test.status).toBe(503);
    expect(live.body.requestId).toMatch(/^req_(?!test_)/);
    expect(test.body).toEqual({ ...live.body, requestId: expect.stringMatching(/^req_test_/) });
    // The same headers (no rate-limit headers: live refuses at the key's lookup), the same values but the date and size.
    expect(Object.keys(test.headers).sort()).toEqual(Object.keys(live.headers).sort());
    for (const name of Object.keys(live.headers).filter((n) => !['date', 'content-length'].includes(n))) {
      expect(test.headers[name], name).toBe(live.headers[name]);
    }
  });

  it('GET /readyz is 503 SERVICE_UNAVAILABLE while PostgreSQL is stopped, /healthz stays 200, and /readyz is 200 again once it is back', async () => {
    const probe = async (path: string) => {
      const res = await request(`https://127.0.0.1:${server.httpsPort}${path}`, { dispatcher: agent });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    expect(await probe('/readyz')).toEqual({ status: 200, body: { status: 'ok' } });
    const before = await unavailableErrors();
    cluster.pause();
    try {
      const down = await probe('/readyz');
      expect(down.status).toBe(503);
      // Counted (the request-log writer may count its own failures meanwhile too).
      expect(await unavailableErrors()).toBeGreaterThan(before);
      expect(down.body).toMatchObject({ status: 'error', code: 'SERVICE_UNAVAILABLE' });
      expect((await probe('/healthz')).status).toBe(200);
    } finally {
      cluster.resume();
    }
    await expect.poll(async () => (await probe('/readyz')).status).toBe(200);
  });
});
