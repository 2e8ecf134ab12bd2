import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import type { IssuedKeyPair } from '../../src/operations.js';
import { addStaffUser, DashboardClient, type DashboardResponse } from '../support/dashboard-client.js';
import { startTestServer, testEngines, uniqueKey, type ApiResponse, type TestServer, pmsBase } from '../support/harness.js';

// docs/dashboard.md JSON API: walk-in guests (the PMS API's field rules and room
// invariant), staff edits and check-outs, sync beside walk-ins, and the activity log,
// through real HTTPS requests on both engines.

const GUEST_KEYS = [
  'adults',
  'anonymisedAt',
  'checkInDate',
  'checkOutDate',
  'children',
  'createdAt',
  'email',
  'firstName',
  'id',
  'language',
  'lastName',
  'nationality',
  'phone',
  'pmsGuestId',
  'roomNumber',
  'source',
  'status',
  'updatedAt',
];

const walkIn = (over: Record<string, unknown> = {}) => ({
  lastName: 'Walker',
  firstName: 'Jo',
  roomNumber: 'W1',
  checkInDate: '2026-11-23',
  checkOutDate: '2026-11-25',
  ...over,
});
const pmsGuest = (pmsGuestId: string, roomNumber: string, over: Record<string, unknown> = {}) => ({
  pmsGuestId,
  lastName: 'Holder',
  firstName: 'Hal',
  roomNumber,
  checkInDate: '2026-11-20',
  checkOutDate: '2026-11-27',
  ...over,
});

