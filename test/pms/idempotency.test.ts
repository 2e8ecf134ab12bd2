import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withBodies } from '../../src/db/repositories/request-log.repository.js';
import { sql } from 'kysely';
import pg from 'pg';
import { randomId } from '../../src/domain/ids.js';
import { runRetention } from '../../src/jobs/retention.js';
import { issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { requestFingerprint } from '../../src/pms/idempotency.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type RequestOptions, type TestServer, pmsBase } from '../support/harness.js';

// Idempotency (docs/pms-interface.md, "Idempotency"; a 4xx does not use the key up),
// proven through real HTTPS requests on both engines.
// Each test gets its own key pair: rate limits count per key and endpoint (60/min for
// events), so the file never runs into 429, and each test has its own scopes.

type Body = Record<string, unknown>;

const HOUR_MS = 60 * 60 * 1000;
const iso = (ms: number): string => new Date(ms).toISOString();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function expectError(res: ApiResponse, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ status: 'error', code, message: expect.any(String), requestId: expect.stringMatching(/^req_/) });
  expect(res.headers['idempotent-replayed']).toBeUndefined();
  expect(res.body).not.toHaveProperty('_idempotent');
}

/** A freshly processed (not replayed) 2xx answer. */
function expectOriginal(res: ApiResponse, status = 200): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['idempotent-replayed']).toBeUndefined();
  expect(res.body).not.toHaveProperty('_idempotent');
}

/** A replay: status, body and requestId equal the original, `_idempotent: true` added, and the header. */
function expectReplayOf(res: ApiResponse, original: ApiResponse): void {
  expect(res.status, res.text).toBe(original.status);
  expect(res.body).toEqual({ ...original.body, _idempotent: true });
  expect(res.body.requestId).toBe(original.body.requestId);
  expect(res.headers['idempotent-replayed']).toBe('true');
  expect(res.headers['content-type']).toMatch(/^application\/json/);
}

