import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { issueKeyPair } from '../../src/operations.js';
import { addStaffUser, DashboardClient, eventually, STAFF_PASSWORD, type DashboardResponse } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';

// docs/dashboard.md: CSRF on every write, roles, staff users, API keys and the
// request-log explorer, through real HTTPS requests on both engines.

const walkIn = (over: Record<string, unknown> = {}) => ({
  lastName: 'Walker',
  firstName: 'Jo',
  roomNumber: 'W1',
  checkInDate: '2026-11-23',
  checkOutDate: '2026-11-25',
  ...over,
});

describe.each(testEngines())('dashboard JSON API: CSRF, roles, users, keys, request log (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let admin: { id: string; email: string };
  let desk: { id: string; email: string };
  let adminClient: DashboardClient;
  let deskClient: DashboardClient;
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    admin = await addStaffUser(db(), t.slug, `admin-${engine}@api.example`, 'admin');
    desk = await addStaffUser(db(), t.slug, `desk-${engine}@api.example`, 'receptionist');
    adminClient = await DashboardClient.loggedIn(t, admin.email);
    deskClient = await DashboardClient.loggedIn(t, desk.email);
  });
  afterAll(() => t.close());

  /** Everything a dashboard write could change. */
  async function snapshot() {
    const d = db();
    return {
      guests: await d.selectFrom('guests').select(['id', 'status', 'room_number', 'last_name', 'phone', 'updated_at']).orderBy('id').execute(),
      rooms: await d.selectFrom('room_assignments').select(['id', 'room_number', 'released_at']).orderBy('id').execute(),
      keys: await d.selectFrom('api_keys').select(['id', 'revoked_at']).orderBy('id').execute(),
      users: await d.selectFrom('staff_users').select(['id', 'email', 'role', 'deactivated_at']).orderBy('id').execute(),
      sessions: await d.selectFrom('staff_sessions').select('id').orderBy('id').execute(),
      activity: await d.selectFrom('activity_log').select('id').orderBy('id').execute(),
    };
  }

  it("docs/dashboard.md Security CSRF: every state-changing route with a valid cookie but no, a wrong or another session's X-CSRF-Token is 403 CSRF_REJECTED and changes nothing; with the token it succeeds", async () => {
    const client = await DashboardClient.loggedIn(t, admin.email);
    const created = await client.post('/guests', walkIn({ roomNumber: 'CSRF-1' }));
    expect(created.status).toBe(201);
    const guestId = created.body.guest.id as string;
    const pair = await issueKeyPair(db(), t.slug);
    const user = await addStaffUser(db(), t.slug, `csrf-target-${engine}@api.example`, 'receptionist');

    const routes: Array<[string, string, unknown]> = [
      ['POST', '/guests', walkIn({ roomNumber: 'CSRF-2', lastName: 'Forged' })],
      ['PATCH', `/guests/${guestId}`, { roomNumber: 'CSRF-3', phone: '+4930111111' }],
      ['POST', `/guests/${guestId}/checkout`, {}],
      ['POST', '/keys', undefined],
      ['POST', `/keys/${pair.keyId}/revoke`, undefined],
      ['POST', '/users', { email: `forged-${engine}@api.example`, role: 'admin', password: STAFF_PASSWORD }],
      ['POST', `/users/${user.id}/deactivate`, undefined],
      ['POST', '/logout', undefined],
    ];
    const before = await snapshot();
    for (const [method, p, body] of routes) {
      for (const csrf of [null, '', 'wrong-token', `${client.csrfToken ?? ''}x`, adminClient.csrfToken]) {
        const res = await client.api(method, p, { body, csrf });
        expect(res.status, `${method} ${p} csrf=${String(csrf)}`).toBe(403);
        expect(res.body).toMatchObject({ status: 'error', code: 'CSRF_REJECTED', requestId: expect.any(String) });
      }
    }
    expect(await snapshot()).toEqual(before);
    // The forged logout did not end the session either.
    expect((await client.get('/session')).status).toBe(200);

    const expected = [201, 200, 200, 201, 200, 201, 200, 200];
    for (const [i, [method, p, body]] of routes.entries()) {
      const res = await client.api(method, p, { body });
      expect(res.status, `${method} ${p}: ${res.text}`).toBe(expected[i]);
    }
    const after = await snapshot();
    expect(after.guests.find((g) => g.id === guestId)).toMatchObject({ status: 'checked_out', room_number: 'CSRF-3', phone: '+4930111111' });
    expect(after.guests.some((g) => g.last_name === 'Forged' && g.status === 'active')).toBe(true);
    expect(after.keys.filter((k) => k.id.startsWith(pair.keyId)).every((k) => k.revoked_at !== null)).toBe(true);
    expect(after.keys.length).toBe(before.keys.length + 2);
    expect(after.users.find((u) => u.id === user.id)?.deactivated_at).not.toBeNull();
    expect(after.users.some((u) => u.email === `forged-${engine}@api.example`)).toBe(true);
    expect((await client.get('/session')).status).toBe(401);
  });

  it('docs/dashboard.md JSON API: a role check that fails answers 403 FORBIDDEN: a receptionist on /keys, /requests and /users (GET and POST) changes nothing; an admin gets 200', async () => {
    const pair = await issueKeyPair(db(), t.slug);
    const other = await addStaffUser(db(), t.slug, `role-target-${engine}@api.example`, 'receptionist');
    const before = await snapshot();
    const attempts: Array<[string, string, unknown]> = [
      ['GET', '/keys', undefined],
      ['POST', '/keys', undefined],
      ['POST', `/keys/${pair.keyId}/revoke`, undefined],
      ['GET', '/requests', undefined],
      ['GET', '/requests/req_anything', undefined],
      ['GET', '/users', undefined],
      ['POST', '/users', { email: `sneaky-${engine}@api.example`, role: 'admin', password: STAFF_PASSWORD }],
      ['POST', `/users/${other.id}/deactivate`, undefined],
      ['POST', `/users/${desk.id}/deactivate`, undefined],
    ];
    for (const [method, p, body] of attempts) {
      const res = await deskClient.api(method, p, { body });
      expect(res.status, `${method} ${p}`).toBe(403);
      expect(res.body).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
    }
    expect(await snapshot()).toEqual(before);
    // The pair still works.
    expect((await t.api('GET', `${base}/guests`, { key: pair.live })).status).toBe(200);

    for (const p of ['/keys', '/requests', '/users']) expect((await adminClient.get(p)).status, p).toBe(200);
    // A receptionist has every staff route.
    for (const p of ['/session', '/guests', '/activity']) expect((await deskClient.get(p)).status, p).toBe(200);
  });

  it('docs/dashboard.md JSON API /users: POST creates a receptionist (e-mail lower-cased) who can log in; GET lists it; a duplicate e-mail in the same hotel, any case, is 409 EMAIL_TAKEN; at another hotel it is a separate account', async () => {
    const email = `New.Desk-${engine}@API.example`;
    const res = await adminClient.post('/users', { email, role: 'receptionist', password: 'a-new-password-1' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user: { id: expect.any(String), email: email.toLowerCase(), role: 'receptionist', createdAt: expect.any(String), deactivatedAt: null },
    });
    const listed = await adminClient.get('/users');
    expect(listed.body.users).toContainEqual(res.body.user);
    expect(listed.body.users).toContainEqual({ id: admin.id, email: admin.email, role: 'admin', createdAt: expect.any(String), deactivatedAt: null });

    const newcomer = new DashboardClient(t);
    const login = await newcomer.login(email, 'a-new-password-1');
    expect(login.status).toBe(200);
    expect(login.body.user).toEqual({ id: res.body.user.id, email: email.toLowerCase(), role: 'receptionist' });
    expect(login.body.hotel.slug).toBe(t.slug);
    expect((await newcomer.get('/users')).status).toBe(403);

    for (const dup of [email, email.toUpperCase(), email.toLowerCase()]) {
      const again = await adminClient.post('/users', { email: dup, role: 'admin', password: 'another-password-2' });
      expect(again.status, dup).toBe(409);
      expect(again.body.code).toBe('EMAIL_TAKEN');
    }
    // E-mails are unique per hotel (README.md, Personal data): another hotel's e-mail is a separate account here.
    const otherSlug = `users-other-${engine}`;
    await t.addHotel(otherSlug);
    const foreign = await addStaffUser(db(), otherSlug, `foreign-${engine}@api.example`, 'admin');
    const twin = await adminClient.post('/users', { email: foreign.email, role: 'receptionist', password: 'another-password-2' });
    expect(twin.status).toBe(201);
    const rows = await db().selectFrom('staff_users').select('hotel_id').where('email', 'in', [email.toLowerCase(), foreign.email]).execute();
    expect(rows).toHaveLength(3);
  });

  it('docs/dashboard.md JSON API POST /users: field rules name the field (email, role, password)', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ email: 'not-an-email', role: 'receptionist', password: STAFF_PASSWORD }, 'email'],
      [{ email: `rule-${engine}@api.example`, role: 'owner', password: STAFF_PASSWORD }, 'role'],
      [{ email: `rule-${engine}@api.example`, role: 'receptionist', password: 'short' }, 'password'],
      [{ email: `rule-${engine}@api.example`, role: 'receptionist' }, 'password'],
    ];
    for (const [body, field] of cases) {
      const res = await adminClient.post('/users', body);
      expect(res.status, field).toBe(422);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect(await db().selectFrom('staff_users').select('id').where('email', '=', `rule-${engine}@api.example`).execute()).toEqual([]);
  });

  it('docs/dashboard.md JSON API POST /users/:id/deactivate: deactivating yourself is 409 CANNOT_DEACTIVATE_SELF; another user 200 (again: unchanged); an unknown id 404 RECORD_NOT_FOUND', async () => {
    const self = await adminClient.post(`/users/${admin.id}/deactivate`);
    expect(self.status).toBe(409);
    expect(self.body.code).toBe('CANNOT_DEACTIVATE_SELF');
    expect((await adminClient.get('/session')).status).toBe(200);
    expect((await db().selectFrom('staff_users').select('deactivated_at').where('id', '=', admin.id).executeTakeFirstOrThrow()).deactivated_at).toBeNull();

    const leaver = await addStaffUser(db(), t.slug, `leaver-${engine}@api.example`, 'receptionist');
    const first = await adminClient.post(`/users/${leaver.id}/deactivate`);
    expect(first.status).toBe(200);
    expect(first.body.user).toEqual({
      id: leaver.id,
      email: leaver.email,
      role: 'receptionist',
      createdAt: expect.any(String),
      deactivatedAt: expect.any(String),
    });
    const second = await adminClient.post(`/users/${leaver.id}/deactivate`);
    expect(second.status).toBe(200);
    expect(second.body.user.deactivatedAt).toBe(first.body.user.deactivatedAt);
    const listed = (await adminClient.get('/users')).body.users as Array<{ id: string; deactivatedAt: string | null }>;
    expect(listed.find((u) => u.id === leaver.id)?.deactivatedAt).toBe(first.body.user.deactivatedAt);

    const unknown = await adminClient.post('/users/user_doesnotexist/deactivate');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('RECORD_NOT_FOUND');
  });

  it('docs/dashboard.md JSON API /keys: POST issues a live and a test key that work on the PMS API; GET lists the pair with lastUsedAt after use; revoke makes both keys 401', async () => {
    const issued = await adminClient.post('/keys');
    expect(issued.status).toBe(201);
    expect(issued.body).toEqual({
      keyId: expect.any(String),
      live: expect.stringMatching(/^pms_live_[0-9A-Za-z]{38}$/),
      test: expect.stringMatching(/^pms_test_[0-9A-Za-z]{38}$/),
    });
    const { keyId, live, test } = issued.body as { keyId: string; live: string; test: string };

    const listed = (await adminClient.get('/keys')).body.keys as Array<Record<string, unknown>>;
    expect(listed).toContainEqual({
      keyId,
      createdAt: expect.any(String),
      revokedAt: null,
      lastUsedAt: null,
      networks: null,
      expiresOn: null,
      readOnly: false,
    });
    // The plain keys are shown this once: the list never has them.
    expect(JSON.stringify(listed)).not.toContain(live.slice(9));

    const liveList = await t.api('GET', `${base}/guests`, { key: live });
    expect(liveList.status).toBe(200);
    const testList = await t.api('GET', `${base}/guests`, { key: test });
    expect(testList.status).toBe(200);
    expect(testList.body.requestId).toMatch(/^req_test_/);
    const checkin = await t.post(`${base}/guests/checkin`, guest(), { key: live });
    expect(checkin.status).toBe(200);

    // Last use is written in batches off the request path.
    const used = await eventually(async () => {
      const keys = (await adminClient.get('/keys')).body.keys as Array<{ keyId: string; lastUsedAt: string | null }>;
      const mine = keys.find((k) => k.keyId === keyId);
      return mine?.lastUsedAt ? mine : undefined;
    });
    expect(Date.parse(used.lastUsedAt ?? '')).not.toBeNaN();

    const revoked = await adminClient.post(`/keys/${keyId}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ keyId, revoked: true });
    const after = ((await adminClient.get('/keys')).body.keys as Array<{ keyId: string; revokedAt: string | null }>).find((k) => k.keyId === keyId);
    expect(after?.revokedAt).toEqual(expect.any(String));
    for (const key of [live, test]) {
      const res = await t.api('GET', `${base}/guests`, { key });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHORIZED');
      expect((await t.post(`${base}/guests/checkin`, guest(), { key })).status).toBe(401);
    }
    // The hotel's other pair is untouched.
    expect((await t.api('GET', `${base}/guests`)).status).toBe(200);

    const unknown = await adminClient.post('/keys/key_doesnotexist/revoke');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('RECORD_NOT_FOUND');
  });

  it('docs/dashboard.md JSON API /requests: an idempotent replay names its original request (replayOf), in the list and in GET /requests/:id, with a live and a test key; the original has none', async () => {
    const pair = await issueKeyPair(db(), t.slug);
    type Row = { id: string; idempotencyKey: string | null; statusCode: number; replayOf: string | null };
    for (const key of [pair.live, pair.test]) {
      const idempotencyKey = uniqueKey('replay');
      const body = guest();
      const first = await t.post(`${base}/guests/checkin`, body, { key, idempotencyKey });
      expect(first.status).toBe(200);
      const again = await t.post(`${base}/guests/checkin`, body, { key, idempotencyKey });
      expect([again.status, again.body._idempotent, again.body.requestId]).toEqual([200, true, first.body.requestId]);
      // A replay still counts against the key's limit (the API reference, Idempotency).
      expect(Number(again.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);

      const rows = await eventually(async () => {
        const res = await adminClient.get('/requests?limit=200');
        expect(res.status).toBe(200);
        const mine = (res.body.requests as Row[]).filter((r) => r.idempotencyKey === idempotencyKey);
        return mine.length === 2 ? mine : undefined;
      });
      const original = rows.find((r) => r.id === first.body.requestId);
      const replay = rows.find((r) => r.id !== first.body.requestId);
      expect(original?.replayOf).toBeNull();
      expect(replay).toMatchObject({ statusCode: 200, replayOf: first.body.requestId });
      const detail = await adminClient.get(`/requests/${replay?.id ?? ''}`);
      expect(detail.status).toBe(200);
      expect(detail.body.request).toMatchObject({ id: replay?.id, replayOf: first.body.requestId });
      expect((await adminClient.get(`/requests/${first.body.requestId as string}`)).body.request.replayOf).toBeNull();
    }
  });

  it("docs/dashboard.md JSON API /requests: a 422, a 200, a test-key request and a list show up, an unauthenticated 401 only with sender=none (marked); status, mode, endpoint, since and until filter; GET /requests/:id has the 422's bodies", async () => {
    const pair = await issueKeyPair(db(), t.slug);
    const ua = `innsync-explorer-test/${engine}`;
    const badBody = guest({ checkOutDate: 'soon' });
    const badKey = uniqueKey('bad');
    const bad = await t.api('POST', `${base}/guests/checkin`, { key: pair.live, body: badBody, idempotencyKey: badKey, headers: { 'user-agent': ua } });
    expect(bad.status).toBe(422);
    const ok = await t.post(`${base}/guests/checkin`, guest(), { key: pair.live });
    expect(ok.status).toBe(200);
    const sandbox = await t.post(`${base}/guests/checkin`, guest(), { key: pair.test });
    expect(sandbox.status).toBe(200);
    const list = await t.api('GET', `${base}/guests?source=pms`, { key: pair.live });
    expect(list.status).toBe(200);
    const anonymous = await t.post(`${base}/guests/checkin`, guest(), { key: null });
    expect(anonymous.status).toBe(401);
    const ids = {
      bad: bad.body.requestId as string,
      ok: ok.body.requestId as string,
      sandbox: sandbox.body.requestId as string,
      list: list.body.requestId as string,
    };
    const anonymousId = anonymous.body.requestId as string;

    type Row = {
      id: string;
      at: string;
      method: string;
      path: string;
      statusCode: number;
      mode: string | null;
      durationMs: number;
      idempotencyKey: string | null;
      keyId: string | null;
      authenticated: boolean;
    };
    const query = async (q: string): Promise<Row[]> => {
      const res = await adminClient.get(`/requests?limit=200${q}`);
      expect(res.status, q).toBe(200);
      return res.body.requests as Row[];
    };
    // The request log is written in batches: wait for all four rows, and the 401's.
    const all = await eventually(async () => {
      const rows = await query('');
      return Object.values(ids).every((id) => rows.some((r) => r.id === id)) ? rows : undefined;
    });
    const row = (id: string): Row => all.find((r) => r.id === id) as Row;
    // The 401 no valid key sent is listed apart (sender=none), marked, never with the hotel's own.
    const unauthenticated = await eventually(async () => {
      const rows = await query('&sender=none');
      return rows.some((r) => r.id === anonymousId) ? rows : undefined;
    });
    expect(unauthenticated.find((r) => r.id === anonymousId)).toMatchObject({
      statusCode: 401,
      mode: null,
      keyId: null,
      path: `${base}/guests/checkin`,
      authenticated: false,
    });
    expect(unauthenticated.every((r) => !r.authenticated && r.keyId === null)).toBe(true);
    expect(all.some((r) => r.id === anonymousId)).toBe(false);
    expect(all.every((r) => r.authenticated)).toBe(true);
    expect((await query('&sender=key')).map((r) => r.id)).toEqual(all.map((r) => r.id));
    expect(row(ids.bad)).toEqual({
      id: ids.bad,
      at: expect.any(String),
      method: 'POST',
      path: `${base}/guests/checkin`,
      statusCode: 422,
      mode: 'live',
      durationMs: expect.any(Number),
      idempotencyKey: badKey,
      keyId: pair.keyId,
      authenticated: true,
      replayOf: null,
    });
    expect(row(ids.sandbox)).toMatchObject({ statusCode: 200, mode: 'test', keyId: pair.keyId });
    expect(row(ids.list)).toMatchObject({ method: 'GET', statusCode: 200, mode: 'live' });
    // Newest first.
    const ats = all.map((r) => r.at);
    expect([...ats].sort().reverse()).toEqual(ats);

    const idsOf = (rows: Row[]) => new Set(rows.map((r) => r.id));
    const mine = (rows: Row[]) =>
      Object.entries(ids)
        .filter(([, id]) => idsOf(rows).has(id))
        .map(([name]) => name)
        .sort();

    const fourxx = await query('&status=4xx');
    expect(mine(fourxx)).toEqual(['bad']);
    expect(fourxx.every((r) => r.statusCode >= 400 && r.statusCode < 500)).toBe(true);
    const twoxx = await query('&status=2xx');
    expect(mine(twoxx)).toEqual(['list', 'ok', 'sandbox']);
    expect(twoxx.every((r) => r.statusCode >= 200 && r.statusCode < 300)).toBe(true);
    const test = await query('&mode=test');
    expect(mine(test)).toEqual(['sandbox']);
    expect(test.every((r) => r.mode === 'test')).toBe(true);
    const live = await query('&mode=live');
    expect(mine(live)).toEqual(['bad', 'list', 'ok']);
    const checkins = await query('&endpoint=checkin');
    expect(mine(checkins)).toEqual(['bad', 'ok', 'sandbox']);
    expect((await query('&sender=none&status=4xx&endpoint=checkin')).map((r) => r.id)).toContain(anonymousId);
    expect(checkins.every((r) => r.path.startsWith(`${base}/guests/checkin`))).toBe(true);
    const lists = await query('&endpoint=list');
    expect(mine(lists)).toEqual(['list']);
    expect(mine(await query('&status=4xx&mode=live&endpoint=checkin'))).toEqual(['bad']);

    // since is inclusive, until exclusive, on the rows' own times.
    const pivot = row(ids.ok).at;
    const since = await query(`&since=${encodeURIComponent(pivot)}`);
    const until = await query(`&until=${encodeURIComponent(pivot)}`);
    for (const r of all) {
      expect(idsOf(since).has(r.id), `since ${r.id}`).toBe(r.at >= pivot);
      expect(idsOf(until).has(r.id), `until ${r.id}`).toBe(r.at < pivot);
    }
    expect(idsOf(since).has(ids.ok)).toBe(true);
    expect(idsOf(until).has(ids.ok)).toBe(false);

    // Pages: next of one is before of the following; pages are disjoint and cover the list.
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const res: DashboardResponse = await adminClient.get(`/requests?limit=2${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.requests.length).toBeLessThanOrEqual(2);
      seen.push(...(res.body.requests as Row[]).map((r) => r.id));
      cursor = res.body.next as string | null;
      if (cursor === null) break;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(all.map((r) => r.id));

    const detail = await adminClient.get(`/requests/${ids.bad}`);
    expect(detail.status).toBe(200);
    expect(detail.body.request).toMatchObject({
      ...row(ids.bad),
      clientIp: '127.0.0.1',
      userAgent: ua,
      requestBody: expect.any(String),
      responseBody: expect.any(String),
    });
    expect(JSON.parse(detail.body.request.requestBody as string)).toEqual(badBody);
    const response = JSON.parse(detail.body.request.responseBody as string) as Record<string, unknown>;
    expect(response).toMatchObject({ status: 'error', code: 'INVALID_DATE_FORMAT', requestId: ids.bad });
    expect(response).toEqual(bad.body);

    const missing = await adminClient.get('/requests/req_doesnotexist');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('RECORD_NOT_FOUND');
    const badFilter = await adminClient.get('/requests?status=3xx');
    expect(badFilter.status).toBe(422);
  });
});
