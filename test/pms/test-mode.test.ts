import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomId } from '../../src/domain/ids.js';
import type { RosterChange } from '../../src/events/roster-events.js';
import { issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type RequestOptions, type TestServer } from '../support/harness.js';

// Test mode (docs/pms-interface.md, "Test mode"): a test key validates
// exactly as a live key, then answers as if the roster were empty, persists nothing
// and publishes nothing. Each test gets its own key pair so rate limits never interfere.

const LIVE_REQ = /^req_(?!test_)[A-Za-z0-9]+$/;
const TEST_REQ = /^req_test_[A-Za-z0-9]+$/;
const TEST_ID = /^test_[A-Za-z0-9_]+$/;

/** A body without its requestId, to compare live and test answers. */
const withoutRequestId = (body: Record<string, unknown>): Record<string, unknown> => {
  const { requestId: _requestId, ...rest } = body;
  return rest;
};

describe.each(testEngines())('test mode over HTTPS (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let hotelId: string;
  let k: IssuedKeyPair;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    const row = await t.server.database.db.selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow();
    hotelId = row.id;
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    k = await issueKeyPair(t.server.database.db, t.slug);
  });

  const live = (path: string, body: unknown, opts: RequestOptions = {}): Promise<ApiResponse> => t.post(`${base}${path}`, body, { key: k.live, ...opts });
  const test = (path: string, body: unknown, opts: RequestOptions = {}): Promise<ApiResponse> => t.post(`${base}${path}`, body, { key: k.test, ...opts });

  /** Rows of this hotel in the roster tables. */
  async function rosterRows(): Promise<{ guests: number; rooms: number; activity: number }> {
    const db = t.server.database.db;
    const count = async (table: 'guests' | 'room_assignments' | 'activity_log'): Promise<number> => {
      const r = await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('hotel_id', '=', hotelId)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    };
    return { guests: await count('guests'), rooms: await count('room_assignments'), activity: await count('activity_log') };
  }

  /** Collects roster events of the hotel while `fn` runs. */
  it('check-in answers 200 created with a test_ guestId, _sandbox: true and a req_test_ requestId', async () => {
    const g = guest({ roomNumber: ' 305 ' });
    const res = await test('/guests/checkin', g);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'created',
      guestId: expect.stringMatching(TEST_ID),
      pmsGuestId: g.pmsGuestId,
      roomNumber: '305',
      requestId: expect.stringMatching(TEST_REQ),
      _sandbox: true,
    });
  });

  it('the roster looks empty to check-in (active pmsGuestId and held room still 200; repeated check-in 200)', async () => {
    const held = guest();
    expect((await live('/guests/checkin', held)).status).toBe(200);
    const sameGuest = await test('/guests/checkin', held);
    expect(sameGuest.status).toBe(200);
    expect(sameGuest.body).toMatchObject({ status: 'created', guestId: expect.stringMatching(TEST_ID), _sandbox: true });
    const sameRoom = await test('/guests/checkin', guest({ roomNumber: held.roomNumber }));
    expect(sameRoom.status).toBe(200);
    const again = await test('/guests/checkin', held);
    expect(again.status).toBe(200);
    // The test key's fake guestId of one pmsGuestId is the same every time (the API reference, "Test keys").
    expect(again.body.guestId).toBe(sameGuest.body.guestId);
  });

  it('update of any valid pmsGuestId is 200 with every submitted field as {from: null, to}, roomNumber trimmed, no _sandbox', async () => {
    const body = {
      pmsGuestId: `never-checked-in-${randomId(6)}`,
      roomNumber: '  412 ',
      firstName: 'Grace',
      lastName: 'Hopper',
      phone: null,
      email: 'grace@example.com',
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-30',
      language: 'en',
      nationality: 'US',
      adults: 2,
      children: 0,
    };
    const res = await test('/guests/update', body);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'updated',
      guestId: expect.stringMatching(TEST_ID),
      pmsGuestId: body.pmsGuestId,
      changes: {
        roomNumber: { from: null, to: '412' },
        firstName: { from: null, to: 'Grace' },
        lastName: { from: null, to: 'Hopper' },
        phone: { from: null, to: null },
        email: { from: null, to: 'grace@example.com' },
        checkInDate: { from: null, to: '2026-11-23' },
        checkOutDate: { from: null, to: '2026-11-30' },
        language: { from: null, to: 'en' },
        nationality: { from: null, to: 'US' },
        adults: { from: null, to: 2 },
        children: { from: null, to: 0 },
      },
      requestId: expect.stringMatching(TEST_REQ),
    });
    expect(res.body).not.toHaveProperty('_sandbox');
  });

  it('update never reads the roster (an active live guest still reports from: null; pmsGuestId alone gives changes {})', async () => {
    const g = guest({ firstName: 'Ada' });
    await live('/guests/checkin', g);
    const res = await test('/guests/update', { pmsGuestId: g.pmsGuestId, firstName: 'Ada' });
    expect(res.status).toBe(200);
    expect(res.body.changes).toEqual({ firstName: { from: null, to: 'Ada' } });
    const bare = await test('/guests/update', { pmsGuestId: g.pmsGuestId });
    expect(bare.status).toBe(200);
    expect(bare.body.changes).toEqual({});
  });

  it('checkout is 200 checked_out with roomNumber: null and _sandbox: true, for any valid pmsGuestId', async () => {
    const res = await test('/guests/checkout', { pmsGuestId: `unknown-${randomId(6)}` });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'checked_out',
      guestId: expect.stringMatching(TEST_ID),
      pmsGuestId: expect.stringMatching(/^unknown-/),
      roomNumber: null,
      requestId: expect.stringMatching(TEST_REQ),
      _sandbox: true,
    });
  });

  it('a test checkout of an active live guest leaves the live guest in house', async () => {
    const g = guest();
    await live('/guests/checkin', g);
    const res = await test('/guests/checkout', { pmsGuestId: g.pmsGuestId });
    expect(res.status).toBe(200);
    expect(res.body.roomNumber).toBeNull();
    const list = await t.api('GET', `${base}/guests?pmsGuestId=${String(g.pmsGuestId)}`, { key: k.live });
    expect(list.body.count).toBe(1);
  });

  it('GET /guests with a test key is {guests: [], count: 0} even when the live roster has guests', async () => {
    const g = guest();
    await live('/guests/checkin', g);
    const liveList = await t.api('GET', `${base}/guests`, { key: k.live });
    expect(liveList.body.count).toBeGreaterThan(0);
    for (const query of ['', `?pmsGuestId=${String(g.pmsGuestId)}`, '?source=pms']) {
      const res = await t.api('GET', `${base}/guests${query}`, { key: k.test });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ guests: [], count: 0, requestId: expect.stringMatching(TEST_REQ) });
    }
  });

  it('nothing is written to guests, room_assignments or activity_log', async () => {
    const before = await rosterRows();
    const g = guest();
    expect((await test('/guests/checkin', g)).status).toBe(200);
    expect((await test('/guests/update', { pmsGuestId: g.pmsGuestId, roomNumber: `moved-${randomId(4)}`, firstName: 'X' })).status).toBe(200);
    expect((await test('/guests/checkout', { pmsGuestId: g.pmsGuestId })).status).toBe(200);
    expect((await test('/guests/sync', { syncMode: 'full', guests: [guest()] })).status).toBe(200);
    expect((await test('/guests/checkin', guest({ lastName: '' }))).status).toBe(422);
    expect((await t.api('GET', `${base}/guests`, { key: k.test })).status).toBe(200);
    expect(await rosterRows()).toEqual(before);
    const rows = await t.server.database.db.selectFrom('guests').select('id').where('pms_guest_id', '=', String(g.pmsGuestId)).execute();
    expect(rows).toEqual([]);
    // The same calls with the live key do write (so the counting above can see writes).
    expect((await live('/guests/checkin', g)).status).toBe(200);
    const after = await rosterRows();
    expect(after.guests).toBe(before.guests + 1);
    expect(after.rooms).toBe(before.rooms + 1);
    expect(after.activity).toBe(before.activity + 1);
  });

  it('test-key requests publish no roster event (no dashboard update) while live ones do', async () => {
    const g = guest();
    // Test-key requests first, then the same guest live: events arrive in commit order
    // (on PostgreSQL asynchronously, by NOTIFY), so once the live ones are in, any event of
    // the test-key requests would be too.
    const seen: RosterChange[] = [];
    const unsubscribe = t.server.bus.subscribe(hotelId, (c) => seen.push(c));
    try {
      expect((await test('/guests/checkin', g)).status).toBe(200);
      expect((await test('/guests/update', { pmsGuestId: g.pmsGuestId, roomNumber: `m-${randomId(4)}` })).status).toBe(200);
      expect((await test('/guests/checkout', { pmsGuestId: g.pmsGuestId })).status).toBe(200);
      expect((await live('/guests/checkin', g)).status).toBe(200);
      expect((await live('/guests/update', { pmsGuestId: g.pmsGuestId, firstName: 'Changed' })).status).toBe(200);
      expect((await live('/guests/checkout', { pmsGuestId: g.pmsGuestId })).status).toBe(200);
      const ofGuest = () => seen.flatMap((e) => e.changes.filter((c) => c.pmsGuestId === g.pmsGuestId).map((c) => [c.action, c.pmsGuestId]));
      await expect.poll(ofGuest).toHaveLength(3);
      expect(ofGuest()).toEqual([
        ['guest.checked_in', g.pmsGuestId],
        ['guest.updated', g.pmsGuestId],
        ['guest.checked_out', g.pmsGuestId],
      ]);
    } finally {
      unsubscribe();
    }
    const liveEvents = seen.filter((e) => e.changes.some((c) => c.pmsGuestId === g.pmsGuestId));
    expect(liveEvents.every((e) => e.hotelId === hotelId)).toBe(true);
  });

  it('live responses never carry _sandbox (check-in, update, checkout, GET) and use req_ ids', async () => {
    const g = guest();
    const responses = [
      await live('/guests/checkin', g),
      await live('/guests/update', { pmsGuestId: g.pmsGuestId, adults: 1 }),
      await live('/guests/checkout', { pmsGuestId: g.pmsGuestId }),
      await t.api('GET', `${base}/guests`, { key: k.live }),
      await live('/guests/checkin', guest({ lastName: '' })),
    ];
    for (const res of responses) {
      expect(res.body).not.toHaveProperty('_sandbox');
      expect(res.body.requestId).toMatch(LIVE_REQ);
    }
    expect(responses.slice(0, 4).map((r) => r.status)).toEqual([200, 200, 200, 200]);
  });

  it('a test key validates identically (same 422 bodies apart from requestId)', async () => {
    const cases: Array<[string, unknown]> = [
      ['/guests/checkin', guest({ roomNo: '1' })],
      ['/guests/checkin', guest({ lastName: '', phone: '0049', adults: 100, language: 'EN', nationality: 'AB' })],
      ['/guests/checkin', guest({ checkInDate: '2026-02-30', firstName: '' })],
      ['/guests/checkin', guest({ checkInDate: '2026-11-23', checkOutDate: '2026-11-22' })],
      ['/guests/checkin', guest({ roomNumber: '   ' })],
      ['/guests/checkin', {}],
      ['/guests/update', { pmsGuestId: 'x', roomNumber: 'R'.repeat(21), children: '2' }],
      ['/guests/update', { pmsGuestId: 'x', checkInDate: '2026-12-02', checkOutDate: '2026-12-01' }],
      ['/guests/update', { firstName: 'no id' }],
      ['/guests/checkout', { pmsGuestId: '' }],
      ['/guests/checkout', { pmsGuestId: 'x', roomNumber: '1' }],
      ['/guests/sync', { syncMode: 'partial', guests: [guest(), { ...guest(), pmsGuestId: 'dup' }, { ...guest(), pmsGuestId: 'dup', email: 'nope' }] }],
    ];
    for (const [path, body] of cases) {
      const l = await live(path, body);
      const s = await test(path, body);
      expect(l.status, `${path} ${JSON.stringify(body)}`).toBe(422);
      expect(s.status).toBe(422);
      expect(withoutRequestId(s.body)).toEqual(withoutRequestId(l.body));
      expect(l.body.requestId).toMatch(LIVE_REQ);
      expect(s.body.requestId).toMatch(TEST_REQ);
      expect(s.body).not.toHaveProperty('_sandbox');
    }
  });

  it('a valid sync with a test key counts every listed guest as checkedIn and changes nothing', async () => {
    const live1 = guest();
    await live('/guests/checkin', live1);
    const before = await rosterRows();
    const res = await test('/guests/sync', { syncMode: 'full', guests: [guest(), guest({ roomNumber: live1.roomNumber })] });
    expect(res.body.requestId).toMatch(TEST_REQ);
    expect(res.status, res.text).toBe(200);
    expect(res.body.summary).toEqual({ received: 2, checkedIn: 2, updated: 0, checkedOut: 0, unchanged: 0, manualSkipped: 0 });
    expect(await rosterRows()).toEqual(before);
  });

  it('once authenticated with a test key, errors carry req_test_ ids (400, 415, 413, 422)', async () => {
    const url = `${base}/guests/checkin`;
    const errors = [
      await t.api('POST', url, { key: k.test, body: guest() }), // no Idempotency-Key
      await t.api('POST', url, { key: k.test, body: guest(), idempotencyKey: '' }),
      await t.api('POST', url, { key: k.test, idempotencyKey: uniqueKey(), rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
      await t.api('POST', url, { key: k.test, idempotencyKey: uniqueKey(), rawBody: '[]', headers: { 'content-type': 'application/json' } }),
      await t.api('POST', url, {
        key: k.test,
        idempotencyKey: uniqueKey(),
        rawBody: JSON.stringify(guest({ lastName: 'x'.repeat(1024 * 1024) })),
        headers: { 'content-type': 'application/json' },
      }),
      await test('/guests/checkin', guest({ adults: -1 })),
    ];
    expect(errors.map((r) => [r.status, r.body.code])).toEqual([
      [400, 'IDEMPOTENCY_KEY_REQUIRED'],
      [400, 'IDEMPOTENCY_KEY_INVALID'],
      [415, 'UNSUPPORTED_MEDIA_TYPE'],
      [400, 'INVALID_JSON'],
      [413, 'PAYLOAD_TOO_LARGE'],
      [422, 'VALIDATION_ERROR'],
    ]);
    for (const r of errors) expect(r.body.requestId, r.text).toMatch(TEST_REQ);
  });

  it('responses before authentication use req_ ids (401 for a wrong test key, 404 and 405 even with a valid test key)', async () => {
    const other = await t.addHotel(`other-${engine}-${randomId(4).toLowerCase()}`);
    const unauthorized = [
      await t.post(`${base}/guests/checkin`, guest(), { key: `pms_test_${randomId(24)}` }),
      await t.post(`${base}/guests/checkin`, guest(), { key: other.test }), // a test key of another hotel
      await t.api('GET', `${base}/guests`, { key: `pms_test_${randomId(24)}` }),
    ];
    for (const r of unauthorized) {
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ status: 'error', code: 'UNAUTHORIZED', requestId: expect.stringMatching(LIVE_REQ) });
    }
    const notFound = await t.api('GET', `${base}/nothing`, { key: k.test });
    expect(notFound.status).toBe(404);
    expect(notFound.body.requestId).toMatch(LIVE_REQ);
    const notAllowed = await t.api('DELETE', `${base}/guests`, { key: k.test });
    expect(notAllowed.status).toBe(405);
    expect(notAllowed.body.requestId).toMatch(LIVE_REQ);
  });

  it('idempotency: test keys have idempotency like live keys (replay of the stored test response)', async () => {
    const key = uniqueKey('tm');
    const g = guest();
    const first = await test('/guests/checkin', g, { idempotencyKey: key });
    const replay = await test('/guests/checkin', g, { idempotencyKey: key });
    expect(first.status).toBe(200);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ ...first.body, _idempotent: true });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    // The live key of the same pair is another scope: the same Idempotency-Key is free there.
    const liveRes = await live('/guests/checkin', g, { idempotencyKey: key });
    expect(liveRes.status).toBe(200);
    expect(liveRes.body).not.toHaveProperty('_idempotent');
    expect(liveRes.body.guestId).toMatch(/^guest_/);
  });
});