describe.each(testEngines())('dashboard roster: walk-ins, edits, check-outs (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let desk: DashboardClient;
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    const user = await addStaffUser(db(), t.slug, `desk-${engine}@roster.example`, 'receptionist');
    desk = await DashboardClient.loggedIn(t, user.email);
  });
  afterAll(() => t.close());

  const checkIn = (body: Record<string, unknown>, key = t.keys.live): Promise<ApiResponse> => t.post(`${base}/guests/checkin`, body, { key });
  const pmsList = async () => (await t.api('GET', `${base}/guests`)).body.guests as Array<Record<string, unknown>>;
  const guestCount = async () => (await db().selectFrom('guests').select('id').execute()).length;

  it('docs/dashboard.md JSON API POST /guests: 201 a walk-in (source receptionist, pmsGuestId null, trimmed room) in the guest shape; GET /guests and /guests/:id show it, the PMS list too', async () => {
    const res = await desk.post(
      '/guests',
      walkIn({ roomNumber: '  310 ', phone: '+4930123456', adults: 2, language: 'en', nationality: 'DE', email: 'jo@example.com' }),
    );
    expect(res.status).toBe(201);
    const g = res.body.guest as Record<string, unknown>;
    expect(Object.keys(g).sort()).toEqual(GUEST_KEYS);
    expect(g).toEqual({
      id: expect.any(String),
      source: 'receptionist',
      pmsGuestId: null,
      status: 'active',
      firstName: 'Jo',
      lastName: 'Walker',
      phone: '+4930123456',
      email: 'jo@example.com',
      language: 'en',
      nationality: 'DE',
      adults: 2,
      children: null,
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-25',
      roomNumber: '310',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      anonymisedAt: null,
    });
    const list = await desk.get('/guests');
    expect(list.status).toBe(200);
    expect(list.body.guests).toContainEqual(g);
    const one = await desk.get(`/guests/${String(g.id)}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ guest: g, rooms: [{ roomNumber: '310', assignedAt: expect.any(String), releasedAt: null }] });
    expect(await pmsList()).toContainEqual(expect.objectContaining({ guestId: g.id, source: 'receptionist', pmsGuestId: null, roomNumber: '310' }));
  });

  it('docs/dashboard.md JSON API GET /guests: active guests of both sources in natural room order', async () => {
    expect((await checkIn(pmsGuest(`ORD-${engine}`, '1000'))).status).toBe(200);
    for (const room of ['900', '99', '9']) expect((await desk.post('/guests', walkIn({ roomNumber: room }))).status).toBe(201);
    const rooms = ((await desk.get('/guests')).body.guests as Array<{ roomNumber: string }>).map((g) => g.roomNumber);
    const ours = rooms.filter((r) => ['9', '99', '900', '1000'].includes(r));
    expect(ours).toEqual(['9', '99', '900', '1000']);
    const sources = new Set(((await desk.get('/guests')).body.guests as Array<{ source: string }>).map((g) => g.source));
    expect(sources).toEqual(new Set(['pms', 'receptionist']));
  });

  it('docs/dashboard.md JSON API POST /guests: the PMS field rules, with errors naming the field: REQUIRED, INVALID_DATE_FORMAT, DATE_ORDER, UNKNOWN_FIELD (pmsGuestId), …; nothing is stored', async () => {
    const before = await guestCount();
    const cases: Array<[string, Record<string, unknown>, string, string, string]> = [
      // [name, body, code, field, field code]
      ['missing lastName', walkIn({ lastName: undefined }), 'VALIDATION_ERROR', 'lastName', 'REQUIRED'],
      ['empty lastName', walkIn({ lastName: '' }), 'VALIDATION_ERROR', 'lastName', 'TOO_SHORT'],
      ['missing roomNumber', walkIn({ roomNumber: undefined }), 'VALIDATION_ERROR', 'roomNumber', 'REQUIRED'],
      ['blank roomNumber', walkIn({ roomNumber: '   ' }), 'VALIDATION_ERROR', 'roomNumber', 'TOO_SHORT'],
      ['not a calendar date', walkIn({ checkInDate: '2026-02-30' }), 'INVALID_DATE_FORMAT', 'checkInDate', 'INVALID_DATE_FORMAT'],
      ['not a date', walkIn({ checkOutDate: '25.11.2026' }), 'INVALID_DATE_FORMAT', 'checkOutDate', 'INVALID_DATE_FORMAT'],
      ['check-out before check-in', walkIn({ checkInDate: '2026-11-23', checkOutDate: '2026-11-22' }), 'VALIDATION_ERROR', 'checkOutDate', 'DATE_ORDER'],
      ['a pmsGuestId', walkIn({ pmsGuestId: 'P-1' }), 'VALIDATION_ERROR', 'pmsGuestId', 'UNKNOWN_FIELD'],
      ['a bad phone', walkIn({ phone: '0301234' }), 'VALIDATION_ERROR', 'phone', 'INVALID_FORMAT'],
      ['a bad language', walkIn({ language: 'english' }), 'VALIDATION_ERROR', 'language', 'INVALID_VALUE'],
      ['adults out of range', walkIn({ adults: -1 }), 'VALIDATION_ERROR', 'adults', 'OUT_OF_RANGE'],
      ['adults as text', walkIn({ adults: '2' }), 'VALIDATION_ERROR', 'adults', 'INVALID_TYPE'],
    ];
    for (const [name, raw, code, field, fieldCode] of cases) {
      const body = JSON.parse(JSON.stringify(raw)) as Record<string, unknown>;
      const res = await desk.post('/guests', body);
      expect(res.status, name).toBe(422);
      expect(res.body.code, name).toBe(code);
      expect(res.body.errors, name).toContainEqual({ field, code: fieldCode, message: expect.any(String) });
      // The PMS API says the same about the same fields (its body adds a pmsGuestId).
      if (field !== 'pmsGuestId') {
        const pms = await checkIn({ pmsGuestId: `RULES-${engine}`, ...body }, t.keys.test);
        expect(pms.status, `PMS: ${name}`).toBe(422);
        expect({ code: res.body.code, errors: res.body.errors }, name).toEqual({ code: pms.body.code, errors: pms.body.errors });
      }
    }
    // Several problems are all listed; a date error decides the code.
    const many = await desk.post('/guests', { roomNumber: 'M1', checkInDate: '2026-13-01', checkOutDate: '2026-11-25' });
    expect(many.status).toBe(422);
    expect(many.body.code).toBe('INVALID_DATE_FORMAT');
    expect(many.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['checkInDate', 'lastName']);
    expect(await guestCount()).toBe(before);
  });

  it('docs/dashboard.md JSON API POST /guests: a room held by a PMS guest or a walk-in is 409 ROOM_OCCUPIED with currentGuest {pmsGuestId, lastName, checkInDate}', async () => {
    const held = await checkIn(pmsGuest(`HOLD-${engine}`, '501', { lastName: 'Holder', checkInDate: '2026-11-20' }));
    expect(held.status).toBe(200);
    const before = await guestCount();
    for (const room of ['501', ' 501 ']) {
      const res = await desk.post('/guests', walkIn({ roomNumber: room }));
      expect(res.status, room).toBe(409);
      expect(res.body).toMatchObject({
        status: 'error',
        code: 'ROOM_OCCUPIED',
        currentGuest: { pmsGuestId: `HOLD-${engine}`, lastName: 'Holder', checkInDate: '2026-11-20' },
      });
      expect(Object.keys(res.body.currentGuest as object).sort()).toEqual(['checkInDate', 'lastName', 'pmsGuestId']);
    }
    const first = await desk.post('/guests', walkIn({ roomNumber: '502', lastName: 'First', checkInDate: '2026-11-21' }));
    expect(first.status).toBe(201);
    const second = await desk.post('/guests', walkIn({ roomNumber: '502', lastName: 'Second' }));
    expect(second.status).toBe(409);
    expect(second.body.currentGuest).toEqual({ pmsGuestId: null, lastName: 'First', checkInDate: '2026-11-21' });
    // The PMS cannot take a walk-in's room either.
    const pms = await checkIn(pmsGuest(`TAKE-${engine}`, '502'));
    expect(pms.status).toBe(409);
    expect(pms.body.code).toBe('ROOM_OCCUPIED');
    expect(await guestCount()).toBe(before + 1);
  });

  it('docs/dashboard.md JSON API PATCH /guests/:id: moves a walk-in to a free room (history shows both, the old released and free again), null clears, {} changes nothing, field rules hold', async () => {
    const created = await desk.post('/guests', walkIn({ roomNumber: '601', lastName: 'Mover', phone: '+4930555555' }));
    expect(created.status).toBe(201);
    const id = created.body.guest.id as string;

    const moved = await desk.patch(`/guests/${id}`, { roomNumber: '602', email: 'mover@example.com' });
    expect(moved.status).toBe(200);
    expect(moved.body.changes).toEqual({ roomNumber: { from: '601', to: '602' }, email: { from: null, to: 'mover@example.com' } });
    expect(moved.body.guest).toMatchObject({
      id,
      roomNumber: '602',
      email: 'mover@example.com',
      phone: '+4930555555',
      source: 'receptionist',
      status: 'active',
    });
    expect(Object.keys(moved.body.guest as object).sort()).toEqual(GUEST_KEYS);

    const detail = await desk.get(`/guests/${id}`);
    expect(detail.body.guest).toEqual(moved.body.guest);
    const rooms = detail.body.rooms as Array<{ roomNumber: string; assignedAt: string; releasedAt: string | null }>;
    expect(rooms).toEqual([
      { roomNumber: '601', assignedAt: expect.any(String), releasedAt: expect.any(String) },
      { roomNumber: '602', assignedAt: expect.any(String), releasedAt: null },
    ]);
    expect(rooms[0]?.releasedAt).toBe(rooms[1]?.assignedAt);
    // The old room is free again: another walk-in takes it.
    const next = await desk.post('/guests', walkIn({ roomNumber: '601', lastName: 'Follower' }));
    expect(next.status).toBe(201);

    // Into a held room: 409, and the guest stays where it is.
    await checkIn(pmsGuest(`HOLD2-${engine}`, '603', { lastName: 'Blocker', checkInDate: '2026-11-19' }));
    const blocked = await desk.patch(`/guests/${id}`, { roomNumber: ' 603 ' });
    expect(blocked.status).toBe(409);
    expect(blocked.body).toMatchObject({
      code: 'ROOM_OCCUPIED',
      currentGuest: { pmsGuestId: `HOLD2-${engine}`, lastName: 'Blocker', checkInDate: '2026-11-19' },
    });
    expect((await desk.get(`/guests/${id}`)).body.guest.roomNumber).toBe('602');

    const cleared = await desk.patch(`/guests/${id}`, { phone: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.changes).toEqual({ phone: { from: '+4930555555', to: null } });
    expect(cleared.body.guest.phone).toBeNull();
    const nothing = await desk.patch(`/guests/${id}`, {});
    expect(nothing.status).toBe(200);
    expect(nothing.body.changes).toEqual({});

    const rules: Array<[Record<string, unknown>, string, string]> = [
      [{ lastName: null }, 'lastName', 'INVALID_TYPE'],
      [{ checkOutDate: '2026-11-01' }, 'checkOutDate', 'DATE_ORDER'],
      [{ checkInDate: '2026-02-29' }, 'checkInDate', 'INVALID_DATE_FORMAT'],
      [{ pmsGuestId: 'ADOPT-1' }, 'pmsGuestId', 'UNKNOWN_FIELD'],
      [{ source: 'pms' }, 'source', 'UNKNOWN_FIELD'],
    ];
    for (const [body, field, code] of rules) {
      const res = await desk.patch(`/guests/${id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors, JSON.stringify(body)).toContainEqual({ field, code, message: expect.any(String) });
    }
    const after = (await desk.get(`/guests/${id}`)).body;
    expect(after.guest).toEqual(cleared.body.guest);
    expect(after.rooms).toHaveLength(2);

    const unknown = await desk.patch('/guests/gst_doesnotexist', { phone: null });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('RECORD_NOT_FOUND');
  });

  it('docs/dashboard.md JSON API PATCH /guests/:id: a PMS guest is 409 GUEST_MANAGED_BY_PMS and stays unchanged', async () => {
    const res = await checkIn(pmsGuest(`MANAGED-${engine}`, '701', { lastName: 'Managed' }));
    expect(res.status).toBe(200);
    const id = res.body.guestId as string;
    const before = (await desk.get(`/guests/${id}`)).body;
    expect(before.guest.source).toBe('pms');
    for (const body of [{ roomNumber: '702' }, { lastName: 'Changed' }, { phone: null }, {}]) {
      const patch = await desk.patch(`/guests/${id}`, body);
      expect(patch.status, JSON.stringify(body)).toBe(409);
      expect(patch.body.code).toBe('GUEST_MANAGED_BY_PMS');
    }
    expect((await desk.get(`/guests/${id}`)).body).toEqual(before);
    expect((await pmsList()).find((g) => g.pmsGuestId === `MANAGED-${engine}`)).toMatchObject({ roomNumber: '701', lastName: 'Managed' });
  });

  it('docs/dashboard.md JSON API POST /guests/:id/checkout: a PMS guest needs confirmPmsGuest (409 CONFIRMATION_REQUIRED, guest stays); with it 200 and the PMS API sees the guest gone; a walk-in needs none', async () => {
    const pmsGuestId = `OUT-${engine}`;
    const res = await checkIn(pmsGuest(pmsGuestId, '801', { lastName: 'Leaving' }));
    expect(res.status).toBe(200);
    const id = res.body.guestId as string;

    const attempts: Array<[string, () => Promise<DashboardResponse>]> = [
      ['no body', () => desk.post(`/guests/${id}/checkout`)],
      ['{}', () => desk.post(`/guests/${id}/checkout`, {})],
      ['false', () => desk.post(`/guests/${id}/checkout`, { confirmPmsGuest: false })],
      ['"true"', () => desk.post(`/guests/${id}/checkout`, { confirmPmsGuest: 'true' })],
    ];
    for (const [name, attempt] of attempts) {
      const refused = await attempt();
      expect(refused.status, name).toBe(409);
      expect(refused.body.code).toBe('CONFIRMATION_REQUIRED');
    }
    // A body that is JSON but not an object confirms nothing either: refused as such.
    const notAnObject = await desk.post(`/guests/${id}/checkout`, [true]);
    expect([notAnObject.status, notAnObject.body.code]).toEqual([400, 'INVALID_JSON']);
    expect((await desk.get('/guests')).body.guests.map((g: { id: string }) => g.id)).toContain(id);
    expect((await pmsList()).map((g) => g.pmsGuestId)).toContain(pmsGuestId);

    const out = await desk.post(`/guests/${id}/checkout`, { confirmPmsGuest: true });
    expect(out.status).toBe(200);
    expect(out.body.guest).toMatchObject({ id, pmsGuestId, source: 'pms', status: 'checked_out' });
    expect((await desk.get('/guests')).body.guests.map((g: { id: string }) => g.id)).not.toContain(id);
    expect((await pmsList()).map((g) => g.pmsGuestId)).not.toContain(pmsGuestId);
    const gone = await t.api('GET', `${base}/guests?pmsGuestId=${pmsGuestId}`);
    expect(gone.status).toBe(200);
    expect(gone.body.count).toBe(0);
    const detail = await desk.get(`/guests/${id}`);
    expect(detail.body.guest.status).toBe('checked_out');
    expect(detail.body.rooms).toEqual([{ roomNumber: '801', assignedAt: expect.any(String), releasedAt: expect.any(String) }]);
    // Checked out is not active: a second check-out finds nothing.
    const again = await desk.post(`/guests/${id}/checkout`, { confirmPmsGuest: true });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('RECORD_NOT_FOUND');
    // The room is free, and the PMS may check the guest in again.
    expect((await checkIn(pmsGuest(pmsGuestId, '801'))).status).toBe(200);

    const walk = await desk.post('/guests', walkIn({ roomNumber: '802' }));
    const walkOut = await desk.post(`/guests/${String(walk.body.guest.id)}/checkout`);
    expect(walkOut.status).toBe(200);
    expect(walkOut.body.guest).toMatchObject({ status: 'checked_out', source: 'receptionist', roomNumber: '802' });
    expect((await desk.post('/guests', walkIn({ roomNumber: '802' }))).status).toBe(201);
  });
});

