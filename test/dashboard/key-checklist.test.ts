import { describe, it, type ExpectStatic } from 'vitest';
import { CHECKLIST_ITEMS, type ChecklistItem } from '../../src/pms/key-checklist.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type TestServer } from '../support/harness.js';
import { firstInFreshWindow } from '../support/rate-limit-headers.js';
import { scaled } from '../support/test-run.js';

// docs/dashboard.md, go-live checklist: real PMS requests with a pair's test and live key
// over HTTPS, then GET /dashboard/api/keys/:keyId/checklist, item by item, on both engines.
//
// A per-key 429 says Retry-After = the seconds left in the fixed one-minute window, so
// honouring it takes up to a minute of real time. The 429s are made first, everything
// else is sent while they run down, and both engines run side by side (concurrent tests):
// the file waits for one Retry-After at most, never a faked clock.

type Shown = Partial<Record<ChecklistItem, string>>;
type ChecklistBody = { items: Array<{ item: ChecklistItem; test: { shown: boolean }; live: { shown: boolean } }> };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The checklist answer: the items of `test` and `live` shown by those request ids, every other not shown. */
function answer(expect: ExpectStatic, keyId: string, test: Shown, live: Shown): unknown {
  const state = (requestId: string | undefined) =>
    requestId === undefined
      ? { shown: false, shownAt: null, requestId: null }
      : { shown: true, shownAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), requestId };
  return {
    keyId,
    items: CHECKLIST_ITEMS.map((item) => ({ item, test: state(test[item]), live: state(live[item]) })),
  };
}

describe('go-live checklist of a key pair (dashboard JSON API)', () => {
  it.concurrent.for(testEngines())(
    'docs/dashboard.md go-live checklist: each behaviour is ticked per mode by the request that first showed it, and only then (%s)',
    { timeout: scaled(150_000) },
    async (engine, { expect }) => {
      const t = await startTestServer(engine);
      try {
        await checklistScenario(t, engine, expect);
      } finally {
        await t.close();
      }
    },
  );
});

