import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type TestServer } from '../support/harness.js';
import { expectRateLimitHeaders, firstInFreshWindow } from '../support/rate-limit-headers.js';

const MINUTE = { windowSeconds: 60 };
const HOUR = { windowSeconds: 3600 };

describe.each(testEngines())('rate limits per key and endpoint (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
  });
  afterAll(() => t.close());

  const freshPair = (): Promise<IssuedKeyPair> => issueKeyPair(t.server.database.db, t.slug);
  const checkin = (key: string, body: unknown = guest()): Promise<ApiResponse> => t.post(`${base}/guests/checkin`, body, { key });
  const list = (key: string): Promise<ApiResponse> => t.api('GET', `${base}/guests`, { key });
  /** A valid, empty sync; used with test keys only, so that it changes nothing once sync is implemented. */
  const sync = (key: string): Promise<ApiResponse> => t.post(`${base}/guests/sync`, { syncMode: 'full', guests: [] }, { key });
  /** A sync refused by validation (422): counted (the limit is checked first), never applied. */
  const invalidSync = (key: string): Promise<ApiResponse> => t.post(`${base}/guests/sync`, { syncMode: 'partial', guests: [] }, { key });
  /** A served sync. */
  const SYNC_SERVED = [200];

  /** Sends `n` requests in sequence, asserting each is served and Remaining counts down from `firstRemaining`. */
  async function spend(
    n: number,
    firstRemaining: number,
    send: () => Promise<ApiResponse>,
    limit: number,
    okStatus: number | number[] = 200,
    window = MINUTE,
  ): Promise<void> {
    const ok = Array.isArray(okStatus) ? okStatus : [okStatus];
    for (let i = 0; i < n; i++) {
      const sentAt = Date.now();
      const res = await send();
      expect(ok, `request ${i + 1}: ${res.status} ${res.text}`).toContain(res.status);
      const rl = expectRateLimitHeaders(res, { limit, ...window }, sentAt);
      expect(rl.remaining).toBe(firstRemaining - i);
    }
  }

  function expectRateLimited(res: ApiResponse, limit: number, windowSeconds: number, sentAtMs: number): void {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      status: 'error',
      code: 'RATE_LIMITED',
      message: expect.any(String),
      requestId: expect.stringMatching(/^req_/),
      retryAfter: expect.any(Number),
    });
    const retryAfter = res.body.retryAfter as number;
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
    expect(res.headers['retry-after']).toBe(String(retryAfter));
    const rl = expectRateLimitHeaders(res, { limit, windowSeconds }, sentAtMs);
    expect(rl.remaining).toBe(0);
    // Retry-After points at the window's end that X-RateLimit-Reset names.
    expect(rl.reset - retryAfter).toBeGreaterThanOrEqual(Math.floor(sentAtMs / 1000) - 1);
    expect(rl.reset - retryAfter).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
  }

  it('the 61st check-in of a key in one window is 429 RATE_LIMITED with retryAfter = Retry-After, and is not processed', async () => {
    const pair = await freshPair();
    const { res: first, sentAtMs } = await firstInFreshWindow(() => checkin(pair.live));
    expect(first.status).toBe(200);
    expect(expectRateLimitHeaders(first, { limit: 60, ...MINUTE }, sentAtMs).remaining).toBe(59);
    await spend(59, 58, () => checkin(pair.live), 60);

    const refused = guest();
    const sentAt = Date.now();
    const res = await checkin(pair.live, refused);
    expectRateLimited(res, 60, 60, sentAt);
    expect(res.body.requestId).toMatch(/^req_(?!test_)/);
    // Still refused, and nothing was written.
    expect((await checkin(pair.live)).status).toBe(429);
    const stored = await t.server.database.db.selectFrom('guests').select('id').where('pms_guest_id', '=', String(refused.pmsGuestId)).execute();
    expect(stored).toEqual([]);
  });

  it('a test key has the same limit, and its 429 carries a req_test_ id', async () => {
    const pair = await freshPair();
    const { res: first } = await firstInFreshWindow(() => checkin(pair.test));
    expect(first.status).toBe(200);
    await spend(59, 58, () => checkin(pair.test), 60);
    const sentAt = Date.now();
    const res = await checkin(pair.test);
    expectRateLimited(res, 60, 60, sentAt);
    expect(res.body.requestId).toMatch(/^req_test_/);
  });

  it('every response carries X-RateLimit-* and the IETF RateLimit fields of the limit it counted against (200, 400, 404, 415, 422, 401, 405, 429)', async () => {
    const pair = await freshPair();
    const { res: first, sentAtMs } = await firstInFreshWindow(() => list(pair.live));
    const cases: Array<[string, number, ApiResponse, { limit: number; windowSeconds: number }, number]> = [];
    cases.push(['GET /guests 200', 200, first, { limit: 30, ...MINUTE }, sentAtMs]);
    const at = async (name: string, status: number, limit: { limit: number; windowSeconds: number }, send: () => Promise<ApiResponse>) => {
      const sentAt = Date.now();
      cases.push([name, status, await send(), limit, sentAt]);
    };
    await at('check-in 200', 200, { limit: 60, ...MINUTE }, () => checkin(pair.live));
    await at('check-in 422', 422, { limit: 60, ...MINUTE }, () => checkin(pair.live, guest({ roomNo: '1' })));
    await at('check-in 422 date', 422, { limit: 60, ...MINUTE }, () => checkin(pair.live, guest({ checkInDate: '2026-02-30' })));
    await at('check-in 400 no Idempotency-Key', 400, { limit: 60, ...MINUTE }, () =>
      t.api('POST', `${base}/guests/checkin`, { key: pair.live, body: guest() }),
    );
    await at('check-in 400 invalid JSON', 400, { limit: 60, ...MINUTE }, () =>
      t.api('POST', `${base}/guests/checkin`, { key: pair.live, rawBody: '{', idempotencyKey: uniqueKey(), headers: { 'content-type': 'application/json' } }),
    );
    await at('check-in 415', 415, { limit: 60, ...MINUTE }, () =>
      t.api('POST', `${base}/guests/checkin`, { key: pair.live, rawBody: 'x', idempotencyKey: uniqueKey(), headers: { 'content-type': 'text/plain' } }),
    );
    await at('update 404 GUEST_NOT_FOUND', 404, { limit: 60, ...MINUTE }, () =>
      t.post(`${base}/guests/update`, { pmsGuestId: 'nobody', firstName: 'X' }, { key: pair.live }),
    );
    await at('checkout 404 GUEST_NOT_FOUND', 404, { limit: 60, ...MINUTE }, () =>
      t.post(`${base}/guests/checkout`, { pmsGuestId: 'nobody' }, { key: pair.live }),
    );
    await at('GET /guests 422 unknown query', 422, { limit: 30, ...MINUTE }, () => t.api('GET', `${base}/guests?room=1`, { key: pair.live }));
    await at('sync 422', 422, { limit: 10, ...HOUR }, () => invalidSync(pair.live));
    // Not attributed to a valid key: the per-IP limit.
    await at('unknown path 404', 404, { limit: 100, ...MINUTE }, () => t.api('GET', `${base}/nothing-here`, { key: pair.live }));
    await at('unknown path 404 outside the API', 404, { limit: 100, ...MINUTE }, () => t.api('GET', '/no/such/path', { key: null }));
    await at('malformed URL 404', 404, { limit: 100, ...MINUTE }, () => t.api('GET', '/api/pms/v1/%zz/guests', { key: pair.live }));
    await at('wrong method 405', 405, { limit: 100, ...MINUTE }, () => t.api('DELETE', `${base}/guests`, { key: pair.live }));
    await at('401', 401, { limit: 100, ...MINUTE }, () => list('pms_live_nonexistentnonexistent'));
    await at('401 on POST', 401, { limit: 100, ...MINUTE }, () => checkin('pms_live_nonexistentnonexistent'));
    // A 429: exhaust this pair's GET /guests limit (30; the two GETs above counted).
    for (let i = 0; i < 28; i++) expect((await list(pair.live)).status).toBe(200);
    await at('GET /guests 429', 429, { limit: 30, ...MINUTE }, () => list(pair.live));

    for (const [name, status, res, limit, sentAt] of cases) {
      expect({ name, status: res.status }).toEqual({ name, status });
      expect(res.headers['content-type'], name).toMatch(/^application\/json/);
      expectRateLimitHeaders(res, limit, sentAt);
    }
    // Each request counted once against its own limit: the check-in counter saw 7 requests.
    const checkinRemaining = cases.filter(([n]) => n.startsWith('check-in')).map(([, , r]) => Number(r.headers['x-ratelimit-remaining']));
    expect(checkinRemaining).toEqual([59, 58, 57, 56, 55, 54]);
  });

  it('GET /guests allows 30 requests per minute per key; the 31st is 429', async () => {
    const pair = await freshPair();
    const { res: first, sentAtMs } = await firstInFreshWindow(() => list(pair.live));
    expect(first.status).toBe(200);
    expect(expectRateLimitHeaders(first, { limit: 30, ...MINUTE }, sentAtMs).remaining).toBe(29);
    await spend(29, 28, () => list(pair.live), 30);
    const sentAt = Date.now();
    expectRateLimited(await list(pair.live), 30, 60, sentAt);
  });

  it('sync allows 10 requests per hour per key; the 11th is 429', async () => {
    const pair = await freshPair();
    const { res: first, sentAtMs } = await firstInFreshWindow(() => sync(pair.test));
    expect(SYNC_SERVED).toContain(first.status);
    expect(expectRateLimitHeaders(first, { limit: 10, ...HOUR }, sentAtMs).remaining).toBe(9);
    await spend(9, 8, () => sync(pair.test), 10, SYNC_SERVED, HOUR);
    const sentAt = Date.now();
    const res = await sync(pair.test);
    expectRateLimited(res, 10, 3600, sentAt);
    expect(res.body.requestId).toMatch(/^req_test_/);
    // Checked before validation: a broken sync body is also refused with 429 now.
    expect((await invalidSync(pair.test)).status).toBe(429);
    // The live key of the pair has its own hourly budget.
    const live = await invalidSync(pair.live);
    expect(live.status).toBe(422);
    expect(live.headers['x-ratelimit-limit']).toBe('10');
    expect(live.headers['x-ratelimit-remaining']).toBe('9');
  });

  it('sync requests refused by validation count too: the 11th invalid sync of a key is 429, not 422', async () => {
    const pair = await freshPair();
    const { res: first } = await firstInFreshWindow(() => invalidSync(pair.live));
    expect(first.status).toBe(422);
    await spend(9, 8, () => invalidSync(pair.live), 10, 422, HOUR);
    const sentAt = Date.now();
    expectRateLimited(await invalidSync(pair.live), 10, 3600, sentAt);
  });

  it('each endpoint has its own counter; an exhausted check-in limit leaves update, checkout, GET and sync untouched', async () => {
    const pair = await freshPair();
    const { res: first } = await firstInFreshWindow(() => checkin(pair.live));
    expect(first.status).toBe(200);
    const g = guest();
    expect((await checkin(pair.live, g)).status).toBe(200);
    await spend(58, 57, () => checkin(pair.live), 60);
    expect((await checkin(pair.live)).status).toBe(429);

    const update = await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, firstName: 'Grace' }, { key: pair.live });
    expect(update.status).toBe(200);
    expect(update.headers['x-ratelimit-limit']).toBe('60');
    expect(update.headers['x-ratelimit-remaining']).toBe('59');
    const out = await t.post(`${base}/guests/checkout`, { pmsGuestId: g.pmsGuestId }, { key: pair.live });
    expect(out.status).toBe(200);
    expect(out.headers['x-ratelimit-remaining']).toBe('59');
    const get = await list(pair.live);
    expect(get.status).toBe(200);
    expect(get.headers['x-ratelimit-limit']).toBe('30');
    expect(get.headers['x-ratelimit-remaining']).toBe('29');
    const s = await invalidSync(pair.live);
    expect(s.status).toBe(422);
    expect(s.headers['x-ratelimit-remaining']).toBe('9');
    // The policy names differ per endpoint.
    const names = new Set([first, update, out, get, s].map((r) => r.headers['ratelimit-policy']?.split(';')[0]));
    expect(names.size).toBe(5);
  });

  it('the live and the test key of one pair count separately, and so do two pairs of one hotel', async () => {
    const pair = await freshPair();
    const other = await freshPair();
    const { res: first } = await firstInFreshWindow(() => checkin(pair.live));
    expect(first.status).toBe(200);
    await spend(59, 58, () => checkin(pair.live), 60);
    expect((await checkin(pair.live)).status).toBe(429);

    const test = await checkin(pair.test);
    expect(test.status).toBe(200);
    expect(test.headers['x-ratelimit-remaining']).toBe('59');
    const otherLive = await checkin(other.live);
    expect(otherLive.status).toBe(200);
    expect(otherLive.headers['x-ratelimit-remaining']).toBe('59');
    // The live key stays refused.
    expect((await checkin(pair.live)).status).toBe(429);
  });
});

