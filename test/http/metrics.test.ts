import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { addStaffUser, DashboardClient, withinOneWindow, type EventStream } from '../support/dashboard-client.js';
import { createTestStorage, guest, startTestServer, testEngines, uniqueKey, type TestServer, databaseEnv } from '../support/harness.js';
import { sample } from '../support/metrics.js';

// Prometheus metrics on a plain-HTTP listener of their own (README.md, "Metrics":
// METRICS_PORT, METRICS_HOST), read after real requests over HTTPS.

/** A listening TCP server on 127.0.0.1 (`port` 0: a free one). */
async function listening(port = 0): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return server;
}

const portOf = (server: net.Server): number => (server.address() as net.AddressInfo).port;
const closed = (server: net.Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

describe('METRICS_PORT and METRICS_HOST', () => {
  it('default off on 127.0.0.1; `0` picks a free port; anything but a port or `off` is a ConfigError naming METRICS_PORT', () => {
    expect(loadConfig({})).toMatchObject({ metricsPort: null, metricsHost: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: 'OFF' }).metricsPort).toBeNull();
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '0.0.0.0' })).toMatchObject({ metricsPort: 0, metricsHost: '0.0.0.0' });
    expect(loadConfig({ METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    for (const bad of ['metrics', '-1', '65536', '94.64']) {
      expect(() => loadConfig({ METRICS_PORT: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ METRICS_PORT: bad })).toThrow(/METRICS_PORT/);
    }
  });
});

