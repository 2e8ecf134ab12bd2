import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import { issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type TestServer } from '../support/harness.js';

// The API reference, "Test keys: trigger values": a test key's trigger values answer exactly what a live key gets in the
// same situation. Each case makes the live situation for real with the pair's live key,
// then sends the trigger with its test key, and compares the two answers: status, code,
// the body's members and their kinds, the headers. Nothing of the roster is written.

const LIVE_REQ = /^req_(?!test_)[A-Za-z0-9]+$/;
const TEST_REQ = /^req_test_[A-Za-z0-9]+$/;
/** Live guest ids are `guest_` + 20 base-36 characters; a test key's are `test_` + the same. */
const TEST_GUEST_ID = /^test_[0-9a-z]{20}$/;

const TRANSPORT = new Set(['keep-alive', 'connection']);

/** Headers whose values differ from answer to answer (time, size, counts). */
const VARYING = new Set(['date', 'content-length', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'retry-after', 'keep-alive', 'connection']);

/** The body's shape: each member's name and kind, nested, in order. */
function shape(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map(shape);
  if (typeof value === 'object') return Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, shape(v)]);
  return typeof value;
}

/** Live and test answers to the same situation: same status, code, body shape, headers. */
function expectSameAnswer(live: ApiResponse, test: ApiResponse): void {
  expect(test.status, test.text).toBe(live.status);
  expect(test.body.code).toBe(live.body.code);
  expect(live.body.requestId).toMatch(LIVE_REQ);
  expect(test.body.requestId).toMatch(TEST_REQ);
  expect(shape(test.body)).toEqual(shape(live.body));
  // Connection handling is the transport's (a live 429 answered before its body was read closes the connection).
  const names = (r: ApiResponse) =>
    Object.keys(r.headers)
      .filter((n) => !TRANSPORT.has(n))
      .sort();
  expect(names(test)).toEqual(names(live));
  for (const [name, value] of Object.entries(live.headers)) {
    if (!VARYING.has(name)) expect(test.headers[name], name).toBe(value);
  }
}