describe.each(testEngines())('per-IP limit for requests without a valid key (%s)', (engine) => {
  // Its own server: this test spends the whole per-IP budget of 127.0.0.1.
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
  });
  afterAll(() => t.close());

  it('the 101st failed-auth request from one IP in a minute is 429; a request with a valid key is still served', async () => {
    const bad = 'pms_live_guessedguessedguessed';
    const { res: first, sentAtMs } = await firstInFreshWindow(() => t.api('GET', `${base}/guests`, { key: bad }));
    expect(first.status).toBe(401);
    expect(expectRateLimitHeaders(first, { limit: 100, windowSeconds: 60 }, sentAtMs).remaining).toBe(99);

    // Valid requests do not spend the per-IP budget.
    for (let i = 0; i < 3; i++) expect((await t.api('GET', `${base}/guests`)).status).toBe(200);

    const senders: Array<() => Promise<ApiResponse>> = [
      () => t.api('GET', `${base}/guests`, { key: bad }),
      () => t.api('GET', `${base}/guests`, { key: null }),
      () => t.post(`${base}/guests/checkin`, guest(), { key: bad }),
      () => t.api('GET', `/api/pms/v1/no-such-hotel/guests`, { key: t.keys.live }),
    ];
    for (let i = 1; i < 100; i++) {
      const res = await senders[i % senders.length]!();
      expect(res.status).toBe(401);
      expect(res.headers['x-ratelimit-limit']).toBe('100');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(99 - i));
    }
    const sentAt = Date.now();
    const limited = await t.api('GET', `${base}/guests`, { key: bad });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ status: 'error', code: 'RATE_LIMITED', requestId: expect.stringMatching(/^req_/) });
    expect(limited.headers['retry-after']).toBe(String(limited.body.retryAfter));
    expect(Number.isInteger(limited.body.retryAfter)).toBe(true);
    expect(expectRateLimitHeaders(limited, { limit: 100, windowSeconds: 60 }, sentAt).remaining).toBe(0);
    // Unknown paths count against the same budget.
    expect((await t.api('GET', '/no/such/path', { key: null })).status).toBe(429);

    // A valid key from the same IP is never refused by the per-IP limit.
    const ok = await t.api('GET', `${base}/guests`);
    expect(ok.status).toBe(200);
    expect(ok.headers['x-ratelimit-limit']).toBe('30');
    const write = await t.post(`${base}/guests/checkin`, guest(), { key: t.keys.test });
    expect(write.status).toBe(200);
    expect(write.headers['x-ratelimit-limit']).toBe('60');
  });
});