describe.each(testEngines())('Prometheus metrics (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  const checkinRoute = '/api/pms/v1/:slug/guests/checkin';
  // Personal data and secrets sent in the requests below: none may appear in the metrics.
  const ada = guest({ firstName: 'Metrodora', lastName: 'Quokkabridge', email: 'quokka.guest@metrics.example' });
  const grace = guest({ firstName: 'Hypatia', lastName: 'Wombatfield' });
  const idempotencyKey = uniqueKey('metrics-replay');
  const staffEmail = `desk-${engine}@metrics.example`;
  const strangerEmail = `stranger-${engine}@metrics.example`;

  const scrape = async (path = '/metrics', method = 'GET') => {
    const res = await request(`http://127.0.0.1:${t.server.metricsPort}${path}`, { method: method as 'GET' });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  };
  const metrics = async () => (await scrape()).text;

  beforeAll(async () => {
    t = await startTestServer(engine, { METRICS_PORT: '0' });
    base = `${t.pmsBase}`;
    // A check-in, its replay (same Idempotency-Key, same body) and a live sync of two guests.
    const created = await t.post(`${base}/guests/checkin`, ada, { idempotencyKey });
    const replay = await t.post(`${base}/guests/checkin`, ada, { idempotencyKey });
    const synced = await t.post(`${base}/guests/sync`, { syncMode: 'full', guests: [ada, grace] });
    expect([created.status, replay.status, synced.status]).toEqual([200, 200, 200]);
    expect(replay.headers['idempotent-replayed']).toBe('true');
  });
  afterAll(() => t.close());

  it('GET /metrics on METRICS_PORT answers the Prometheus text format over plain HTTP, default process metrics included; other paths 404, other methods 405', async () => {
    expect(t.server.metricsPort).toBeGreaterThan(0);
    expect(t.server.metricsPort).not.toBe(t.server.httpsPort);
    const res = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4; charset=utf-8$/);
    expect(res.text).toMatch(/^# HELP innsync_http_requests_total /m);
    expect(sample(res.text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(res.text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect((await scrape('/metrics?x=1')).status).toBe(200);
    expect((await scrape('/')).status).toBe(404);
    expect((await scrape('/healthz')).status).toBe(404);
    const post = await scrape('/metrics', 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('requests are counted and timed by route pattern, method and status; a request no route matches is `unmatched`, never its URL', async () => {
    expect((await t.api('GET', '/no-such-path/quokka', { key: null })).status).toBe(404);
    const text = await metrics();
    const checkins = { route: checkinRoute, method: 'POST', status: '200' };
    expect(sample(text, 'innsync_http_requests_total', checkins)).toBe(2);
    expect(sample(text, 'innsync_http_request_duration_seconds_count', checkins)).toBe(2);
    expect(sample(text, 'innsync_http_request_duration_seconds_bucket', { ...checkins, le: '+Inf' })).toBe(2);
    expect(sample(text, 'innsync_http_request_duration_seconds_sum', checkins)).toBeGreaterThan(0);
    expect(sample(text, 'innsync_http_requests_total', { route: '/api/pms/v1/:slug/guests/sync', method: 'POST', status: '200' })).toBe(1);
    expect(sample(text, 'innsync_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(text).not.toContain('no-such-path');
    expect(text).not.toContain(t.slug);
  });

  it('an idempotent replay is counted once, by endpoint; the completed live sync is one observation of its duration and of its list size', async () => {
    const text = await metrics();
    expect(sample(text, 'innsync_idempotent_replays_total', { endpoint: 'checkin' })).toBe(1);
    expect(sample(text, 'innsync_sync_duration_seconds_count')).toBe(1);
    expect(sample(text, 'innsync_sync_duration_seconds_sum')).toBeGreaterThan(0);
    expect(sample(text, 'innsync_sync_guests_count')).toBe(1);
    expect(sample(text, 'innsync_sync_guests_sum')).toBe(2);
    expect(sample(text, 'innsync_sync_guests_bucket', { le: '0' })).toBe(0);
    expect(sample(text, 'innsync_sync_guests_bucket', { le: '10' })).toBe(1);
    // The check-in and the sync each published one roster change; the replay published nothing.
    expect(sample(text, 'innsync_roster_events_published_total')).toBe(2);
  });

  it('request-log rows written are counted (written in batches after the answer) and the queue depth is read at each scrape', async () => {
    await expect.poll(async () => sample(await metrics(), 'innsync_request_log_rows_written_total')).toBeGreaterThanOrEqual(3);
    // Each batch's write time: at least one batch, taking some time.
    expect(sample(await metrics(), 'innsync_request_log_batch_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(sample(await metrics(), 'innsync_request_log_batch_seconds_sum')).toBeGreaterThan(0);
    // Every row written, the gauge reads the empty queue (a gauge not exported reads undefined).
    await expect.poll(async () => sample(await metrics(), 'innsync_request_log_queue_rows')).toBe(0);
    expect(sample(await metrics(), 'innsync_request_log_rows_dropped_total')).toBe(0);
  });

  it("429 refusals are counted by scope: the key's endpoint limit (`key`) and the dashboard's failed-login limit (`login`)", async () => {
    // Sandbox syncs (test key): 10 an hour per key; the 11th is refused. Sandbox syncs are not measured as syncs.
    const statuses: number[] = [];
    while (!statuses.includes(429) && statuses.length < 12) {
      statuses.push((await t.post(`${base}/guests/sync`, { syncMode: 'full', guests: [grace] }, { key: t.keys.test })).status);
    }
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429]);
    // Failed logins: 5 per e-mail in 15 minutes; the 6th is refused before the password check.
    const stranger = new DashboardClient(t);
    // Six slow password checks, all in one 15-minute window of the limit.
    await withinOneWindow(15 * 60_000, 60_000);
    const logins: number[] = [];
    for (let i = 0; i < 6; i++) logins.push((await stranger.login(strangerEmail, 'not-the-password')).status);
    expect(logins).toEqual([401, 401, 401, 401, 401, 429]);
    const text = await metrics();
    expect(sample(text, 'innsync_rate_limited_total', { scope: 'key' })).toBe(1);
    expect(sample(text, 'innsync_rate_limited_total', { scope: 'login' })).toBe(1);
    expect(sample(text, 'innsync_sync_duration_seconds_count')).toBe(1);
  }, 120_000);

  it('an open dashboard event stream is counted while it is open, and no longer once it is closed', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, staffEmail, 'receptionist');
    const desk = await DashboardClient.loggedIn(t, user.email);
    let stream: EventStream | null = await desk.events();
    try {
      expect(stream.status).toBe(200);
      expect((await stream.next()).event).toBe('ready');
      expect(sample(await metrics(), 'innsync_event_streams_open')).toBe(1);
      stream.close();
      stream = null;
      await expect.poll(async () => sample(await metrics(), 'innsync_event_streams_open')).toBe(0);
    } finally {
      stream?.close();
    }
  });

  it('the metrics carry no API key, e-mail, guest name, pmsGuestId, slug or Idempotency-Key sent in the requests', async () => {
    const text = await metrics();
    expect(sample(text, 'innsync_http_requests_total', { route: checkinRoute })).toBeGreaterThan(0);
    for (const secret of [
      t.keys.live,
      t.keys.test,
      t.slug,
      idempotencyKey,
      staffEmail,
      strangerEmail,
      ada.email,
      ada.firstName,
      ada.lastName,
      ada.pmsGuestId,
      grace.lastName,
      grace.pmsGuestId,
    ]) {
      expect(text).not.toContain(String(secret));
    }
  });

  it('a METRICS_PORT already in use fails the start (EADDRINUSE) and releases what the start opened: the HTTPS and HTTP ports are free again', async () => {
    const taken = await listening();
    const storage = await createTestStorage(engine);
    try {
      // Two free ports, given back at once so the server can take them.
      const probes = [await listening(), await listening()];
      const [port, httpPort] = probes.map(portOf);
      await Promise.all(probes.map(closed));
      const config = loadConfig({
        PORT: String(port),
        HTTP_PORT: String(httpPort),
        HOST: '127.0.0.1',
        DATA_DIR: storage.dataDir,
        ...databaseEnv(storage),
        METRICS_PORT: String(portOf(taken)),
        LOG_LEVEL: 'silent',
      });
      await expect(startServer(config, pino({ level: 'silent' }))).rejects.toThrow(/EADDRINUSE/);
      for (const p of [port, httpPort]) await closed(await listening(p));
    } finally {
      await closed(taken);
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    }
  });

  it('without METRICS_PORT there is no metrics listener', async () => {
    const other = await startTestServer(engine);
    try {
      expect(other.config.metricsPort).toBeNull();
      expect(other.server.metricsPort).toBeNull();
    } finally {
      await other.close();
    }
  });

  it('connections open and refused by a cap, and requests cut by their timeout, are counted', async () => {
    const capped = await startTestServer(engine, {
      METRICS_PORT: '0',
      MAX_CONNECTIONS_PER_IP: '2',
      REQUEST_TIMEOUT_SECONDS: '1',
      HEADERS_TIMEOUT_SECONDS: '1',
    });
    const scrapeCapped = async () => await (await request(`http://127.0.0.1:${capped.server.metricsPort}/metrics`)).body.text();
    const sockets: tls.TLSSocket[] = [];
    const open = (localAddress: string) =>
      new Promise<tls.TLSSocket>((resolve, reject) => {
        const socket = tls.connect(
          Object.assign({ host: '127.0.0.1', port: capped.server.httpsPort, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }, { localAddress }),
        );
        sockets.push(socket);
        socket.once('secureConnect', () => resolve(socket));
        socket.once('error', reject);
      });
    try {
      await open('127.0.0.2');
      const stalled = await open('127.0.0.2');
      await expect(open('127.0.0.2')).rejects.toThrow();
      expect(sample(await scrapeCapped(), 'innsync_connections_refused_total', { limit: 'per-address' })).toBe(1);
      expect(sample(await scrapeCapped(), 'innsync_connections_open')).toBeGreaterThanOrEqual(2);
      // Headers that never finish are cut (408) and counted by code: both held connections,
      // the one that sent half a request line and the one that sent nothing.
      stalled.write('GET /healthz HTTP/1.1\r\n');
      await expect.poll(async () => sample(await scrapeCapped(), 'innsync_requests_cut_total', { code: 'REQUEST_TIMEOUT' })).toBe(2);
    } finally {
      for (const s of sockets) s.destroy();
      await capped.close();
    }
  });
});