describe.each(testEngines())('test-mode trigger values answer as live (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let hotelId: string;
  let k: IssuedKeyPair;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    hotelId = (await t.server.database.db.selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    k = await issueKeyPair(t.server.database.db, t.slug);
  });

  const live = (path: string, body: unknown, idempotencyKey = uniqueKey()) => t.post(`${base}${path}`, body, { key: k.live, idempotencyKey });
  const test = (path: string, body: unknown, idempotencyKey = uniqueKey()) => t.post(`${base}${path}`, body, { key: k.test, idempotencyKey });

  /** Rows of the hotel's roster, activity and outgoing events, and the test key's idempotency records. */
  async function stored(): Promise<Record<string, number>> {
    const db = t.server.database.db;
    const count = async (table: 'guests' | 'room_assignments' | 'activity_log' | 'webhook_events'): Promise<number> =>
      Number(
        (
          await db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('hotel_id', '=', hotelId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const records = await db
      .selectFrom('idempotency_records')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('api_key_id', '=', `${k.keyId}_test`)
      .executeTakeFirstOrThrow();
    return {
      guests: await count('guests'),
      rooms: await count('room_assignments'),
      activity: await count('activity_log'),
      events: await count('webhook_events'),
      testRecords: Number(records.n),
    };
  }

  it('409 ROOM_OCCUPIED: check-in, room move and sync into room innsync-test-409, as a live key into a held room', async () => {
    const holder = guest({ roomNumber: `H-${k.keyId.slice(-6)}` });
    expect((await live('/guests/checkin', holder)).status).toBe(200);
    const liveCheckin = await live('/guests/checkin', guest({ roomNumber: holder.roomNumber }));
    expect(liveCheckin.body.code).toBe('ROOM_OCCUPIED');
    const mover = guest();
    expect((await live('/guests/checkin', mover)).status).toBe(200);
    const liveMove = await live('/guests/update', { pmsGuestId: mover.pmsGuestId, roomNumber: holder.roomNumber });
    expect(liveMove.body.code).toBe('ROOM_OCCUPIED');

    const before = await stored();
    const testCheckin = await test('/guests/checkin', guest({ roomNumber: ' innsync-test-409 ' }));
    expectSameAnswer(liveCheckin, testCheckin);
    expect(testCheckin.body.message).toBe('Room innsync-test-409 is held by another active guest.');
    expect(testCheckin.body.currentGuest).toEqual({
      pmsGuestId: 'innsync-test-holder',
      lastName: 'Sandbox',
      checkInDate: expect.stringMatching(/^\d{4}-\d\d-\d\d$/),
    });
    expectSameAnswer(liveMove, await test('/guests/update', { pmsGuestId: 'G-1', roomNumber: 'innsync-test-409' }));
    const testSync = await test('/guests/sync', { syncMode: 'full', guests: [guest(), guest({ roomNumber: 'innsync-test-409' })] });
    expect(testSync.status).toBe(409);
    expect(testSync.body.code).toBe('ROOM_OCCUPIED');
    // A sync meets a room held by a guest entered by hotel staff: no pmsGuestId.
    expect(testSync.body.currentGuest).toEqual({ pmsGuestId: null, lastName: 'Sandbox', checkInDate: expect.any(String) });
    expect(testSync.body.message).toMatch(/^Room innsync-test-409 \(listed for PMS-\w+\) is held by a guest entered by hotel staff; nothing was changed\.$/);
    expect(await stored()).toEqual(before);
  });

  it('409 GUEST_ALREADY_CHECKED_IN: check-in of pmsGuestId innsync-test-409, as a live check-in of a guest in house', async () => {
    const g = guest();
    expect((await live('/guests/checkin', g)).status).toBe(200);
    const liveAgain = await live('/guests/checkin', g);
    expect(liveAgain.body.code).toBe('GUEST_ALREADY_CHECKED_IN');

    const before = await stored();
    const testAgain = await test('/guests/checkin', guest({ pmsGuestId: 'innsync-test-409', roomNumber: '214' }));
    expectSameAnswer(liveAgain, testAgain);
    expect(testAgain.body).toMatchObject({
      message: 'Guest innsync-test-409 is already checked in.',
      guestId: expect.stringMatching(TEST_GUEST_ID),
      roomNumber: '214',
    });
    expect(await stored()).toEqual(before);
    // The active stay it names is the key's own fake guestId of that pmsGuestId.
    expect((await test('/guests/update', { pmsGuestId: 'innsync-test-409' })).body.guestId).toBe(testAgain.body.guestId);
  });

  it('404 GUEST_NOT_FOUND: update and checkout of pmsGuestId innsync-test-404, as a live second checkout', async () => {
    const g = guest();
    expect((await live('/guests/checkin', g)).status).toBe(200);
    expect((await live('/guests/checkout', { pmsGuestId: g.pmsGuestId })).status).toBe(200);
    const liveSecond = await live('/guests/checkout', { pmsGuestId: g.pmsGuestId });
    expect(liveSecond.body.code).toBe('GUEST_NOT_FOUND');
    const liveUpdate = await live('/guests/update', { pmsGuestId: g.pmsGuestId, firstName: 'Grace' });
    expect(liveUpdate.body.code).toBe('GUEST_NOT_FOUND');

    const before = await stored();
    const testCheckout = await test('/guests/checkout', { pmsGuestId: 'innsync-test-404' });
    expectSameAnswer(liveSecond, testCheckout);
    expect(testCheckout.body.message).toBe('No active guest with pmsGuestId innsync-test-404.');
    expectSameAnswer(liveUpdate, await test('/guests/update', { pmsGuestId: 'innsync-test-404', firstName: 'Grace' }));
    expect(await stored()).toEqual(before);
  });

  it('429 RATE_LIMITED: pmsGuestId innsync-test-429, as a live key past its check-in limit (headers, Retry-After, retryAfter)', async () => {
    // 60 check-ins a minute per key: the limit is counted before the Idempotency-Key is read,
    // so requests without one spend it at no cost.
    let liveLimited: ApiResponse | null = null;
    for (let i = 0; i <= 60 && !liveLimited; i++) {
      const res = await t.api('POST', `${base}/guests/checkin`, { key: k.live, body: guest() });
      if (res.status === 429) liveLimited = res;
    }
    if (!liveLimited) throw new Error('the live key was never limited');
    expect(liveLimited.headers['x-ratelimit-remaining']).toBe('0');

    const before = await stored();
    const testLimited = await test('/guests/checkin', guest({ pmsGuestId: 'innsync-test-429' }));
    expectSameAnswer(liveLimited, testLimited);
    expect(testLimited.body.message).toBe(`Rate limit exceeded; retry in ${testLimited.body.retryAfter} seconds.`);
    expect(testLimited.headers['retry-after']).toBe(String(testLimited.body.retryAfter));
    expect(testLimited.headers['x-ratelimit-remaining']).toBe('0');
    expect(testLimited.headers.ratelimit).toMatch(/^"checkin";r=0;t=\d+$/);
    // Every endpoint, each with its own limit's headers; GET by its pmsGuestId filter.
    const sync = await test('/guests/sync', { syncMode: 'full', guests: [guest({ pmsGuestId: 'innsync-test-429' })] });
    expect([sync.status, sync.headers['ratelimit-policy']]).toEqual([429, '"sync";q=10;w=3600']);
    const list = await t.api('GET', `${base}/guests?pmsGuestId=innsync-test-429`, { key: k.test });
    expect([list.status, list.body.code, list.headers['x-ratelimit-remaining']]).toEqual([429, 'RATE_LIMITED', '0']);
    // The key's real limit is untouched: the next ordinary request is answered.
    expect((await test('/guests/checkin', guest())).status).toBe(200);
    expect((await stored()).guests).toBe(before.guests);
  });

  it('503 SERVICE_UNAVAILABLE: pmsGuestId innsync-test-503 answers with Retry-After and the registry message, without rate-limit headers', async () => {
    const before = await stored();
    for (const [path, body] of [
      ['/guests/checkin', guest({ pmsGuestId: 'innsync-test-503' })],
      ['/guests/checkout', { pmsGuestId: 'innsync-test-503' }],
      ['/guests/sync', { syncMode: 'full', guests: [guest({ pmsGuestId: 'innsync-test-503' })] }],
    ] as const) {
      const res = await test(path, body);
      expect(res.status, path).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      // As live's while storage is down (test/http/storage-unavailable.test.ts compares them): refused before the limit is counted.
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
      expect(res.body).toEqual({
        status: 'error',
        code: 'SERVICE_UNAVAILABLE',
        message: ERRORS.SERVICE_UNAVAILABLE.message,
        requestId: expect.stringMatching(TEST_REQ),
      });
    }
    expect(await stored()).toEqual(before);
  });

  it('a trigger answers as live after the claim: its Idempotency-Key is not consumed, and one reused for another body is 422 first', async () => {
    const key = uniqueKey();
    const refused = await test('/guests/checkout', { pmsGuestId: 'innsync-test-404' }, key);
    expect(refused.status).toBe(404);
    // Not consumed: the same key serves another request, whose answer it then keeps.
    const ok = await test('/guests/checkout', { pmsGuestId: 'G-7' }, key);
    expect(ok.status).toBe(200);
    const reused = await test('/guests/checkout', { pmsGuestId: 'innsync-test-404' }, key);
    expect([reused.status, reused.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
  });

  it('a live key has no triggers: innsync-test-409 is an ordinary room and innsync-test-404 an ordinary guest', async () => {
    const g = guest({ pmsGuestId: `innsync-test-404`, roomNumber: 'innsync-test-409' });
    expect((await live('/guests/checkin', g)).status).toBe(200);
    expect((await live('/guests/checkout', { pmsGuestId: 'innsync-test-404' })).status).toBe(200);
  });

  it("the test key's guestId of a pmsGuestId is the same in every answer of that key, and another key's differs", async () => {
    const g = guest();
    const first = await test('/guests/checkin', g);
    const second = await test('/guests/checkin', g);
    expect(first.body.guestId).toMatch(TEST_GUEST_ID);
    expect(second.body.guestId).toBe(first.body.guestId);
    expect((await test('/guests/update', { pmsGuestId: g.pmsGuestId, firstName: 'Grace' })).body.guestId).toBe(first.body.guestId);
    expect((await test('/guests/checkout', { pmsGuestId: g.pmsGuestId })).body.guestId).toBe(first.body.guestId);
    expect((await test('/guests/checkin', guest())).body.guestId).not.toBe(first.body.guestId);
    const other = await issueKeyPair(t.server.database.db, t.slug);
    const otherAnswer = await t.post(`${base}/guests/checkin`, g, { key: other.test });
    expect(otherAnswer.body.guestId).toMatch(TEST_GUEST_ID);
    expect(otherAnswer.body.guestId).not.toBe(first.body.guestId);
  });
});
