import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { packageVersion } from '../../src/package-info.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// README.md, "Probes": the probes, Cache-Control on API answers, and
// 405 for every method a known path does not serve.

describe.each(testEngines())('probes, caching and methods (%s)', (engine) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  it('GET /healthz answers 200 {"status":"ok","version"} and GET /readyz 200 {"status":"ok"} without a key, as often as asked (no rate limit), and are not written to the request log', async () => {
    // 120 probes, 10 at a time (one address may hold at most MAX_CONNECTIONS_PER_IP connections).
    const answers = [];
    for (let batch = 0; batch < 12; batch++) {
      answers.push(...(await Promise.all(Array.from({ length: 10 }, (_, i) => t.api('GET', i % 2 === 0 ? '/healthz' : '/readyz', { key: null })))));
    }
    for (const [i, a] of answers.entries()) {
      expect(a.status, a.text).toBe(200);
      expect(a.body).toEqual((i % 10) % 2 === 0 ? { status: 'ok', version: packageVersion() } : { status: 'ok' });
      expect(a.headers['cache-control']).toBe('no-store');
      expect(a.headers['x-ratelimit-limit']).toBeUndefined();
    }
    // The per-IP limit for requests without a key (100/min) was not touched by them.
    const unknown = await t.api('GET', '/no-such-path', { key: null });
    expect(unknown.status).toBe(404);
    expect(Number(unknown.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(98);
    await t.server.database.db
      .selectFrom('request_log')
      .select('id')
      .where('path', 'in', ['/healthz', '/readyz'])
      .execute()
      .then((rows) => expect(rows).toEqual([]));
  });

  it('the probes answer plain HTTP like everything else there, 403 HTTPS_REQUIRED', async () => {
    const res = await request(`${t.httpUrl}/healthz`);
    expect(res.statusCode).toBe(403);
    expect(((await res.body.json()) as { code: string }).code).toBe('HTTPS_REQUIRED');
  });

  it('every PMS API and dashboard API answer carries Cache-Control: no-store (personal data, fresh keys), errors and replays included', async () => {
    const base = `${t.pmsBase}`;
    const g = guest();
    const created = await t.post(`${base}/guests/checkin`, g, { idempotencyKey: 'cache-1' });
    const replay = await t.post(`${base}/guests/checkin`, g, { idempotencyKey: 'cache-1' });
    const list = await t.api('GET', `${base}/guests`);
    const unauthorized = await t.api('GET', `${base}/guests`, { key: null });
    const invalid = await t.post(`${base}/guests/checkin`, { ...guest(), roomNumber: '' });
    const session = await t.api('GET', '/dashboard/api/session', { key: null });
    expect([created.status, replay.status, list.status, unauthorized.status, invalid.status, session.status]).toEqual([200, 200, 200, 401, 422, 401]);
    for (const r of [created, replay, list, unauthorized, invalid, session]) expect(r.headers['cache-control']).toBe('no-store');
  });

  it.each(['TRACE', 'PROPFIND', 'PURGE', 'DELETE'])(
    '%s on a known path is 405 METHOD_NOT_ALLOWED naming the methods it serves; on an unknown path 404',
    async (method) => {
      const known = await t.api(method, `${t.pmsBase}/guests`, { key: null });
      expect(known.status, known.text).toBe(405);
      expect(known.body).toMatchObject({ status: 'error', code: 'METHOD_NOT_ALLOWED' });
      expect(known.headers.allow).toBe('GET, HEAD');
      const unknown = await t.api(method, '/no-such-path', { key: null });
      expect(unknown.status).toBe(404);
    },
  );
});