describe.each(testEngines())('dashboard roster beside the PMS: sync and the activity log (%s)', (engine) => {
  let t: TestServer;
  const db = (): Db => t.server.database.db;

  /** A hotel of its own (its own roster and activity), with a key pair and a logged-in staff user. */
  async function hotel(name: string): Promise<{ slug: string; base: string; keys: IssuedKeyPair; staff: DashboardClient; userId: string; email: string }> {
    const slug = `${name}-${engine}`;
    const keys = await t.addHotel(slug);
    const user = await addStaffUser(db(), slug, `staff@${slug}.example`, 'receptionist');
    return { slug, base: `${pmsBase(slug)}`, keys, staff: await DashboardClient.loggedIn(t, user.email), userId: user.id, email: user.email };
  }

  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  it('a later full PMS sync leaves the walk-in untouched (manualSkipped 1)', async () => {
    const h = await hotel('sync');
    expect((await t.post(`${h.base}/guests/checkin`, pmsGuest('S-OLD', '11'), { key: h.keys.live })).status).toBe(200);
    const walk = await h.staff.post('/guests', walkIn({ roomNumber: '12', lastName: 'Stayer' }));
    expect(walk.status).toBe(201);
    const before = (await h.staff.get(`/guests/${String(walk.body.guest.id)}`)).body;

    const sync = await t.post(
      `${h.base}/guests/sync`,
      { syncMode: 'full', guests: [pmsGuest('S-NEW', '13', { lastName: 'Arrival' })] },
      { key: h.keys.live, idempotencyKey: uniqueKey('sync') },
    );
    expect(sync.status).toBe(200);
    expect(sync.body.summary).toEqual({ received: 1, checkedIn: 1, updated: 0, checkedOut: 1, unchanged: 0, manualSkipped: 1 });

    const after = (await h.staff.get(`/guests/${String(walk.body.guest.id)}`)).body;
    expect(after).toEqual(before);
    const rooms = ((await h.staff.get('/guests')).body.guests as Array<{ roomNumber: string; source: string; lastName: string }>).map((g) => [
      g.roomNumber,
      g.source,
      g.lastName,
    ]);
    expect(rooms).toEqual([
      ['12', 'receptionist', 'Stayer'],
      ['13', 'pms', 'Arrival'],
    ]);
  });

  it('docs/dashboard.md JSON API GET /activity: PMS and staff entries newest first with their actors; filters actorType, action, guest (id, pmsGuestId, name part any case); next/before pages are disjoint', async () => {
    const h = await hotel('activity');
    const pms = await t.post(`${h.base}/guests/checkin`, pmsGuest('ACT-1', '21', { lastName: 'Lovelace', firstName: 'Ada' }), { key: h.keys.live });
    expect(pms.status).toBe(200);
    // A test-key request records nothing.
    expect((await t.post(`${h.base}/guests/checkin`, pmsGuest('ACT-TEST', '29', { lastName: 'Sandbox' }), { key: h.keys.test })).status).toBe(200);
    const walk = await h.staff.post('/guests', walkIn({ roomNumber: '22', lastName: 'Hopper', firstName: 'Grace' }));
    expect(walk.status).toBe(201);
    const walkId = walk.body.guest.id as string;

    const first = await h.staff.get('/activity');
    expect(first.status).toBe(200);
    expect(first.body.next).toBeNull();
    expect(first.body.entries).toEqual([
      {
        id: expect.any(String),
        at: expect.any(String),
        actorType: 'staff',
        actor: { userId: h.userId, email: h.email },
        action: 'guest.checked_in',
        guestId: walkId,
        pmsGuestId: null,
        guestName: 'Hopper, Grace',
        guestAnonymised: false,
        roomNumber: '22',
        changes: expect.objectContaining({ lastName: { from: null, to: 'Hopper' }, roomNumber: { from: null, to: '22' } }),
      },
      {
        id: expect.any(String),
        at: expect.any(String),
        actorType: 'pms',
        actor: { keyId: h.keys.keyId, mode: 'live' },
        action: 'guest.checked_in',
        guestId: pms.body.guestId,
        pmsGuestId: 'ACT-1',
        guestName: 'Lovelace, Ada',
        guestAnonymised: false,
        roomNumber: '21',
        changes: expect.objectContaining({ lastName: { from: null, to: 'Lovelace' }, roomNumber: { from: null, to: '21' } }),
      },
    ]);

    // More history: a staff move with an edit (two entries), a PMS update, two check-outs.
    expect((await h.staff.patch(`/guests/${walkId}`, { roomNumber: '23', phone: '+4930777777' })).status).toBe(200);
    expect((await t.post(`${h.base}/guests/update`, { pmsGuestId: 'ACT-1', firstName: 'Augusta' }, { key: h.keys.live })).status).toBe(200);
    expect((await t.post(`${h.base}/guests/checkout`, { pmsGuestId: 'ACT-1' }, { key: h.keys.live })).status).toBe(200);
    expect((await h.staff.post(`/guests/${walkId}/checkout`)).status).toBe(200);

    type Entry = {
      id: string;
      at: string;
      actorType: string;
      actor: Record<string, unknown> | null;
      action: string;
      guestId: string;
      pmsGuestId: string | null;
      roomNumber: string | null;
      changes: Record<string, unknown>;
    };
    const get = async (q: string): Promise<Entry[]> => {
      const res = await h.staff.get(`/activity${q}`);
      expect(res.status, q).toBe(200);
      return res.body.entries as Entry[];
    };
    const all = await get('');
    expect(all).toHaveLength(7);
    const ats = all.map((e) => e.at);
    expect([...ats].sort().reverse()).toEqual(ats);
    expect(all.map((e) => e.action)).toEqual([
      'guest.checked_out',
      'guest.checked_out',
      'guest.updated',
      expect.stringMatching(/^guest\.(updated|room_moved)$/),
      expect.stringMatching(/^guest\.(updated|room_moved)$/),
      'guest.checked_in',
      'guest.checked_in',
    ]);

    const pmsOnly = await get('?actorType=pms');
    expect(pmsOnly.map((e) => e.action)).toEqual(['guest.checked_out', 'guest.updated', 'guest.checked_in']);
    expect(pmsOnly.every((e) => e.actorType === 'pms' && e.actor?.keyId === h.keys.keyId && e.actor?.mode === 'live')).toBe(true);
    const staffOnly = await get('?actorType=staff');
    expect(staffOnly).toHaveLength(4);
    expect(staffOnly.every((e) => e.actorType === 'staff' && e.actor?.email === h.email)).toBe(true);
    expect(await get('?actorType=system')).toEqual([]);

    const checkIns = await get('?action=guest.checked_in');
    expect(checkIns.map((e) => e.guestId)).toEqual([walkId, pms.body.guestId]);
    const checkOuts = await get('?action=guest.checked_out');
    // A check-out's room is the room left.
    expect(checkOuts.map((e) => [e.guestId, e.roomNumber])).toEqual([
      [walkId, '23'],
      [pms.body.guestId, '21'],
    ]);
    const moves = await get('?action=guest.room_moved');
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({ guestId: walkId, roomNumber: '23', changes: { roomNumber: { from: '22', to: '23' } } });
    expect(await get('?action=guest.room_moved&actorType=pms')).toEqual([]);

    const byName = await get('?guest=lovel');
    expect(byName.map((e) => e.pmsGuestId)).toEqual(['ACT-1', 'ACT-1', 'ACT-1']);
    expect((await get('?guest=LOVEL')).map((e) => e.id)).toEqual(byName.map((e) => e.id));
    expect((await get('?guest=augUSTA')).map((e) => e.id)).toEqual(byName.map((e) => e.id));
    expect((await get('?guest=ACT-1')).map((e) => e.id)).toEqual(byName.map((e) => e.id));
    const byId = await get(`?guest=${walkId}`);
    expect(byId).toHaveLength(4);
    expect(byId.every((e) => e.guestId === walkId)).toBe(true);
    expect((await get('?guest=hopp')).map((e) => e.id)).toEqual(byId.map((e) => e.id));
    // LIKE wildcards match only themselves.
    expect(await get('?guest=%25')).toEqual([]);
    expect(await get('?guest=_')).toEqual([]);
    expect(await get('?guest=Sandbox')).toEqual([]);

    // Pages of 3: 3 + 3 + 1, disjoint, together the whole log in order.
    const pages: Entry[][] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const res: DashboardResponse = await h.staff.get(`/activity?limit=3${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      pages.push(res.body.entries as Entry[]);
      cursor = res.body.next as string | null;
      if (cursor === null) break;
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    const ids = pages.flat().map((e) => e.id);
    expect(new Set(ids).size).toBe(7);
    expect(ids).toEqual(all.map((e) => e.id));
    // Filters and pages combine.
    const staffPage = await h.staff.get('/activity?actorType=staff&limit=2');
    expect(staffPage.body.entries.map((e: Entry) => e.id)).toEqual(staffOnly.slice(0, 2).map((e) => e.id));
    const staffRest = await h.staff.get(`/activity?actorType=staff&limit=2&before=${encodeURIComponent(String(staffPage.body.next))}`);
    expect(staffRest.body.entries.map((e: Entry) => e.id)).toEqual(staffOnly.slice(2).map((e) => e.id));

    expect((await h.staff.get('/activity?before=garbage')).status).toBe(422);
    expect((await h.staff.get('/activity?actorType=robot')).status).toBe(422);
    expect((await h.staff.get('/activity?limit=0')).status).toBe(422);
  });
});
