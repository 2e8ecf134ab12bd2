import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import type { IssuedKeyPair } from '../../src/operations.js';
import {
  addStaffUser,
  DashboardClient,
  eventually,
  hotelIdOf,
  sleep,
  withoutRequestId,
  type DashboardResponse,
  type EventStream,
  type SseEvent,
} from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer, pmsBase } from '../support/harness.js';

// docs/dashboard.md Security, Isolation: every query is
// scoped to the session user's hotel; another hotel's guest, key pair, request or user
// answers 404 RECORD_NOT_FOUND as if it did not exist, and its live events never reach
// this hotel's streams. Two hotels A and B on one server, each with an admin.

const pmsGuest = (pmsGuestId: string, roomNumber: string, lastName: string) => ({
  pmsGuestId,
  lastName,
  firstName: 'Bea',
  roomNumber,
  checkInDate: '2026-11-20',
  checkOutDate: '2026-11-27',
});
const walkIn = (roomNumber: string, lastName: string) => ({ lastName, roomNumber, checkInDate: '2026-11-23', checkOutDate: '2026-11-25' });

describe.each(testEngines())('dashboard isolation between hotels (%s)', (engine) => {
  let t: TestServer;
  const db = (): Db => t.server.database.db;
  let slugB: string;
  let keysB: IssuedKeyPair;
  let hotelA: string;
  let hotelB: string;
  let adminA: DashboardClient;
  let adminB: DashboardClient;
  let adminBUser: { id: string; email: string };
  let deskB: { id: string; email: string };
  /** B's records, by kind. */
  const b = { pmsGuest: '', walkIn: '', pair: '', request: '', anonymousRequest: '' };
  /** A's records, to show A's lists are not empty by accident. */
  const a = { pmsGuest: '', walkIn: '', request: '' };

  beforeAll(async () => {
    t = await startTestServer(engine);
    slugB = `iso-b-${engine}`;
    keysB = await t.addHotel(slugB);
    hotelA = await hotelIdOf(db(), t.slug);
    hotelB = await hotelIdOf(db(), slugB);
    const adminAUser = await addStaffUser(db(), t.slug, `admin@iso-a-${engine}.example`, 'admin');
    adminBUser = await addStaffUser(db(), slugB, `admin@iso-b-${engine}.example`, 'admin');
    deskB = await addStaffUser(db(), slugB, `desk@iso-b-${engine}.example`, 'receptionist');
    adminA = await DashboardClient.loggedIn(t, adminAUser.email);
    adminB = await DashboardClient.loggedIn(t, adminBUser.email);

    // B's records: a PMS guest and a walk-in (in rooms A uses too), a key pair, logged requests, a user.
    const baseB = `${pmsBase(slugB)}`;
    const pmsB = await t.post(`${baseB}/guests/checkin`, pmsGuest('ISO-B-1', '1', 'Bravo'), { key: keysB.live });
    expect(pmsB.status).toBe(200);
    b.pmsGuest = pmsB.body.guestId as string;
    b.request = pmsB.body.requestId as string;
    const anon = await t.post(`${baseB}/guests/checkin`, pmsGuest('ISO-B-X', '9', 'Nobody'), { key: null });
    expect(anon.status).toBe(401);
    b.anonymousRequest = anon.body.requestId as string;
    const walkB = await adminB.post('/guests', walkIn('2', 'Bwalker'));
    expect(walkB.status).toBe(201);
    b.walkIn = walkB.body.guest.id as string;
    const pairB = await adminB.post('/keys');
    expect(pairB.status).toBe(201);
    b.pair = pairB.body.keyId as string;

    // A's records, in the same room numbers: rooms are per hotel.
    const baseA = `${t.pmsBase}`;
    const pmsA = await t.post(`${baseA}/guests/checkin`, pmsGuest('ISO-A-1', '2', 'Alpha'), { key: t.keys.live });
    expect(pmsA.status).toBe(200);
    a.pmsGuest = pmsA.body.guestId as string;
    a.request = pmsA.body.requestId as string;
    const walkA = await adminA.post('/guests', walkIn('1', 'Awalker'));
    expect(walkA.status).toBe(201);
    a.walkIn = walkA.body.guest.id as string;

    // Both hotels' request rows are written (batched) before any test reads the log.
    await eventually(async () => {
      const rows = await db().selectFrom('request_log').select('id').where('id', 'in', [b.request, b.anonymousRequest, a.request]).execute();
      return rows.length === 3 ? rows : undefined;
    });
  });
  afterAll(() => t.close());

  /** Everything of hotel B that A could try to change. */
  async function snapshotB() {
    const d = db();
    return {
      guests: await d.selectFrom('guests').selectAll().where('hotel_id', '=', hotelB).orderBy('id').execute(),
      rooms: await d.selectFrom('room_assignments').selectAll().where('hotel_id', '=', hotelB).orderBy('id').execute(),
      keys: await d.selectFrom('api_keys').select(['id', 'revoked_at']).where('hotel_id', '=', hotelB).orderBy('id').execute(),
      users: await d.selectFrom('staff_users').select(['id', 'email', 'role', 'deactivated_at']).where('hotel_id', '=', hotelB).orderBy('id').execute(),
      sessions: await d.selectFrom('staff_sessions').select('id').where('hotel_id', '=', hotelB).orderBy('id').execute(),
      activity: await d.selectFrom('activity_log').select('id').where('hotel_id', '=', hotelB).orderBy('id').execute(),
    };
  }

  const expectNotFound = (res: DashboardResponse, what: string, reference: DashboardResponse) => {
    expect(res.status, what).toBe(404);
    expect(res.body.code, what).toBe('RECORD_NOT_FOUND');
    // Word for word what an id that exists nowhere gets: nothing tells B's ids apart.
    expect(withoutRequestId(res.body), what).toEqual(withoutRequestId(reference.body));
  };

  it("docs/dashboard.md Security Isolation: A's admin asking for B's guests (GET, PATCH, checkout), key pairs (revoke), request-log rows and users (deactivate) always gets 404 RECORD_NOT_FOUND, as for ids that exist nowhere; nothing of B changes", async () => {
    const before = await snapshotB();
    const nowhere = {
      guest: await adminA.get('/guests/gst_doesnotexist'),
      patch: await adminA.patch('/guests/gst_doesnotexist', { lastName: 'Hijacked' }),
      checkout: await adminA.post('/guests/gst_doesnotexist/checkout', { confirmPmsGuest: true }),
      revoke: await adminA.post('/keys/key_doesnotexist/revoke'),
      request: await adminA.get('/requests/req_doesnotexist'),
      deactivate: await adminA.post('/users/user_doesnotexist/deactivate'),
    };
    for (const [what, res] of Object.entries(nowhere)) {
      expect(res.status, what).toBe(404);
      expect(res.body.code, what).toBe('RECORD_NOT_FOUND');
    }

    for (const id of [b.pmsGuest, b.walkIn]) {
      expectNotFound(await adminA.get(`/guests/${id}`), `GET guest ${id}`, nowhere.guest);
      for (const body of [{ lastName: 'Hijacked' }, { roomNumber: '77' }, {}]) {
        expectNotFound(await adminA.patch(`/guests/${id}`, body), `PATCH guest ${id}`, nowhere.patch);
      }
      for (const body of [{ confirmPmsGuest: true }, {}]) {
        expectNotFound(await adminA.post(`/guests/${id}/checkout`, body), `checkout ${id}`, nowhere.checkout);
      }
    }
    for (const pair of [b.pair, keysB.keyId]) expectNotFound(await adminA.post(`/keys/${pair}/revoke`), `revoke ${pair}`, nowhere.revoke);
    for (const id of [b.request, b.anonymousRequest]) expectNotFound(await adminA.get(`/requests/${id}`), `request ${id}`, nowhere.request);
    for (const id of [deskB.id, adminBUser.id]) expectNotFound(await adminA.post(`/users/${id}/deactivate`), `deactivate ${id}`, nowhere.deactivate);

    expect(await snapshotB()).toEqual(before);
    // B works as before: its keys, its session, its guests.
    const baseB = `${pmsBase(slugB)}`;
    for (const key of [keysB.live, keysB.test]) expect((await t.api('GET', `${baseB}/guests`, { key })).status).toBe(200);
    expect((await adminB.get('/session')).status).toBe(200);
    expect((await adminB.get(`/guests/${b.walkIn}`)).body.guest).toMatchObject({ lastName: 'Bwalker', roomNumber: '2', status: 'active' });
    expect((await adminB.get(`/guests/${b.pmsGuest}`)).body.guest).toMatchObject({ lastName: 'Bravo', roomNumber: '1', status: 'active' });
    expect((await adminB.get(`/requests/${b.request}`)).status).toBe(200);

    // And the other way round.
    expect((await adminB.get(`/guests/${a.walkIn}`)).status).toBe(404);
    expect((await adminB.get(`/requests/${a.request}`)).status).toBe(404);
  });

  it("docs/dashboard.md Security Isolation: A's lists (guests, activity, keys, requests, users) never contain B's rows, and B's never A's", async () => {
    type Lists = { guests: string[]; activityGuests: string[]; activity: string[]; keys: string[]; requests: string[]; users: string[] };
    const lists = async (c: DashboardClient): Promise<Lists> => {
      const guests = (await c.get('/guests')).body.guests as Array<{ id: string }>;
      const activity = (await c.get('/activity?limit=200')).body.entries as Array<{ id: string; guestId: string | null }>;
      const keys = (await c.get('/keys')).body.keys as Array<{ keyId: string }>;
      // The hotel's keys' requests, and (listed apart) those no valid key sent to its slug.
      const requests = [
        ...((await c.get('/requests?limit=200')).body.requests as Array<{ id: string }>),
        ...((await c.get('/requests?limit=200&sender=none')).body.requests as Array<{ id: string }>),
      ];
      const users = (await c.get('/users')).body.users as Array<{ id: string }>;
      return {
        guests: guests.map((g) => g.id),
        activityGuests: activity.map((e) => e.guestId ?? ''),
        activity: activity.map((e) => e.id),
        keys: keys.map((k) => k.keyId),
        requests: requests.map((r) => r.id),
        users: users.map((u) => u.id),
      };
    };
    const listA = await lists(adminA);
    const listB = await lists(adminB);

    const idsOf = async (table: 'activity_log' | 'staff_users', hotelId: string) =>
      (await db().selectFrom(table).select('id').where('hotel_id', '=', hotelId).execute()).map((r) => r.id);
    const pairsOf = async (hotelId: string) => [
      ...new Set((await db().selectFrom('api_keys').select('pair_id').where('hotel_id', '=', hotelId).execute()).map((r) => r.pair_id)),
    ];

    // Each hotel sees its own…
    expect(listA.guests).toEqual(expect.arrayContaining([a.pmsGuest, a.walkIn]));
    expect(listB.guests.sort()).toEqual([b.pmsGuest, b.walkIn].sort());
    expect(listA.activity.sort()).toEqual((await idsOf('activity_log', hotelA)).sort());
    expect(listB.activity.sort()).toEqual((await idsOf('activity_log', hotelB)).sort());
    expect(listA.keys.sort()).toEqual((await pairsOf(hotelA)).sort());
    expect(listB.keys.sort()).toEqual([b.pair, keysB.keyId].sort());
    expect(listA.users.sort()).toEqual((await idsOf('staff_users', hotelA)).sort());
    expect(listB.users.sort()).toEqual([adminBUser.id, deskB.id].sort());
    expect(listA.requests).toContain(a.request);
    expect(listB.requests).toEqual(expect.arrayContaining([b.request, b.anonymousRequest]));

    // …and nothing of the other.
    const none = (list: string[], forbidden: string[]) => expect(list.filter((x) => forbidden.includes(x))).toEqual([]);
    none(listA.guests, listB.guests);
    none(listA.activityGuests, [b.pmsGuest, b.walkIn]);
    none(listA.activity, listB.activity);
    none(listA.keys, listB.keys);
    none(listA.requests, listB.requests);
    none(listA.users, listB.users);
    none(listB.guests, listA.guests);
    none(listB.activity, listA.activity);
    none(listB.keys, listA.keys);
    none(listB.requests, listA.requests);
    none(listB.users, listA.users);

    // Every request row A sees is A's: its key, or refused on A's slug.
    const rowsA = await db().selectFrom('request_log').select(['id', 'hotel_id', 'slug']).where('id', 'in', listA.requests).execute();
    expect(rowsA.every((r) => r.hotel_id === hotelA || (r.hotel_id === null && r.slug === t.slug))).toBe(true);

    // Filters do not reach across either: B's guest by id, pmsGuestId or name.
    for (const q of [b.pmsGuest, b.walkIn, 'ISO-B-1', 'bravo', 'bwalk']) {
      const res = await adminA.get(`/activity?guest=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      expect(res.body.entries, q).toEqual([]);
    }
    for (const q of ['?mode=live', '?status=4xx', '?endpoint=checkin', '?sender=none', '?sender=none&status=4xx'])
      none(
        ((await adminA.get(`/requests${q}&limit=200`)).body.requests as Array<{ id: string }>).map((r) => r.id),
        listB.requests,
      );
  });

  it("docs/dashboard.md Live events / Isolation: a session of hotel A never receives B's live events", async () => {
    const streams: EventStream[] = [];
    try {
      const streamA = await adminA.events();
      const streamB = await adminB.events();
      streams.push(streamA, streamB);
      expect(streamA.status).toBe(200);
      expect((await streamA.next()).event).toBe('ready');
      expect((await streamB.next()).event).toBe('ready');

      // B changes its roster three ways; B's stream hears each.
      const baseB = `${pmsBase(slugB)}`;
      const inB = await t.post(`${baseB}/guests/checkin`, pmsGuest('ISO-B-LIVE', '5', 'Bravolive'), { key: keysB.live });
      expect(inB.status).toBe(200);
      const walkB = await adminB.post('/guests', walkIn('6', 'Bwalklive'));
      expect(walkB.status).toBe(201);
      const outB = await adminB.post(`/guests/${String(walkB.body.guest.id)}/checkout`);
      expect(outB.status).toBe(200);
      const bGuests = [b.pmsGuest, b.walkIn, inB.body.guestId as string, walkB.body.guest.id as string];
      const ofB = (e: SseEvent) => e.event === 'roster' && (e.data.changes as Array<{ guestId: string }>).some((c) => bGuests.includes(c.guestId));
      // With PostgreSQL, changes travel by NOTIFY: read until the last one arrives.
      const heardB: SseEvent[] = [];
      while (!heardB.some((e) => e.event === 'roster' && e.data.changes[0].action === 'guest.checked_out')) heardB.push(await streamB.next());
      expect(heardB.filter(ofB).map((e) => [e.data.changes[0].action, e.data.changes[0].roomNumber])).toEqual([
        ['guest.checked_in', '5'],
        ['guest.checked_in', '6'],
        ['guest.checked_out', '6'],
      ]);

      // Then A changes its roster: A hears its own change, and nothing of B before or after it.
      const inA = await t.post(`${t.pmsBase}/guests/checkin`, pmsGuest('ISO-A-LIVE', '5', 'Alphalive'), { key: t.keys.live });
      expect(inA.status).toBe(200);
      const heardA: SseEvent[] = [];
      while (!heardA.some((e) => e.event === 'roster' && e.data.changes[0].guestId === inA.body.guestId)) heardA.push(await streamA.next());
      expect(heardA.at(-1)?.data.changes).toEqual([{ action: 'guest.checked_in', guestId: inA.body.guestId, pmsGuestId: 'ISO-A-LIVE', roomNumber: '5' }]);
      await sleep(500);
      heardA.push(...streamA.pending());
      expect(heardA.filter(ofB)).toEqual([]);
      expect(
        heardA
          .flatMap((e) => (e.event === 'roster' ? (e.data.changes as Array<{ pmsGuestId: string | null }>) : []))
          .filter((c) => c.pmsGuestId?.startsWith('ISO-B')),
      ).toEqual([]);
    } finally {
      for (const s of streams) s.close();
    }
  });
});