async function checklistScenario(t: TestServer, engine: string, expect: ExpectStatic): Promise<void> {
  const base = `${t.pmsBase}`;
  const { keyId, test: testKey, live: liveKey } = t.keys;
  const admin = await DashboardClient.loggedIn(t, (await addStaffUser(t.server.database.db, t.slug, `admin-${engine}@keys.example`, 'admin')).email);
  const desk = await DashboardClient.loggedIn(t, (await addStaffUser(t.server.database.db, t.slug, `desk-${engine}@keys.example`, 'receptionist')).email);
  const checklist = async (): Promise<unknown> => {
    const res = await admin.get(`/keys/${keyId}/checklist`);
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  /** Polls until `item` is ticked in `mode`: the request log is written in batches. */
  const ticked = (mode: 'test' | 'live', item: ChecklistItem) =>
    expect.poll(async () => ((await checklist()) as ChecklistBody).items.find((i) => i.item === item)?.[mode]?.shown).toBe(true);
  const list = (key: string): Promise<ApiResponse> => t.api('GET', `${base}/guests`, { key });
  const post = (key: string, endpoint: string, body: unknown, idempotencyKey = uniqueKey()) =>
    t.post(`${base}/guests/${endpoint}`, body, { key, idempotencyKey });
  const ok = (res: ApiResponse): string => {
    expect(res.status, res.text).toBe(200);
    return res.body.requestId as string;
  };

  // Admins only; a pair of no hotel of the session is 404.
  expect((await desk.get(`/keys/${keyId}/checklist`)).status).toBe(403);
  expect((await admin.get('/keys/kp_nosuchpair/checklist')).status).toBe(404);
  expect(await checklist()).toEqual(answer(expect, keyId, {}, {}));

  // 429s first: GET /guests allows 30 a minute per key. The test key asks again at once.
  async function limited(key: string): Promise<{ retryAfter: number; receivedAt: number }> {
    const { res: first } = await firstInFreshWindow(() => list(key));
    ok(first);
    for (let i = 1; i < 30; i++) ok(await list(key));
    const res = await list(key);
    expect(res.status).toBe(429);
    return { retryAfter: res.body.retryAfter as number, receivedAt: Date.now() };
  }
  const [, liveLimited] = await Promise.all([limited(testKey), limited(liveKey)]);
  const early = await list(testKey);
  expect(early.status).toBe(429);
  const testLimited = { retryAfter: early.body.retryAfter as number, receivedAt: Date.now() };

  // Test key: check-in, an update without a room, then one with a roomNumber (the sandbox
  // stores nothing: the request says it is a move), checkout, sync, a replayed check-in.
  const test: Shown = {};
  const sandboxGuest = guest();
  const replayKey = uniqueKey();
  test.checkin = ok(await post(testKey, 'checkin', sandboxGuest, replayKey));
  test.update = ok(await post(testKey, 'update', { pmsGuestId: sandboxGuest.pmsGuestId, firstName: 'Grace' }));
  await ticked('test', 'update');
  expect(await checklist()).toEqual(answer(expect, keyId, test, {}));
  test.room_move = ok(await post(testKey, 'update', { pmsGuestId: sandboxGuest.pmsGuestId, roomNumber: 'T-2' }));
  test.checkout = ok(await post(testKey, 'checkout', { pmsGuestId: sandboxGuest.pmsGuestId }));
  test.sync = ok(await post(testKey, 'sync', { syncMode: 'full', guests: [guest()] }));
  const replay = await post(testKey, 'checkin', sandboxGuest, replayKey);
  expect(replay.status).toBe(200);
  expect(replay.body._idempotent).toBe(true);
  await ticked('test', 'idempotent_replay');
  test.idempotent_replay = await replayRowId(t, replayKey, test.checkin);
  // The test key rehearses a 409 with the trigger room (the API reference, "Test keys: trigger values"), then sends the
  // same guest into another room.
  const occupied = guest({ roomNumber: 'innsync-test-409' });
  const refusedInTest = await post(testKey, 'checkin', occupied);
  expect(refusedInTest.status).toBe(409);
  expect(refusedInTest.body.code).toBe('ROOM_OCCUPIED');
  test.conflict_handled = ok(await post(testKey, 'checkin', { ...occupied, roomNumber: 'T-3' }));

  // Live key: a 409 ROOM_OCCUPIED repeated as it was is not handling it; an update that
  // leaves the room is no move.
  const live: Shown = {};
  const first = guest({ roomNumber: '101' });
  const second = guest({ roomNumber: '101' });
  live.checkin = ok(await post(liveKey, 'checkin', first));
  for (let i = 0; i < 2; i++) {
    const refused = await post(liveKey, 'checkin', second);
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('ROOM_OCCUPIED');
  }
  live.update = ok(await post(liveKey, 'update', { pmsGuestId: first.pmsGuestId, firstName: 'Grace' }));
  await ticked('live', 'update');
  expect(await checklist()).toEqual(answer(expect, keyId, test, live));

  // Corrected: the same guest into a free room.
  const corrected = { ...second, roomNumber: '102' };
  live.conflict_handled = ok(await post(liveKey, 'checkin', corrected));
  live.room_move = ok(await post(liveKey, 'update', { pmsGuestId: first.pmsGuestId, roomNumber: '103' }));
  const checkoutKey = uniqueKey();
  live.checkout = ok(await post(liveKey, 'checkout', { pmsGuestId: first.pmsGuestId }, checkoutKey));
  live.sync = ok(await post(liveKey, 'sync', { syncMode: 'full', guests: [corrected] }));
  const again = await post(liveKey, 'checkout', { pmsGuestId: first.pmsGuestId }, checkoutKey);
  expect(again.body._idempotent).toBe(true);
  await ticked('live', 'idempotent_replay');
  live.idempotent_replay = await replayRowId(t, checkoutKey, live.checkout);
  // The test key's retry came too early; neither key has asked again since.
  expect(await checklist()).toEqual(answer(expect, keyId, test, live));

  // After Retry-After: both keys ask again, and the item is ticked.
  const until = Math.max(testLimited.receivedAt + testLimited.retryAfter * 1000, liveLimited.receivedAt + liveLimited.retryAfter * 1000);
  await sleep(Math.max(0, until - Date.now()) + 100);
  test.retry_after_honoured = ok(await list(testKey));
  live.retry_after_honoured = ok(await list(liveKey));
  await ticked('test', 'retry_after_honoured');
  await ticked('live', 'retry_after_honoured');
  expect(await checklist()).toEqual(answer(expect, keyId, test, live));
}

/** The request-log id of the replay with this Idempotency-Key (its answer repeats the first request's id). */
async function replayRowId(t: TestServer, idempotencyKey: string, firstId: string | undefined): Promise<string> {
  const rows = await t.server.database.db.selectFrom('request_log').select('id').where('idempotency_key', '=', idempotencyKey).execute();
  const replay = rows.find((r) => r.id !== firstId);
  if (!replay) throw new Error(`no replay logged for ${idempotencyKey}`);
  return replay.id;
}
