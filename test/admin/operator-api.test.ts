import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperatorToken, revokeOperatorToken } from '../../src/admin/tokens.js';
import type { Db } from '../../src/db/database.js';
import { allHotels, findHotelBySlug } from '../../src/db/repositories/hotel.repository.js';
import { createHotel, createStaffUser, hotelBySlug } from '../../src/operations.js';
import { addEndpoint, setEnabled } from '../../src/webhooks/endpoints.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type RequestOptions, type TestServer } from '../support/harness.js';
import { expectRateLimitHeaders } from '../support/rate-limit-headers.js';
import { awaitLoggedForPair } from '../support/request-log.js';
import { DASHBOARD_API, STAFF_PASSWORD } from '../support/dashboard-client.js';

// docs/admin-api.md: the provisioning API for operators, through HTTPS: its operator
// tokens, its hotels routes, idempotency scoped to the token, its own request log and
// OpenAPI document; no operator token opens the PMS API or the dashboard, no PMS key opens it.

const ADMIN = '/api/admin/v1';

describe.each(testEngines())('the provisioning API /api/admin/v1 (%s)', (engine) => {
  let t: TestServer;
  let db: Db;
  let token: { tokenId: string; token: string };
  const admin = (method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse> =>
    t.api(method, `${ADMIN}${path}`, { key: token.token, ...opts });

  beforeAll(async () => {
    t = await startTestServer(engine);
    db = t.server.database.db;
    token = await createOperatorToken(db, 'provisioning test');
  });
  afterAll(() => t.close());

  it('POST /hotels creates a hotel (201, the envelope); its replay answers the same body with Idempotent-Replayed and creates one hotel', async () => {
    const key = uniqueKey();
    const body = { slug: `made-${engine}`, name: '  Made Here  ', timeZone: 'Europe/Lisbon' };
    const sentAt = Date.now();
    const first = await admin('POST', '/hotels', { body, idempotencyKey: key });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      status: 'ok',
      requestId: expect.stringMatching(/^req_/),
      hotel: { slug: body.slug, name: 'Made Here', timeZone: 'Europe/Lisbon', active: true, createdAt: expect.any(String) },
    });
    expectRateLimitHeaders(first, { limit: 120, windowSeconds: 60 }, sentAt);
    expect(first.headers['cache-control']).toBe('no-store');

    const replay = await admin('POST', '/hotels', { body, idempotencyKey: key });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual({ ...first.body, _idempotent: true });
    expect((await allHotels(db)).filter((h) => h.slug === body.slug)).toHaveLength(1);

    // The same key with another body is refused; another token's key of the same name is its own.
    const reused = await admin('POST', '/hotels', { body: { ...body, name: 'Other' }, idempotencyKey: key });
    expect([reused.status, reused.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    const other = await createOperatorToken(db, 'second');
    const own = await admin('POST', '/hotels', { key: other.token, body: { slug: `made-again-${engine}`, name: 'Again' }, idempotencyKey: key });
    expect([own.status, own.body.hotel?.timeZone]).toEqual([201, 'UTC']);
  });

  it('errors: 400 without Idempotency-Key, 409 SLUG_TAKEN, 422 for an unknown member, a bad slug, name or time zone (nothing created)', async () => {
    const missing = await admin('POST', '/hotels', { body: { slug: `no-key-${engine}`, name: 'No key' } });
    expect([missing.status, missing.body.code, missing.body.status]).toEqual([400, 'IDEMPOTENCY_KEY_REQUIRED', 'error']);

    const taken = await admin('POST', '/hotels', { body: { slug: t.slug, name: 'Again' }, idempotencyKey: uniqueKey() });
    expect([taken.status, taken.body.code]).toEqual([409, 'SLUG_TAKEN']);
    expect(taken.body.message).toContain('choose another slug');

    const unknown = await admin('POST', '/hotels', { body: { slug: `extra-${engine}`, name: 'Extra', stars: 4 }, idempotencyKey: uniqueKey() });
    expect([unknown.status, unknown.body.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(unknown.body.errors).toEqual([expect.objectContaining({ field: 'stars', code: 'UNKNOWN_FIELD' })]);

    const bad = await admin('POST', '/hotels', { body: { slug: 'Bad Slug', name: ' ', timeZone: 'Mars/Olympus' }, idempotencyKey: uniqueKey() });
    expect(bad.status).toBe(422);
    expect((bad.body.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual(['name', 'slug', 'timeZone']);
    const slugError = (bad.body.errors as Array<{ field: string; message: string }>).find((e) => e.field === 'slug');
    expect(slugError?.message).toContain('2-63 characters of a-z, 0-9 and "-", starting with a letter');
    expect(await findHotelBySlug(db, `extra-${engine}`)).toBeNull();
    expect(await findHotelBySlug(db, `no-key-${engine}`)).toBeNull();
  });

  it('401 UNAUTHORIZED, one answer for no token, a malformed, unknown, wrongly checksummed or revoked token and a PMS key; counted per client address', async () => {
    const revoked = await createOperatorToken(db, 'to revoke');
    expect((await admin('GET', '/hotels', { key: revoked.token })).status).toBe(200);
    await revokeOperatorToken(db, revoked.tokenId);
    const wrongSum = `${token.token.slice(0, -1)}${token.token.endsWith('A') ? 'B' : 'A'}`;
    const cases: Array<[string, string | null]> = [
      ['none', null],
      ['malformed', 'op_short'],
      ['unknown', `op_${'A'.repeat(38)}`],
      ['wrong checksum', wrongSum],
      ['revoked', revoked.token],
      ['a PMS live key', t.keys.live],
      ['a PMS test key', t.keys.test],
    ];
    const bodies = new Set<string>();
    let remaining = Infinity;
    for (const [name, key] of cases) {
      const res = await admin('GET', '/hotels', { key });
      expect([res.status, res.body.code], name).toEqual([401, 'UNAUTHORIZED']);
      expect(res.headers.ratelimit, name).toMatch(/^"unauthenticated";/);
      expect(Number(res.headers['x-ratelimit-remaining']), name).toBeLessThan(remaining);
      remaining = Number(res.headers['x-ratelimit-remaining']);
      const { requestId: _id, ...rest } = res.body as Record<string, unknown>;
      bodies.add(JSON.stringify(rest));
    }
    expect(bodies.size).toBe(1);
    expect([...bodies][0]).toContain('innsync operator token create');
  });

  it('an operator token opens neither the PMS API nor the dashboard', async () => {
    const pms = await t.api('GET', `${t.pmsBase}/guests`, { key: token.token });
    expect([pms.status, pms.body.code]).toEqual([401, 'UNAUTHORIZED']);
    const checkin = await t.post(`${t.pmsBase}/guests/checkin`, guest(), { key: token.token });
    expect([checkin.status, checkin.body.code]).toEqual([401, 'UNAUTHORIZED']);
    const dashboard = await t.api('GET', `${DASHBOARD_API}/guests`, { key: token.token });
    expect([dashboard.status, dashboard.body.code]).toEqual([401, 'NOT_AUTHENTICATED']);
  });

  it('GET /hotels/{slug}: the usage summary after a check-in, a refused checkout, a staff account and webhook endpoints; 404 UNKNOWN_HOTEL', async () => {
    expect((await t.post(`${t.pmsBase}/guests/checkin`, guest())).status).toBe(200);
    expect((await t.post(`${t.pmsBase}/guests/checkout`, { pmsGuestId: 'never-here' })).status).toBe(404);
    await awaitLoggedForPair(db, t.keys.keyId, 2);
    // Another hotel's guests and requests are not this hotel's.
    const other = await t.addHotel(`usage-other-${engine}`);
    expect((await t.post(`/api/pms/v1/usage-other-${engine}/guests/checkin`, guest(), { key: other.live })).status).toBe(200);
    await awaitLoggedForPair(db, other.keyId, 1);
    await createStaffUser(db, t.slug, `admin-${engine}@example.org`, 'admin', STAFF_PASSWORD);
    const hotel = await hotelBySlug(db, t.slug);
    const rules = { allowPrivateNetworks: true, maxEndpointsPerHotel: 10 };
    await addEndpoint(db, hotel.id, { url: 'https://hooks.example.org/a' }, rules);
    const off = await addEndpoint(db, hotel.id, { url: 'https://hooks.example.org/b' }, rules);
    await setEnabled(db, hotel.id, off.endpointId, false);

    const res = await admin('GET', `/hotels/${t.slug}`);
    expect(res.status).toBe(200);
    expect(res.body.hotel).toMatchObject({ slug: t.slug, name: 'Test Hotel', timeZone: 'UTC', active: true });
    expect(res.body.hotel.usage).toEqual({
      guestsInHouse: 1,
      pmsRequests24h: { '2xx': 1, '4xx': 1, '5xx': 0 },
      lastPmsRequestAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      activeKeyPairs: 1,
      activeStaffAccounts: 1,
      webhookEndpoints: { enabled: 1, disabled: 1 },
    });

    const unknown = await admin('GET', '/hotels/no-such-hotel');
    expect([unknown.status, unknown.body.code]).toEqual([404, 'UNKNOWN_HOTEL']);
  });

  it('PATCH /hotels/{slug} changes the name and time zone; 404 for an unknown slug, 422 for an unknown member', async () => {
    const slug = `patched-${engine}`;
    await createHotel(db, slug, 'Before');
    const res = await admin('PATCH', `/hotels/${slug}`, { body: { name: 'After', timeZone: 'Asia/Tokyo' } });
    expect(res.status).toBe(200);
    expect(res.body.hotel).toMatchObject({ slug, name: 'After', timeZone: 'Asia/Tokyo', active: true });
    expect((await admin('GET', `/hotels/${slug}`)).body.hotel).toMatchObject({ name: 'After', timeZone: 'Asia/Tokyo' });
    const nameOnly = await admin('PATCH', `/hotels/${slug}`, { body: { name: 'Renamed' } });
    expect(nameOnly.body.hotel).toMatchObject({ name: 'Renamed', timeZone: 'Asia/Tokyo' });

    const unknown = await admin('PATCH', '/hotels/no-such-hotel', { body: { name: 'X' } });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'UNKNOWN_HOTEL']);
    const extra = await admin('PATCH', `/hotels/${slug}`, { body: { slug: 'renamed' } });
    expect([extra.status, extra.body.code, extra.body.errors?.[0]?.field]).toEqual([422, 'VALIDATION_ERROR', 'slug']);
  });

  it('GET /hotels pages through 250 more hotels, 100 at a time: every hotel once, by slug; bad limits, cursors and parameters are 422', async () => {
    for (let i = 0; i < 250; i++) await createHotel(db, `page-${engine}-${String(i).padStart(3, '0')}`, `Hotel ${i}`);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: ApiResponse = await admin('GET', `/hotels?limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.hotels.length).toBeLessThanOrEqual(100);
      seen.push(...(res.body.hotels as Array<{ slug: string }>).map((h) => h.slug));
      cursor = res.body.nextCursor;
      pages++;
    } while (cursor !== null && pages < 10);
    const all = (await allHotels(db)).map((h) => h.slug);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((s) => s.startsWith(`page-${engine}-`))).toHaveLength(250);
    expect(pages).toBe(Math.ceil(all.length / 100));

    expect((await admin('GET', '/hotels')).body.hotels).toHaveLength(50);
    for (const query of ['limit=0', 'limit=201', 'limit=ten', 'cursor=not-a-cursor!', 'sort=name']) {
      const res = await admin('GET', `/hotels?${query}`);
      expect([res.status, res.body.code], query).toEqual([422, 'VALIDATION_ERROR']);
    }
  });

  it('plain HTTP is 403 HTTPS_REQUIRED; unknown paths and methods: 404 NOT_FOUND and 405 METHOD_NOT_ALLOWED', async () => {
    const plain = await request(`${t.httpUrl}${ADMIN}/hotels`, { headers: { authorization: `Bearer ${token.token}` } });
    expect([plain.statusCode, ((await plain.body.json()) as { code: string }).code]).toEqual([403, 'HTTPS_REQUIRED']);
    const missing = await admin('GET', `/nothing-here/${'x'.repeat(300)}?q=1`);
    expect([missing.status, missing.body.code]).toEqual([404, 'NOT_FOUND']);
    const method = await admin('DELETE', '/hotels');
    expect([method.status, method.body.code]).toEqual([405, 'METHOD_NOT_ALLOWED']);
  });

  it('the per-token limit: the request after 120 in a minute is 429 with Retry-After; another token is not limited by it', async () => {
    const busy = await createOperatorToken(db, 'busy');
    for (let sent = 0; sent < 120; sent += 20) {
      const answers = await Promise.all(Array.from({ length: 20 }, () => admin('GET', '/hotels?limit=1', { key: busy.token })));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    }
    const refused = await admin('GET', '/hotels?limit=1', { key: busy.token });
    expect([refused.status, refused.body.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await admin('GET', '/hotels?limit=1')).status).toBe(200);
  });

  it('GET /openapi.json: its own document (every route, with examples), answered to a token only; the PMS document has no admin path', async () => {
    const res = await admin('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body as { openapi: string; paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>> };
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/admin/v1/hotels', '/api/admin/v1/hotels/{slug}']);
    expect(Object.keys(doc.paths['/api/admin/v1/hotels'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/api/admin/v1/hotels/{slug}'] ?? {}).sort()).toEqual(['get', 'patch']);
    expect(JSON.stringify(doc.paths['/api/admin/v1/hotels']?.post?.requestBody)).toContain('seaside-inn');
    expect(JSON.stringify(doc.paths['/api/admin/v1/hotels']?.post?.responses['409'])).toContain('SLUG_TAKEN');
    const refused = await admin('GET', '/hotels', { key: null });
    expect(JSON.stringify(doc.paths['/api/admin/v1/hotels']?.get?.responses['401'])).toContain(JSON.stringify(refused.body.message));
    expect((await admin('GET', '/openapi.json', { key: null })).status).toBe(401);
    const pms = await t.api('GET', '/api/pms/v1/openapi.json', { key: null });
    expect(Object.keys(pms.body.paths as object).filter((p) => p.startsWith('/api/admin'))).toEqual([]);
  });

  it('every request is in the operator request log (route pattern, token, no bodies), none in the request log of a hotel', async () => {
    await expect
      .poll(async () => (await db.selectFrom('operator_request_log').select('id').where('route', '=', '/api/admin/v1/hotels/:slug').execute()).length)
      .toBeGreaterThan(0);
    const rows = await db.selectFrom('operator_request_log').selectAll().execute();
    expect(rows.some((r) => r.token_id === token.tokenId && r.method === 'PATCH' && Number(r.status) === 200)).toBe(true);
    expect(rows.some((r) => r.token_id === null && Number(r.status) === 401)).toBe(true);
    expect(rows.filter((r) => Number(r.status) === 404 && r.route.startsWith(`${ADMIN}/nothing-here/`)).map((r) => r.route.length)).toEqual([200]);
    expect(Object.keys(rows[0] ?? {}).sort()).toEqual(['at', 'client_ip', 'duration_ms', 'id', 'method', 'route', 'status', 'token_id']);
    const hotelRows = await db.selectFrom('request_log').select('path').where('path', 'like', '/api/admin%').execute();
    expect(hotelRows).toEqual([]);
  });
});
