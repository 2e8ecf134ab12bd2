import fs from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReceptionistGuest } from '../../src/roster/receptionist-service.js';
import type { RosterChange } from '../../src/events/roster-events.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type TestServer, pmsBase } from '../support/harness.js';

describe.each(testEngines())('POST /guests/sync over HTTPS (%s)', (engine) => {
  let t: TestServer;
  let n = 0;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  /** A fresh hotel per test: its own roster and its own sync rate limit (10/hour). */
  async function hotel() {
    const slug = `sync-${engine}-${++n}`;
    const keys = await t.addHotel(slug);
    const base = `${pmsBase(slug)}`;
    const row = await t.server.database.db.selectFrom('hotels').select('id').where('slug', '=', slug).executeTakeFirstOrThrow();
    return {
      hotelId: row.id,
      base,
      keys,
      checkin: (g: Record<string, unknown>) => t.post(`${base}/guests/checkin`, g, { key: keys.live }),
      sync: (guests: unknown[], opts: { key?: string; idempotencyKey?: string } = {}) =>
        t.post(`${base}/guests/sync`, { syncMode: 'full', guests }, { key: opts.key ?? keys.live, idempotencyKey: opts.idempotencyKey ?? uniqueKey('sync') }),
      list: async () => (await t.api('GET', `${base}/guests`, { key: keys.live })).body.guests as Array<Record<string, unknown>>,
      walkIn: (room: string, lastName = 'Walkin') =>
        createReceptionistGuest(
          { db: t.server.database.db, bus: t.server.bus },
          row.id,
          { type: 'staff', id: 'user_test', mode: null },
          {
            firstName: null,
            lastName,
            phone: null,
            roomNumber: room,
            checkInDate: '2026-11-20',
            checkOutDate: '2026-11-30',
            language: null,
            adults: null,
            children: null,
            nationality: null,
            email: null,
          },
        ),
    };
  }

  const roomsOf = (list: Array<Record<string, unknown>>) =>
    Object.fromEntries(list.map((g) => [String(g.pmsGuestId ?? `receptionist:${String(g.lastName)}`), g.roomNumber]));

  it('every summary count and each details shape', async () => {
    const h = await hotel();
    const stay = guest({ pmsGuestId: 'STAY', roomNumber: '1' });
    const change = guest({ pmsGuestId: 'CHANGE', roomNumber: '2', lastName: 'Old' });
    const leave = guest({ pmsGuestId: 'LEAVE', roomNumber: '3', lastName: 'Leaver' });
    for (const g of [stay, change, leave]) expect((await h.checkin(g)).status).toBe(200);
    await h.walkIn('99');
    const arrive = guest({ pmsGuestId: 'ARRIVE', roomNumber: '4', lastName: 'Arrival' });
    const res = await h.sync([stay, { ...change, lastName: 'New', roomNumber: '5' }, arrive]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'synced',
      summary: { received: 3, checkedIn: 1, updated: 1, checkedOut: 1, unchanged: 1, manualSkipped: 1 },
      details: {
        checkedIn: [{ pmsGuestId: 'ARRIVE', roomNumber: '4', lastName: 'Arrival' }],
        checkedOut: [{ pmsGuestId: 'LEAVE', roomNumber: '3', lastName: 'Leaver' }],
        updated: [
          { pmsGuestId: 'CHANGE', roomNumber: '5', lastName: 'New', changes: { lastName: { from: 'Old', to: 'New' }, roomNumber: { from: '2', to: '5' } } },
        ],
      },
      requestId: expect.stringMatching(/^req_/),
    });
    expect(roomsOf(await h.list())).toEqual({ STAY: '1', CHANGE: '5', ARRIVE: '4', 'receptionist:Walkin': '99' });
  });

  it('absent fields keep stored values, explicit null clears; a second sync of the same list is all unchanged', async () => {
    const h = await hotel();
    const g = guest({ pmsGuestId: 'KEEP', roomNumber: '7', phone: '+4930123456', email: 'keep@example.com' });
    await h.checkin(g);
    const { phone: _phone, ...withoutPhone } = g;
    const listed = { ...withoutPhone, email: null };
    const first = await h.sync([listed]);
    expect(first.body.summary).toMatchObject({ updated: 1, unchanged: 0 });
    expect(first.body.details.updated[0].changes).toEqual({ email: { from: 'keep@example.com', to: null } });
    const [stored] = await h.list();
    expect(stored).toMatchObject({ phone: '+4930123456', email: null });
    // Events arrive in commit order (on PostgreSQL by NOTIFY, perhaps late): once a fence
    // check-in's event is in, every earlier change's event is too, and none may follow.
    const events: RosterChange[] = [];
    const off = t.server.bus.subscribe(h.hotelId, (e) => events.push(e));
    const fenced = async (pmsGuestId: string, roomNumber: string): Promise<void> => {
      await h.checkin(guest({ pmsGuestId, roomNumber }));
      await expect.poll(() => events.some((e) => e.changes.some((c) => c.pmsGuestId === pmsGuestId))).toBe(true);
    };
    await fenced('FENCE-BEFORE', '8');
    events.length = 0;
    const second = await h.sync([listed, guest({ pmsGuestId: 'FENCE-BEFORE', roomNumber: '8' })]);
    expect(second.body.summary).toEqual({ received: 2, checkedIn: 0, updated: 0, checkedOut: 0, unchanged: 2, manualSkipped: 0 });
    // Nothing changed, so no roster event: the next check-in's is the first to arrive.
    await fenced('FENCE-AFTER', '9');
    off();
    expect(events).toEqual([
      { hotelId: h.hotelId, at: expect.any(String), changes: [expect.objectContaining({ action: 'guest.checked_in', pmsGuestId: 'FENCE-AFTER' })] },
    ]);
  });

  it('a room swap and a 3-way rotation among listed guests succeed', async () => {
    const h = await hotel();
    const a = guest({ pmsGuestId: 'A', roomNumber: '101' });
    const b = guest({ pmsGuestId: 'B', roomNumber: '102' });
    const c = guest({ pmsGuestId: 'C', roomNumber: '201' });
    const d = guest({ pmsGuestId: 'D', roomNumber: '202' });
    const e = guest({ pmsGuestId: 'E', roomNumber: '203' });
    for (const g of [a, b, c, d, e]) await h.checkin(g);
    const res = await h.sync([
      { ...a, roomNumber: '102' },
      { ...b, roomNumber: '101' },
      { ...c, roomNumber: '202' },
      { ...d, roomNumber: '203' },
      { ...e, roomNumber: '201' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.summary).toMatchObject({ updated: 5, checkedIn: 0, checkedOut: 0 });
    expect(roomsOf(await h.list())).toEqual({ A: '102', B: '101', C: '202', D: '203', E: '201' });
    // History stays: each guest has its released old assignment and one active one.
    const active = await t.server.database.db
      .selectFrom('room_assignments')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('hotel_id', '=', h.hotelId)
      .where('released_at', 'is', null)
      .executeTakeFirstOrThrow();
    const all = await t.server.database.db
      .selectFrom('room_assignments')
      .select(({ fn }) => fn.countAll<number>().as('n'))
      .where('hotel_id', '=', h.hotelId)
      .executeTakeFirstOrThrow();
    expect([Number(active.n), Number(all.n)]).toEqual([5, 10]);
  });

  it('a target room held by a receptionist guest fails the whole sync with 409 ROOM_OCCUPIED; the roster is identical before and after', async () => {
    const h = await hotel();
    await h.checkin(guest({ pmsGuestId: 'X', roomNumber: '1' }));
    await h.checkin(guest({ pmsGuestId: 'Y', roomNumber: '2' }));
    await h.walkIn('50', 'Desk');
    const before = await h.list();
    const activityBefore = await t.server.database.db.selectFrom('activity_log').selectAll().where('hotel_id', '=', h.hotelId).execute();
    const res = await h.sync([guest({ pmsGuestId: 'NEW', roomNumber: '3' }), guest({ pmsGuestId: 'X', roomNumber: '50' })]);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: 'error', code: 'ROOM_OCCUPIED', currentGuest: { pmsGuestId: null, lastName: 'Desk', checkInDate: '2026-11-20' } });
    expect(await h.list()).toEqual(before);
    expect(await t.server.database.db.selectFrom('activity_log').selectAll().where('hotel_id', '=', h.hotelId).execute()).toEqual(activityBefore);
  });

  it('a 2,000-guest sync (long work: on SQLite, in the long writer’s thread) refused by a room hotel staff hold changes nothing, and the hotel’s next writes go through', async () => {
    const h = await hotel();
    await h.walkIn('1500', 'Desk');
    const before = await h.list();
    const list = Array.from({ length: 2000 }, (_, i) => guest({ pmsGuestId: `LONG${i}`, roomNumber: String(i + 1) }));
    const refused = await h.sync(list);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'ROOM_OCCUPIED', currentGuest: { lastName: 'Desk' } });
    expect(await h.list()).toEqual(before);
    // The writer was let go: a check-in and the list without the held room both commit.
    expect((await h.checkin(guest({ pmsGuestId: 'AFTER', roomNumber: '9999' }))).status).toBe(200);
    const applied = await h.sync(list.filter((g) => g.roomNumber !== '1500'));
    expect(applied.status).toBe(200);
    expect(applied.body.summary).toMatchObject({ received: 1999, checkedIn: 1999, checkedOut: 1, manualSkipped: 1 });
    expect(await h.list()).toHaveLength(2000);
  });

  it('an answer of megabytes (sent in pieces) arrives whole over HTTP/1.1 and HTTP/2, its content-length its size in bytes; its replay too', async () => {
    const h = await hotel();
    // Long names of more than one byte a character: an answer of about 2 MB.
    const list = Array.from({ length: 8000 }, (_, i) =>
      guest({ pmsGuestId: `PIECE${i}`, roomNumber: String(i + 1), lastName: `Łukasiewicz-Ødegård-${'é'.repeat(60)}` }),
    );
    const key = uniqueKey('pieces');
    const first = await h.sync(list, { idempotencyKey: key });
    expect(first.status).toBe(200);
    expect(Buffer.byteLength(first.text)).toBeGreaterThan(1024 * 1024);
    expect(first.headers['content-length']).toBe(String(Buffer.byteLength(first.text)));
    expect(first.body.summary).toMatchObject({ received: 8000, checkedIn: 8000 });
    const cert = fs.readFileSync(path.join(t.config.dataDir, 'tls', 'cert.pem'), 'utf8');
    const h2 = new Agent({ allowH2: true, connect: { ca: cert, servername: 'localhost' } });
    try {
      const res = await request(`${t.baseUrl}${h.base}/guests/sync`, {
        method: 'POST',
        dispatcher: h2,
        headers: { authorization: `Bearer ${h.keys.live}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ syncMode: 'full', guests: list }),
      });
      const text = await res.body.text();
      expect(res.statusCode).toBe(200);
      expect(res.headers['idempotent-replayed']).toBe('true');
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
      expect(JSON.parse(text)).toEqual({ ...first.body, _idempotent: true });
    } finally {
      await h2.close();
    }
  });

  it('receptionist guests are never updated or checked out and count in manualSkipped', async () => {
    const h = await hotel();
    await h.walkIn('10', 'One');
    await h.walkIn('11', 'Two');
    const res = await h.sync([]);
    expect(res.body.summary).toEqual({ received: 0, checkedIn: 0, updated: 0, checkedOut: 0, unchanged: 0, manualSkipped: 2 });
    expect((await h.list()).map((g) => g.source)).toEqual(['receptionist', 'receptionist']);
  });

  it('an empty list checks out every PMS guest and frees their rooms', async () => {
    const h = await hotel();
    for (let i = 1; i <= 4; i++) await h.checkin(guest({ pmsGuestId: `E${i}`, roomNumber: String(i) }));
    const res = await h.sync([]);
    expect(res.body.summary).toMatchObject({ received: 0, checkedOut: 4 });
    expect(res.body.details.checkedOut).toHaveLength(4);
    expect(await h.list()).toEqual([]);
    expect((await h.checkin(guest({ roomNumber: '1' }))).status).toBe(200);
  });

  it('a sync replayed with its idempotency key is not re-applied', async () => {
    const h = await hotel();
    const key = uniqueKey('sync-replay');
    const list = [guest({ pmsGuestId: 'R1', roomNumber: '1' })];
    const first = await h.sync(list, { idempotencyKey: key });
    expect(first.body.summary.checkedIn).toBe(1);
    // The guest leaves through a checkout event; replaying the sync must not bring it back.
    expect((await t.post(`${h.base}/guests/checkout`, { pmsGuestId: 'R1' }, { key: h.keys.live })).status).toBe(200);
    const replay = await h.sync(list, { idempotencyKey: key });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual({ ...first.body, _idempotent: true });
    expect(await h.list()).toEqual([]);
  });

  it('side effects: one activity entry per guest changed plus sync.completed; one batch roster event after commit', async () => {
    const h = await hotel();
    await h.checkin(guest({ pmsGuestId: 'S1', roomNumber: '1' }));
    await h.checkin(guest({ pmsGuestId: 'S2', roomNumber: '2' }));
    const events: RosterChange[] = [];
    const off = t.server.bus.subscribe(h.hotelId, (e) => events.push(e));
    const before = new Set((await t.server.database.db.selectFrom('activity_log').select('id').where('hotel_id', '=', h.hotelId).execute()).map((r) => r.id));
    const res = await h.sync([guest({ pmsGuestId: 'S1', roomNumber: '1', lastName: 'Renamed' }), guest({ pmsGuestId: 'S3', roomNumber: '3' })]);
    expect(res.status).toBe(200);
    // On PostgreSQL events travel by NOTIFY (asynchronously), and the two check-ins'
    // events may still arrive after subscribing: wait for the sync's, ignore those.
    await expect.poll(() => events.some((e) => e.changes.some((c) => c.pmsGuestId === 'S3'))).toBe(true);
    off();
    const syncEvents = events.filter((e) => e.changes.some((c) => c.action !== 'guest.checked_in' || c.pmsGuestId === 'S3'));
    const entries = (
      await t.server.database.db
        .selectFrom('activity_log')
        .select(['id', 'action', 'pms_guest_id', 'actor_type', 'actor_id', 'changes'])
        .where('hotel_id', '=', h.hotelId)
        .execute()
    ).filter((e) => !before.has(e.id));
    expect(entries.map((e) => `${e.action}:${e.pms_guest_id ?? ''}`).sort()).toEqual(
      ['guest.checked_in:S3', 'guest.checked_out:S2', 'guest.updated:S1', 'sync.completed:'].sort(),
    );
    expect(entries.every((e) => e.actor_type === 'pms' && e.actor_id === h.keys.keyId)).toBe(true);
    expect(JSON.parse(String(entries.find((e) => e.action === 'sync.completed')?.changes))).toEqual(res.body.summary);
    expect(syncEvents).toHaveLength(1);
    expect(syncEvents[0]?.changes.map((c) => `${c.action}:${c.pmsGuestId ?? ''}`).sort()).toEqual(
      ['guest.checked_in:S3', 'guest.checked_out:S2', 'guest.updated:S1'].sort(),
    );
  });

  it('test mode validates as live, reads and writes nothing, and counts every listed guest as checkedIn', async () => {
    const h = await hotel();
    await h.checkin(guest({ pmsGuestId: 'LIVE1', roomNumber: '1' }));
    await h.walkIn('2');
    const before = await h.list();
    const res = await h.sync([guest({ pmsGuestId: 'LIVE1', roomNumber: ' 1 ' }), guest({ pmsGuestId: 'T2', roomNumber: '2', lastName: 'Tester' })], {
      key: h.keys.test,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'synced',
      summary: { received: 2, checkedIn: 2, updated: 0, checkedOut: 0, unchanged: 0, manualSkipped: 0 },
      details: {
        checkedIn: [expect.objectContaining({ pmsGuestId: 'LIVE1', roomNumber: '1' }), { pmsGuestId: 'T2', roomNumber: '2', lastName: 'Tester' }],
        checkedOut: [],
        updated: [],
      },
      requestId: expect.stringMatching(/^req_test_/),
    });
    expect(await h.list()).toEqual(before);
    const invalid = await h.sync([guest({ checkInDate: '2026-02-30' })], { key: h.keys.test });
    expect(invalid.status).toBe(422);
    expect(invalid.body.code).toBe('INVALID_DATE_FORMAT');
  });

  it('a sync of 2,000 guests applies completely (set-based writes in chunks)', async () => {
    const h = await hotel();
    const list = Array.from({ length: 2000 }, (_, i) => guest({ pmsGuestId: `BULK${i}`, roomNumber: String(1000 + i) }));
    const first = await h.sync(list);
    expect(first.body.summary).toMatchObject({ received: 2000, checkedIn: 2000 });
    const changed = list.map((g, i) => (i % 10 === 0 ? { ...g, lastName: 'Changed' } : g)).filter((_, i) => i % 100 !== 1);
    const second: ApiResponse = await h.sync(changed);
    expect(second.body.summary).toEqual({ received: 1980, checkedIn: 0, updated: 200, checkedOut: 20, unchanged: 1780, manualSkipped: 0 });
    expect(await h.list()).toHaveLength(1980);
  });
});