describe.each(testEngines())('idempotency over HTTPS (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let k: IssuedKeyPair;
  let liveScope: string;
  let testScope: string;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    k = await issueKeyPair(t.server.database.db, t.slug);
    // The scope of a record is the api_keys row id of the one key (a key belongs to one API key).
    liveScope = `${k.keyId}_live`;
    testScope = `${k.keyId}_test`;
  });

  const db = () => t.server.database.db;

  /** POST with this test's live key (unless `opts.key`), the given Idempotency-Key and a JSON body. */
  const post = (path: string, body: unknown, idempotencyKey: string | null, opts: RequestOptions = {}): Promise<ApiResponse> =>
    t.api('POST', `${base}${path}`, { key: k.live, body, idempotencyKey, ...opts });
  const checkin = (body: Body, key: string, opts: RequestOptions = {}) => post('/guests/checkin', body, key, opts);
  const update = (body: Body, key: string, opts: RequestOptions = {}) => post('/guests/update', body, key, opts);
  const checkout = (pmsGuestId: unknown, key: string, opts: RequestOptions = {}) => post('/guests/checkout', { pmsGuestId }, key, opts);

  const record = (scope: string, key: string) =>
    db().selectFrom('idempotency_records').selectAll().where('api_key_id', '=', scope).where('idempotency_key', '=', key).executeTakeFirst();

  const guestRows = (pmsGuestId: unknown) => db().selectFrom('guests').selectAll().where('pms_guest_id', '=', String(pmsGuestId)).execute();

  const activity = (pmsGuestId: unknown, action: string) =>
    db().selectFrom('activity_log').selectAll().where('pms_guest_id', '=', String(pmsGuestId)).where('action', '=', action).execute();

  /** The request log is written in batches every 200 ms: poll until `count` rows carry the key (max ~2 s). */
  async function requestLogRows(key: string, count: number) {
    let rows = await db().selectFrom('request_log').selectAll().where('idempotency_key', '=', key).orderBy('created_at').execute();
    for (let i = 0; i < 40 && rows.length < count; i++) {
      await sleep(50);
      rows = await db().selectFrom('request_log').selectAll().where('idempotency_key', '=', key).orderBy('created_at').execute();
    }
    return withBodies(db(), rows);
  }

  // ---------------------------------------------------------------- header rules

  it.each(['/guests/checkin', '/guests/update', '/guests/checkout', '/guests/sync'])(
    'every POST needs the header: POST %s without Idempotency-Key is 400 IDEMPOTENCY_KEY_REQUIRED',
    async (path) => {
      const body = path === '/guests/sync' ? { syncMode: 'full', guests: [guest()] } : guest();
      const res = await post(path, body, null);
      expectError(res, 400, 'IDEMPOTENCY_KEY_REQUIRED');
      expect(res.body.requestId).toMatch(/^req_(?!test_)/);
    },
  );

  it('order of checks: authentication before the idempotency header, the header before content type and JSON', async () => {
    expectError(await post('/guests/checkin', guest(), null, { key: null }), 401, 'UNAUTHORIZED');
    const noKeyBadType = await t.api('POST', `${base}/guests/checkin`, { key: k.live, rawBody: 'not json', headers: { 'content-type': 'text/plain' } });
    expectError(noKeyBadType, 400, 'IDEMPOTENCY_KEY_REQUIRED');
    const noKeyBadJson = await t.api('POST', `${base}/guests/checkin`, { key: k.live, rawBody: '{oops', headers: { 'content-type': 'application/json' } });
    expectError(noKeyBadJson, 400, 'IDEMPOTENCY_KEY_REQUIRED');
    // A test key's answer carries a req_test_ id even for this error.
    const testKey = await post('/guests/checkin', guest(), null, { key: k.test });
    expectError(testKey, 400, 'IDEMPOTENCY_KEY_REQUIRED');
    expect(testKey.body.requestId).toMatch(/^req_test_/);
  });

  it('only POSTs need the header: GET /guests needs no Idempotency-Key', async () => {
    const res = await t.api('GET', `${base}/guests`, { key: k.live });
    expect(res.status).toBe(200);
  });

  it('key length 1 to 255: an empty key is 400 IDEMPOTENCY_KEY_INVALID, nothing is processed', async () => {
    const g = guest();
    expectError(await checkin(g, ''), 400, 'IDEMPOTENCY_KEY_INVALID');
    expectError(await checkin(g, '""'), 400, 'IDEMPOTENCY_KEY_INVALID');
    expect(await guestRows(g.pmsGuestId)).toHaveLength(0);
  });

  it('key length 1 to 255: a 256-character key is 400 IDEMPOTENCY_KEY_INVALID (bare or quoted), nothing is processed', async () => {
    const g = guest();
    const long = 'k'.repeat(256);
    expectError(await checkin(g, long), 400, 'IDEMPOTENCY_KEY_INVALID');
    expectError(await checkin(g, `"${long}"`), 400, 'IDEMPOTENCY_KEY_INVALID');
    expect(await guestRows(g.pmsGuestId)).toHaveLength(0);
  });

  it('key length 1 to 255: 1- and 255-character keys are accepted and stored whole', async () => {
    const key255 = `${randomId(8)}${'x'.repeat(247)}`;
    expect(key255).toHaveLength(255);
    const g = guest();
    const first = await checkin(g, key255);
    expectOriginal(first);
    expect(await record(liveScope, key255)).toMatchObject({ status_code: 200 });
    expectReplayOf(await checkin(g, key255), first);
    const one = randomId(1);
    expect(one).toHaveLength(1);
    expectOriginal(await checkin(guest(), one));
  });

  it('bare `abc` and structured-field `"abc"` name the same key (the second is a replay)', async () => {
    const name = `abc-${randomId(8)}`;
    const g = guest();
    const bare = await checkin(g, name);
    expectOriginal(bare);
    const quoted = await checkin(g, `"${name}"`);
    expectReplayOf(quoted, bare);

    // And the other way round: first quoted, then bare.
    const name2 = `abc-${randomId(8)}`;
    const g2 = guest();
    const q2 = await checkin(g2, `"${name2}"`);
    expectOriginal(q2);
    expect(await record(liveScope, name2)).toMatchObject({ status_code: 200 });
    expectReplayOf(await checkin(g2, name2), q2);
    expect(await guestRows(g.pmsGuestId)).toHaveLength(1);
    expect(await guestRows(g2.pmsGuestId)).toHaveLength(1);
  });

  it('a quoted 255-character key is valid and names the same key as the bare one', async () => {
    const name = `${randomId(8)}${'q'.repeat(247)}`;
    const g = guest();
    const quoted = await checkin(g, `"${name}"`);
    expectOriginal(quoted);
    expectReplayOf(await checkin(g, name), quoted);
  });

  // ---------------------------------------------------------------- replay

  it('replay: same key + same body returns the stored response (status, body, requestId) + _idempotent and Idempotent-Replayed; processed once', async () => {
    const g = guest();
    const key = uniqueKey();
    const first = await checkin(g, key);
    expectOriginal(first);
    expect(first.body).toEqual({
      status: 'created',
      guestId: expect.stringMatching(/^guest_/),
      pmsGuestId: g.pmsGuestId,
      roomNumber: g.roomNumber,
      requestId: expect.stringMatching(/^req_(?!test_)/),
    });

    const second = await checkin(g, key);
    expectReplayOf(second, first);
    const third = await checkin(g, key);
    expectReplayOf(third, first);

    expect(await guestRows(g.pmsGuestId)).toHaveLength(1);
    expect(await activity(g.pmsGuestId, 'guest.checked_in')).toHaveLength(1);
    const list = await t.api('GET', `${base}/guests?pmsGuestId=${String(g.pmsGuestId)}`, { key: k.live });
    expect(list.body.count).toBe(1);
  });

  it('replay: an update replay is not re-processed (one activity entry, one room move)', async () => {
    const g = guest({ phone: '+4930123456' });
    await checkin(g, uniqueKey());
    const key = uniqueKey();
    const body = { pmsGuestId: g.pmsGuestId, roomNumber: `${String(g.roomNumber)}-b`, firstName: 'Grace', adults: 2, phone: null };
    const first = await update(body, key);
    expectOriginal(first);
    expect(first.body.changes).toEqual({
      roomNumber: { from: g.roomNumber, to: `${String(g.roomNumber)}-b` },
      firstName: { from: 'Ada', to: 'Grace' },
      adults: { from: null, to: 2 },
      phone: { from: '+4930123456', to: null },
    });
    const again = await update(body, key);
    expectReplayOf(again, first);
    expect(await activity(g.pmsGuestId, 'guest.room_moved')).toHaveLength(1);
    expect(await activity(g.pmsGuestId, 'guest.updated')).toHaveLength(1);
    const assignments = await db().selectFrom('room_assignments').selectAll().where('guest_id', '=', String(first.body.guestId)).execute();
    expect(assignments).toHaveLength(2);
  });

  it('replay: a checkout replay returns the stored 200 although the guest is no longer active (no 404, no re-processing)', async () => {
    const g = guest();
    await checkin(g, uniqueKey());
    const key = uniqueKey();
    const first = await checkout(g.pmsGuestId, key);
    expectOriginal(first);
    expect(first.body).toMatchObject({ status: 'checked_out', pmsGuestId: g.pmsGuestId, roomNumber: g.roomNumber });
    expectReplayOf(await checkout(g.pmsGuestId, key), first);
    expect(await activity(g.pmsGuestId, 'guest.checked_out')).toHaveLength(1);
    // Without the key's record the same request is processed: 404.
    expectError(await checkout(g.pmsGuestId, uniqueKey()), 404, 'GUEST_NOT_FOUND');
  });

  it('member order and white space do not matter: a reordered, re-spaced body is a replay', async () => {
    const g = guest({ phone: '+4930123456', adults: 2 });
    const key = uniqueKey();
    const first = await checkin(g, key);
    expectOriginal(first);
    const reordered = Object.fromEntries(Object.entries(g).reverse());
    const rawBody = `\r\n  ${JSON.stringify(reordered, null, 3).replace(/\n/g, '\r\n\t')}  \n`;
    expect(rawBody).not.toBe(JSON.stringify(g));
    const again = await t.api('POST', `${base}/guests/checkin`, { key: k.live, rawBody, idempotencyKey: key, headers: { 'content-type': 'application/json' } });
    expectReplayOf(again, first);
    expect(await guestRows(g.pmsGuestId)).toHaveLength(1);
  });

  it('same key with a different body is 422 IDEMPOTENCY_KEY_REUSED; nothing is processed and the record stays', async () => {
    const g = guest();
    const key = uniqueKey();
    const first = await checkin(g, key);
    expectOriginal(first);
    const before = await record(liveScope, key);

    // A different guest altogether.
    const other = guest();
    expectError(await checkin(other, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await guestRows(other.pmsGuestId)).toHaveLength(0);
    // One value differs (same members).
    expectError(await checkin({ ...g, firstName: 'Grace' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    // A member added.
    expectError(await checkin({ ...g, adults: 1 }, key), 422, 'IDEMPOTENCY_KEY_REUSED');

    expect(await record(liveScope, key)).toEqual(before);
    // The original request still replays.
    expectReplayOf(await checkin(g, key), first);
    expect((await guestRows(g.pmsGuestId))[0]).toMatchObject({ first_name: 'Ada' });
  });

  it('same key on a different endpoint is 422 IDEMPOTENCY_KEY_REUSED and not processed', async () => {
    const g = guest();
    const key = uniqueKey();
    const first = await checkin(g, key);
    expectOriginal(first);
    expectError(await checkout(g.pmsGuestId, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    expectError(await update({ pmsGuestId: g.pmsGuestId, firstName: 'X' }, key), 422, 'IDEMPOTENCY_KEY_REUSED');
    const rows = await guestRows(g.pmsGuestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'active', first_name: 'Ada' });
    expectReplayOf(await checkin(g, key), first);
  });

  // ---------------------------------------------------------------- 4xx does not consume

  it('a 4xx does not consume the key: 422 (bad body), then the corrected body with the same key is 200 created', async () => {
    const g = guest();
    const key = uniqueKey();
    const bad = await checkin({ ...g, checkInDate: '23.11.2026' }, key);
    expectError(bad, 422, 'INVALID_DATE_FORMAT');
    expect(await record(liveScope, key)).toBeUndefined();
    const fixed = await checkin(g, key);
    expectOriginal(fixed);
    expect(fixed.body.status).toBe('created');
    expectReplayOf(await checkin(g, key), fixed);
  });

  it('400 INVALID_JSON does not consume the key either', async () => {
    const g = guest();
    const key = uniqueKey();
    const bad = await t.api('POST', `${base}/guests/checkin`, {
      key: k.live,
      rawBody: '{"pmsGuestId":',
      idempotencyKey: key,
      headers: { 'content-type': 'application/json' },
    });
    expectError(bad, 400, 'INVALID_JSON');
    expectOriginal(await checkin(g, key));
  });

  it('a 422 raised while processing (update date order against the stored check-in date) releases the key', async () => {
    const g = guest({ checkInDate: '2026-11-23', checkOutDate: '2026-11-26' });
    await checkin(g, uniqueKey());
    const key = uniqueKey();
    const bad = await update({ pmsGuestId: g.pmsGuestId, checkOutDate: '2026-11-01' }, key);
    expectError(bad, 422, 'VALIDATION_ERROR');
    expect(await record(liveScope, key)).toBeUndefined();
    const fixed = await update({ pmsGuestId: g.pmsGuestId, checkOutDate: '2026-11-28' }, key);
    expectOriginal(fixed);
    expect(fixed.body.changes).toEqual({ checkOutDate: { from: '2026-11-26', to: '2026-11-28' } });
  });

  it('409 ROOM_OCCUPIED, free the room, retry with the same key → 200 created (no record was stored for the failed change)', async () => {
    const holder = guest({ lastName: 'Holder' });
    await checkin(holder, uniqueKey());
    const g = guest({ roomNumber: holder.roomNumber });
    const key = uniqueKey();
    const first = await checkin(g, key);
    expectError(first, 409, 'ROOM_OCCUPIED');
    expect(await record(liveScope, key)).toBeUndefined();
    expect(await guestRows(g.pmsGuestId)).toHaveLength(0);
    // The same request again is processed again (a failure is never replayed).
    const still = await checkin(g, key);
    expectError(still, 409, 'ROOM_OCCUPIED');
    expect(still.body.requestId).not.toBe(first.body.requestId);

    expectOriginal(await checkout(holder.pmsGuestId, uniqueKey()));
    const retry = await checkin(g, key);
    expectOriginal(retry);
    expect(retry.body).toMatchObject({ status: 'created', roomNumber: holder.roomNumber });
    expect(await guestRows(g.pmsGuestId)).toHaveLength(1);
  });

  it('409 ROOM_OCCUPIED on a room move, free the room, retry with the same key → 200 moved', async () => {
    const a = guest();
    const b = guest();
    await checkin(a, uniqueKey());
    await checkin(b, uniqueKey());
    const key = uniqueKey();
    const move = { pmsGuestId: a.pmsGuestId, roomNumber: b.roomNumber };
    expectError(await update(move, key), 409, 'ROOM_OCCUPIED');
    expect(await record(liveScope, key)).toBeUndefined();
    await checkout(b.pmsGuestId, uniqueKey());
    const retry = await update(move, key);
    expectOriginal(retry);
    expect(retry.body.changes).toEqual({ roomNumber: { from: a.roomNumber, to: b.roomNumber } });
  });

  it('404 GUEST_NOT_FOUND on update, check the guest in, retry with the same key → 200 updated', async () => {
    const g = guest();
    const key = uniqueKey();
    const body = { pmsGuestId: g.pmsGuestId, firstName: 'Grace' };
    expectError(await update(body, key), 404, 'GUEST_NOT_FOUND');
    expect(await record(liveScope, key)).toBeUndefined();
    await checkin(g, uniqueKey());
    const retry = await update(body, key);
    expectOriginal(retry);
    expect(retry.body).toMatchObject({ status: 'updated', changes: { firstName: { from: 'Ada', to: 'Grace' } } });
  });

  it('404 GUEST_NOT_FOUND on checkout, check the guest in, retry with the same key → 200 checked_out', async () => {
    const g = guest();
    const key = uniqueKey();
    expectError(await checkout(g.pmsGuestId, key), 404, 'GUEST_NOT_FOUND');
    await checkin(g, uniqueKey());
    const retry = await checkout(g.pmsGuestId, key);
    expectOriginal(retry);
    expect(retry.body.status).toBe('checked_out');
  });

  it('409 GUEST_ALREADY_CHECKED_IN, check the guest out, retry with the same key → 200, a new stay', async () => {
    const g = guest();
    const stay1 = await checkin(g, uniqueKey());
    const key = uniqueKey();
    expectError(await checkin(g, key), 409, 'GUEST_ALREADY_CHECKED_IN');
    await checkout(g.pmsGuestId, uniqueKey());
    const retry = await checkin(g, key);
    expectOriginal(retry);
    expect(retry.body.guestId).not.toBe(stay1.body.guestId);
  });

  // ---------------------------------------------------------------- scope

  it('live and test key of one pair are two scopes: the same key string on both is processed twice, never REUSED', async () => {
    const key = uniqueKey();
    const liveBody = guest();
    const testBody = guest(); // a different body: REUSED if the scope were shared
    const live = await checkin(liveBody, key, { key: k.live });
    const test = await checkin(testBody, key, { key: k.test });
    expectOriginal(live);
    expectOriginal(test);
    expect(live.body.guestId).toMatch(/^guest_/);
    expect(test.body.guestId).toMatch(/^test_/);
    expect(await record(liveScope, key)).toMatchObject({ status_code: 200 });
    expect(await record(testScope, key)).toMatchObject({ status_code: 200 });
    // Each scope replays its own response, and the other scope's body is REUSED there.
    expectReplayOf(await checkin(liveBody, key, { key: k.live }), live);
    expectReplayOf(await checkin(testBody, key, { key: k.test }), test);
    expectError(await checkin(liveBody, key, { key: k.test }), 422, 'IDEMPOTENCY_KEY_REUSED');
    // The same body on both keys: the test key answers its own fake response, never the live one.
    const key2 = uniqueKey();
    const g = guest();
    const live2 = await checkin(g, key2, { key: k.live });
    const test2 = await checkin(g, key2, { key: k.test });
    expectOriginal(live2);
    expectOriginal(test2);
    expect(test2.body.guestId).toMatch(/^test_/);
  });

  it('different hotels may use equal keys: the same key in two hotels is two independent requests', async () => {
    const slug2 = `idem-${randomId(8)}`;
    const other = await t.addHotel(slug2);
    const key = uniqueKey();
    const g = guest();
    const here = await checkin(g, key);
    const there = await t.api('POST', `${pmsBase(slug2)}/guests/checkin`, { key: other.live, body: g, idempotencyKey: key });
    expectOriginal(here);
    expectOriginal(there);
    expect(there.body.guestId).not.toBe(here.body.guestId);
    expect(await guestRows(g.pmsGuestId)).toHaveLength(2);
  });

  it('each pair of a hotel has its own scope: a second key pair with the same key is processed, not replayed', async () => {
    const second = await issueKeyPair(db(), t.slug);
    const key = uniqueKey();
    const g = guest();
    const first = await checkin(g, key);
    expectOriginal(first);
    // Same body: processed again in the other scope (the guest is active: 409), not a replay.
    expectError(await checkin(g, key, { key: second.live }), 409, 'GUEST_ALREADY_CHECKED_IN');
    // Different body: processed, not REUSED.
    const other = await checkin(guest(), key, { key: second.live });
    expectOriginal(other);
    expect(await record(`${second.keyId}_live`, key)).toMatchObject({ status_code: 200 });
    // The first pair still replays its own response.
    expectReplayOf(await checkin(g, key), first);
  });

  // ---------------------------------------------------------------- test mode

  it('test keys have idempotency exactly as live keys: a test replay returns the stored fake response; no guest data stored', async () => {
    const g = guest();
    const key = uniqueKey();
    const first = await checkin(g, key, { key: k.test });
    expectOriginal(first);
    expect(first.body).toEqual({
      status: 'created',
      guestId: expect.stringMatching(/^test_/),
      pmsGuestId: g.pmsGuestId,
      roomNumber: g.roomNumber,
      requestId: expect.stringMatching(/^req_test_/),
      _sandbox: true,
    });
    const again = await checkin(g, key, { key: k.test });
    expectReplayOf(again, first);
    expect(again.body.guestId).toBe(first.body.guestId);
    expectError(await checkin(guest(), key, { key: k.test }), 422, 'IDEMPOTENCY_KEY_REUSED');

    expect(await guestRows(g.pmsGuestId)).toHaveLength(0);
    expect(await db().selectFrom('activity_log').selectAll().where('pms_guest_id', '=', String(g.pmsGuestId)).execute()).toHaveLength(0);
    const rec = await record(testScope, key);
    expect(rec).toMatchObject({ status_code: 200 });
    expect(JSON.parse(rec?.response_body ?? 'null')).toEqual(first.body);
    expect(await record(liveScope, key)).toBeUndefined();
  });

  it('test mode: update and checkout replays with a test key, and 4xx does not consume a test key', async () => {
    const upKey = uniqueKey();
    const up = await update({ pmsGuestId: 'T-1', firstName: 'Grace' }, upKey, { key: k.test });
    expectOriginal(up);
    expectReplayOf(await update({ pmsGuestId: 'T-1', firstName: 'Grace' }, upKey, { key: k.test }), up);
    const outKey = uniqueKey();
    const out = await checkout('T-1', outKey, { key: k.test });
    expectOriginal(out);
    expect(out.body).toMatchObject({ roomNumber: null, _sandbox: true });
    expectReplayOf(await checkout('T-1', outKey, { key: k.test }), out);

    const key = uniqueKey();
    expectError(await checkin(guest({ checkOutDate: 'tomorrow' }), key, { key: k.test }), 422, 'INVALID_DATE_FORMAT');
    expectOriginal(await checkin(guest(), key, { key: k.test }));
  });

  // ---------------------------------------------------------------- concurrency

  it('of concurrent requests with the same key exactly one is processed: 10 parallel identical check-ins', async () => {
    const g = guest();
    const key = uniqueKey();
    const results = await Promise.all(Array.from({ length: 10 }, () => checkin(g, key)));
    const ok = results.filter((r) => r.status === 200);
    for (const r of results) {
      if (r.status === 200) continue;
      expectError(r, 409, 'IDEMPOTENCY_KEY_IN_USE');
    }
    expect(ok.length).toBeGreaterThanOrEqual(1);
    const originals = ok.filter((r) => r.body._idempotent === undefined);
    expect(originals).toHaveLength(1);
    const original = originals[0] as ApiResponse;
    for (const r of ok) if (r !== original) expectReplayOf(r, original);

    expect(await guestRows(g.pmsGuestId)).toHaveLength(1);
    expect(await activity(g.pmsGuestId, 'guest.checked_in')).toHaveLength(1);
    // Afterwards the key replays.
    expectReplayOf(await checkin(g, key), original);
  });

  it('exactly once: 10 parallel identical room moves make one guest.room_moved entry', async () => {
    const g = guest();
    await checkin(g, uniqueKey());
    const key = uniqueKey();
    const target = `${String(g.roomNumber)}-m`;
    const body = { pmsGuestId: g.pmsGuestId, roomNumber: target };
    const results = await Promise.all(Array.from({ length: 10 }, () => update(body, key)));
    for (const r of results) {
      if (r.status === 200) continue;
      expectError(r, 409, 'IDEMPOTENCY_KEY_IN_USE');
    }
    const ok = results.filter((r) => r.status === 200);
    const originals = ok.filter((r) => r.body._idempotent === undefined);
    expect(originals).toHaveLength(1);
    const original = originals[0] as ApiResponse;
    expect(original.body.changes).toEqual({ roomNumber: { from: g.roomNumber, to: target } });
    for (const r of ok) if (r !== original) expectReplayOf(r, original);

    expect(await activity(g.pmsGuestId, 'guest.room_moved')).toHaveLength(1);
    expect(await activity(g.pmsGuestId, 'guest.updated')).toHaveLength(0);
    const assignments = await db().selectFrom('room_assignments').selectAll().where('guest_id', '=', String(original.body.guestId)).execute();
    expect(assignments).toHaveLength(2);
  });

  it('exactly once: parallel different bodies under one key → one processed, the rest IN_USE or REUSED', async () => {
    const key = uniqueKey();
    const bodies = Array.from({ length: 8 }, () => guest());
    const results = await Promise.all(bodies.map((b) => checkin(b, key)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expectOriginal(ok[0] as ApiResponse);
    for (const r of results) {
      if (r.status === 200) continue;
      expect([409, 422]).toContain(r.status);
      expectError(r, r.status, r.status === 409 ? 'IDEMPOTENCY_KEY_IN_USE' : 'IDEMPOTENCY_KEY_REUSED');
    }
    const created = await db()
      .selectFrom('guests')
      .select('pms_guest_id')
      .where(
        'pms_guest_id',
        'in',
        bodies.map((b) => String(b.pmsGuestId)),
      )
      .execute();
    expect(created).toEqual([{ pms_guest_id: ok[0]?.body.pmsGuestId }]);
  });

  // ---------------------------------------------------------------- lifetime

  it('replay without re-processing: a check-in key sent after the guest checked out replays; no new stay', async () => {
    const g = guest();
    const key = uniqueKey();
    const first = await checkin(g, key);
    expectOriginal(first);
    expectOriginal(await checkout(g.pmsGuestId, uniqueKey()));
    const again = await checkin(g, key);
    expectReplayOf(again, first);
    const rows = await guestRows(g.pmsGuestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'checked_out' });
    const list = await t.api('GET', `${base}/guests?pmsGuestId=${String(g.pmsGuestId)}`, { key: k.live });
    expect(list.body.count).toBe(0);
  });

  /**
   * What a request in progress holds (PostgreSQL): its claim, inserted by a transaction
   * that has not ended. Resolves with the functions that end it.
   */
  async function holdClaim(key: string, body: Body, stored: object | null = null) {
    const client = new pg.Client({ connectionString: t.config.databaseUrl ?? '' });
    await client.connect();
    await client.query('begin');
    const now = Date.now();
    await client.query(
      'insert into idempotency_records (api_key_id, idempotency_key, fingerprint, status_code, response_body, created_at, expires_at) values ($1, $2, $3, $4, $5, $6, $7)',
      [
        liveScope,
        key,
        requestFingerprint('POST', `${base}/guests/checkin`, body),
        stored ? 200 : null,
        stored ? JSON.stringify(stored) : null,
        iso(now),
        iso(now + 24 * HOUR_MS),
      ],
    );
    const end = async (sqlText: 'commit' | 'rollback') => {
      await client.query(sqlText);
      await client.end();
    };
    return { commit: () => end('commit'), rollback: () => end('rollback') };
  }

  /** Whether `p` is still pending after `ms`. */
  const stillPending = async (p: Promise<unknown>, ms: number): Promise<boolean> => Promise.race([p.then(() => false), sleep(ms).then(() => true)]);

  it.runIf(engine === 'postgres')(
    '"the claim lives and dies with the change\'s transaction": a duplicate waits for the claim; its rollback frees the key and the duplicate is processed once',
    async () => {
      const g = guest();
      const key = uniqueKey();
      const held = await holdClaim(key, g);
      const pending = checkin(g, key);
      expect(await stillPending(pending, 400)).toBe(true);
      await held.rollback();
      const res = await pending;
      expectOriginal(res);
      expect(await guestRows(g.pmsGuestId)).toHaveLength(1);
      expect(JSON.parse((await record(liveScope, key))?.response_body ?? 'null')).toEqual(res.body);
    },
  );

  it.runIf(engine === 'postgres')(
    'a duplicate waiting on a claim whose transaction commits gets the committed response (replay), not a second processing',
    async () => {
      const g = guest();
      const key = uniqueKey();
      const stored = {
        status: 'created',
        guestId: `guest_${randomId(8)}`,
        pmsGuestId: g.pmsGuestId,
        roomNumber: g.roomNumber,
        requestId: `req_${randomId(8)}`,
      };
      const held = await holdClaim(key, g, stored);
      const pending = checkin(g, key);
      expect(await stillPending(pending, 400)).toBe(true);
      await held.commit();
      const res = await pending;
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ ...stored, _idempotent: true });
      expect(res.headers['idempotent-replayed']).toBe('true');
      expect(await guestRows(g.pmsGuestId)).toHaveLength(0);
    },
  );

  it.runIf(engine === 'postgres')(
    '"bounded: after a few seconds, 409 IDEMPOTENCY_KEY_IN_USE": a claim held past the lock timeout is answered 409, nothing processed, and the key works once it is free',
    async () => {
      const g = guest();
      const key = uniqueKey();
      const held = await holdClaim(key, g);
      try {
        const res = await checkin(g, key);
        expectError(res, 409, 'IDEMPOTENCY_KEY_IN_USE');
        expect(await guestRows(g.pmsGuestId)).toHaveLength(0);
      } finally {
        await held.rollback();
      }
      expectOriginal(await checkin(g, key));
      expect(await guestRows(g.pmsGuestId)).toHaveLength(1);
    },
  );

  it('lifetime 24 h: a stored record expires 24 h after completion', async () => {
    const key = uniqueKey();
    expectOriginal(await checkin(guest(), key));
    const rec = await record(liveScope, key);
    expect(rec).toBeDefined();
    expect(Date.parse(rec?.expires_at ?? '') - Date.parse(rec?.created_at ?? '')).toBe(24 * HOUR_MS);
  });

  it('afterwards the key can be reused: with expires_at in the past, the same key with a different body is 200, not REUSED', async () => {
    const key = uniqueKey();
    const first = await checkin(guest(), key);
    expectOriginal(first);
    await db()
      .updateTable('idempotency_records')
      .set({ expires_at: iso(Date.now() - 60_000) })
      .where('api_key_id', '=', liveScope)
      .where('idempotency_key', '=', key)
      .execute();
    const g2 = guest();
    const second = await checkin(g2, key);
    expectOriginal(second);
    expect(second.body).toMatchObject({ status: 'created', pmsGuestId: g2.pmsGuestId });
    // The key now belongs to the new request for a new lifetime.
    const rec = await record(liveScope, key);
    expect(JSON.parse(rec?.response_body ?? 'null')).toEqual(second.body);
    expect(Date.parse(rec?.expires_at ?? '')).toBeGreaterThan(Date.now());
    expectReplayOf(await checkin(g2, key), second);
  });

  it('lifetime: after expiry the same key and same body is processed anew (a new stay), not replayed', async () => {
    const g = guest();
    const key = uniqueKey();
    const first = await checkin(g, key);
    await checkout(g.pmsGuestId, uniqueKey());
    await db()
      .updateTable('idempotency_records')
      .set({ expires_at: iso(Date.now() - 60_000) })
      .where('api_key_id', '=', liveScope)
      .where('idempotency_key', '=', key)
      .execute();
    const again = await checkin(g, key);
    expectOriginal(again);
    expect(again.body.guestId).not.toBe(first.body.guestId);
    expect(again.body.requestId).not.toBe(first.body.requestId);
  });

  it('expired records are purged by a periodic job: runRetention (innsync purge) deletes exactly the expired records', async () => {
    const expiredKeys = [uniqueKey(), uniqueKey()];
    const keptKey = uniqueKey();
    for (const key of [...expiredKeys, keptKey]) expectOriginal(await checkin(guest(), key));
    await db()
      .updateTable('idempotency_records')
      .set({ expires_at: iso(Date.now() - 60_000) })
      .where('api_key_id', '=', liveScope)
      .where('idempotency_key', 'in', expiredKeys)
      .execute();
    const expiredBefore = await db().selectFrom('idempotency_records').select('idempotency_key').where('expires_at', '<', iso(Date.now())).execute();
    expect(expiredBefore.map((r) => r.idempotency_key)).toEqual(expect.arrayContaining(expiredKeys));
    const totalBefore = (await db().selectFrom('idempotency_records').select('idempotency_key').execute()).length;

    const result = await runRetention(db(), null);
    expect(result.idempotency).toBe(expiredBefore.length);
    for (const key of expiredKeys) expect(await record(liveScope, key)).toBeUndefined();
    expect(await record(liveScope, keptKey)).toMatchObject({ status_code: 200 });
    expect((await db().selectFrom('idempotency_records').select('idempotency_key').execute()).length).toBe(totalBefore - expiredBefore.length);
  });

  // ---------------------------------------------------------------- storage

  it('written in the same transaction: after a check-in the record is done with status 200 and the response body', async () => {
    const g = guest();
    const key = uniqueKey();
    const res = await checkin(g, key);
    expectOriginal(res);
    const rec = await record(liveScope, key);
    expect(rec).toMatchObject({ status_code: 200 });
    expect(JSON.parse(rec?.response_body ?? 'null')).toEqual(res.body);
    // Only 2xx responses are stored: nothing for the failed attempt of another key.
    const failKey = uniqueKey();
    expectError(await checkin(g, failKey), 409, 'GUEST_ALREADY_CHECKED_IN');
    expect(await record(liveScope, failKey)).toBeUndefined();
  });

  it.runIf(engine === 'postgres')(
    'a crash never leaves a stored response without its change: a check-in failing at COMMIT leaves no stored response',
    async () => {
      // A deferred constraint trigger (this test's throwaway database only) fails the
      // COMMIT of a check-in whose pmsGuestId starts with FAIL-COMMIT-. If the response
      // were stored outside the change's transaction, the key would now replay a
      // check-in that never happened.
      await sql`create or replace function innsync_test_fail_commit() returns trigger language plpgsql as $$
        begin
          if new.pms_guest_id like 'FAIL-COMMIT-%' then raise exception 'forced commit failure'; end if;
          return new;
        end $$`.execute(db());
      await sql`create constraint trigger innsync_test_fail_commit after insert on guests deferrable initially deferred for each row execute function innsync_test_fail_commit()`.execute(
        db(),
      );
      try {
        const g = guest({ pmsGuestId: `FAIL-COMMIT-${randomId(8)}` });
        const key = uniqueKey();
        const res = await checkin(g, key);
        expect(res.status, res.text).toBeGreaterThanOrEqual(500);
        expect(res.body).not.toHaveProperty('_idempotent');
        expect(await guestRows(g.pmsGuestId)).toHaveLength(0);
        expect(await record(liveScope, key)).toBeUndefined();
        const again = await checkin(g, key);
        expect(again.status).toBeGreaterThanOrEqual(500);
        expect(again.headers['idempotent-replayed']).toBeUndefined();
      } finally {
        await sql`drop trigger innsync_test_fail_commit on guests`.execute(db());
        await sql`drop function innsync_test_fail_commit()`.execute(db());
      }
    },
  );

  // ---------------------------------------------------------------- rate limit and log

  it('replays count against the rate limit: X-RateLimit-Remaining decreases on each replay', async () => {
    const g = guest();
    const key = uniqueKey();
    // Make sure original and replays fall into one fixed window (set-up, not asserted).
    const probe = await checkin(guest(), uniqueKey());
    const left = Number(probe.headers['x-ratelimit-reset']) * 1000 - Date.now();
    if (left < 5000) await sleep(Math.max(0, left) + 100);

    const first = await checkin(g, key);
    const second = await checkin(g, key);
    const third = await checkin(g, key);
    expectOriginal(first);
    expectReplayOf(second, first);
    expectReplayOf(third, first);
    const remaining = [first, second, third].map((r) => Number(r.headers['x-ratelimit-remaining']));
    expect(second.headers['x-ratelimit-limit']).toBe('60');
    expect(remaining[1]).toBe((remaining[0] ?? 0) - 1);
    expect(remaining[2]).toBe((remaining[0] ?? 0) - 2);
  });

  it('replays are logged like any request: request_log holds the original and the replay with the key', async () => {
    const g = guest();
    const key = uniqueKey();
    const first = await checkin(g, key, { headers: { 'user-agent': 'idem-test/1' } });
    const replay = await checkin(g, key, { headers: { 'user-agent': 'idem-test/1' } });
    expectReplayOf(replay, first);
    const rows = await requestLogRows(key, 2);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row).toMatchObject({
        status_code: 200,
        method: 'POST',
        path: `${base}/guests/checkin`,
        api_key_id: k.keyId,
        key_mode: 'live',
        idempotency_key: key,
        user_agent: 'idem-test/1',
      });
      expect(JSON.parse(row.request_body ?? 'null')).toEqual(g);
    }
    expect(new Set(rows.map((r) => r.id)).size).toBe(2);
    const bodies = rows.map((r) => JSON.parse(r.response_body ?? 'null') as Body);
    expect(bodies).toContainEqual(first.body);
    expect(bodies).toContainEqual({ ...first.body, _idempotent: true });

    // Test-mode replays are logged too, marked as test.
    const testKey = uniqueKey();
    await checkin(g, testKey, { key: k.test });
    await checkin(g, testKey, { key: k.test });
    const testRows = await requestLogRows(testKey, 2);
    expect(testRows.map((r) => [r.status_code, r.key_mode])).toEqual([
      [200, 'test'],
      [200, 'test'],
    ]);
  });
});
