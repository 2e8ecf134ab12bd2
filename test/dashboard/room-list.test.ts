import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roomsSeenNotListedQuery } from '../../src/db/repositories/room.repository.js';
import { addStaffUser, DASHBOARD_API, DashboardClient, send, STAFF_PASSWORD } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// README.md (Rooms) and docs/dashboard.md: the hotel's room list. An admin imports it as
// CSV (every problem named by its line, nothing changed), adds, edits and removes rooms,
// and adopts the rooms the roster has held; everyone reads it for the board. The PMS API
// never reads it: a PMS may put a guest in a room that is not on the list.

const HEADER = 'room,floor,type,out_of_order_reason';

describe.each(testEngines())('the room list (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  let receptionist: DashboardClient;
  beforeAll(async () => {
    t = await startTestServer(engine);
    const a = await addStaffUser(t.server.database.db, t.slug, `rooms-admin-${engine}@test.example`, 'admin');
    const r = await addStaffUser(t.server.database.db, t.slug, `rooms-desk-${engine}@test.example`, 'receptionist');
    admin = await DashboardClient.loggedIn(t, a.email);
    receptionist = await DashboardClient.loggedIn(t, r.email);
  });
  afterAll(() => t.close());

  const list = async (client = admin) => {
    const res = await client.get('/rooms');
    expect(res.status, res.text).toBe(200);
    return res.body.rooms as Array<{ id: string; roomNumber: string; floor: string | null; type: string | null; outOfOrderReason: string | null }>;
  };

  it('imports a valid CSV (quotes, semicolons, full-width digits, blank floor from the number); the list replaces the old one', async () => {
    const csv = [`\ufeff${HEADER}`, '101,1,Double,', '１０２,,Single,"Leak, bathroom"', '', 'Suite A,7,Suite,', '205,2,,'].join('\r\n');
    const res = await admin.post('/rooms/import', { csv });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ rooms: 4, added: 4, updated: 0, removed: 0 });
    const rooms = await list(receptionist);
    expect(rooms.map((r) => [r.roomNumber, r.floor, r.type, r.outOfOrderReason])).toEqual([
      ['101', '1', 'Double', null],
      ['102', '1', 'Single', 'Leak, bathroom'],
      ['205', '2', null, null],
      ['Suite A', '7', 'Suite', null],
    ]);
    // A second import replaces: 205 goes, 101 changes, 301 comes; semicolons as spreadsheets write them.
    const again = await admin.post('/rooms/import', { csv: 'ROOM;Type\n101;Twin\n102;Single\nSuite A;Suite\n301;Double\n' });
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({ rooms: 4, added: 1, updated: 3, removed: 1 });
    const after = await list();
    expect(after.map((r) => `${r.roomNumber}:${r.floor}:${r.type}:${r.outOfOrderReason}`)).toEqual([
      '101:1:Twin:null',
      '102:1:Single:null',
      '301:3:Double:null',
      'Suite A:null:Suite:null',
    ]);
    expect(after.find((r) => r.roomNumber === '101')?.id).toBe(rooms.find((r) => r.roomNumber === '101')?.id);
  });

  it('an invalid CSV answers 422 ROOM_LIST_INVALID naming each line and its fix, and changes nothing', async () => {
    const before = await list();
    const csv = [HEADER, '401,4,Double,', ',4,Single,', '401,4,Twin,', `4\u200b02,4,,`, '403,4,Double,ok,extra', `${'9'.repeat(21)},,,`].join('\n');
    const res = await admin.post('/rooms/import', { csv });
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('ROOM_LIST_INVALID');
    expect(res.body.message).toMatch(/Nothing was imported/);
    const errors = res.body.errors as Array<{ line: number; column: string | null; code: string; message: string }>;
    expect(errors.map((e) => [e.line, e.column, e.code])).toEqual([
      [3, 'room', 'REQUIRED'],
      [4, 'room', 'DUPLICATE'],
      [5, 'room', 'INVALID_FORMAT'],
      [6, null, 'INVALID_FORMAT'],
      [7, 'room', 'TOO_LONG'],
    ]);
    expect(errors[1]?.message).toBe('Line 4: room 401 is already on line 2: keep one of the two lines.');
    expect(errors[0]?.message).toMatch(/^Line 3, column room: The room number is empty: write the room number/);
    expect(errors[3]?.message).toMatch(/^Line 6: 5 fields where the header names 4: put a field holding "," in double quotes/);
    expect(await list()).toEqual(before);

    const badHeader = await admin.post('/rooms/import', { csv: 'number,floor\n101,1\n' });
    expect(badHeader.status).toBe(422);
    expect(badHeader.body.errors.map((e: { line: number; code: string }) => [e.line, e.code])).toEqual([
      [1, 'UNKNOWN_FIELD'],
      [1, 'REQUIRED'],
    ]);
    const unclosed = await admin.post('/rooms/import', { csv: `${HEADER}\n101,1,"Double,\n102,1,,\n` });
    expect(unclosed.status).toBe(422);
    expect(unclosed.body.errors[0]).toMatchObject({ line: 2, code: 'INVALID_FORMAT' });
  });

  it('caps: 50 problems at most are looked for, 20 listed; 5,001 rooms and a CSV over 512 KiB are refused', async () => {
    const many = [HEADER, ...Array.from({ length: 300 }, () => ',1,,')].join('\n');
    const res = await admin.post('/rooms/import', { csv: many });
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveLength(20);
    expect(res.body.errorsNotShown).toBe(30);
    expect(res.body.message).toMatch(/^More than 50 problems in the CSV; the check stopped there/);

    const tooMany = [HEADER, ...Array.from({ length: 5_001 }, (_, i) => `R${i}`)].join('\n');
    const full = await admin.post('/rooms/import', { csv: tooMany });
    expect(full.status).toBe(422);
    expect(full.body.errors).toEqual([
      {
        line: 5_002,
        column: null,
        code: 'TOO_MANY',
        message: 'Line 5002: a room list holds at most 5,000 rooms, and this is room 5001: remove the lines that are not rooms of this hotel.',
      },
    ]);
    const large = await admin.post('/rooms/import', { csv: `${HEADER}\n101,1,${'x'.repeat(520 * 1024)},\n` });
    expect(large.status).toBe(413);
    expect(large.body).toMatchObject({ code: 'ROOM_CSV_TOO_LARGE', limit: 512 * 1024 });

    // 5,000 rooms fit; one more added by hand is 409 ROOM_LIST_FULL.
    const fits = await admin.post('/rooms/import', { csv: tooMany.split('\n').slice(0, 5_001).join('\n') });
    expect(fits.status, fits.text).toBe(200);
    expect(fits.body.rooms).toBe(5_000);
    const one = await admin.post('/rooms', { roomNumber: 'Z1' });
    expect(one.status).toBe(409);
    expect(one.body).toMatchObject({ code: 'ROOM_LIST_FULL', limit: 5_000 });
    // Back to a small list for the next tests.
    expect((await admin.post('/rooms/import', { csv: `${HEADER}\n101,1,Twin,\n102,1,Single,\n301,3,Double,\n` })).status).toBe(200);
  });

  it('add, edit, set and clear out of order, remove; a room number twice is 409 ROOM_EXISTS', async () => {
    const added = await admin.post('/rooms', { roomNumber: ' ５０１ ', type: 'Double' });
    expect(added.status, added.text).toBe(201);
    expect(added.body.room).toMatchObject({ roomNumber: '501', floor: '5', type: 'Double', outOfOrderReason: null });
    const id = added.body.room.id as string;
    const twice = await admin.post('/rooms', { roomNumber: '501' });
    expect(twice.status).toBe(409);
    expect(twice.body).toMatchObject({ code: 'ROOM_EXISTS', roomNumber: '501' });

    const ooo = await admin.patch(`/rooms/${id}`, { outOfOrderReason: 'Broken window' });
    expect(ooo.status, ooo.text).toBe(200);
    expect(ooo.body.room).toMatchObject({ roomNumber: '501', type: 'Double', outOfOrderReason: 'Broken window' });
    const cleared = await admin.patch(`/rooms/${id}`, { outOfOrderReason: null });
    expect(cleared.body.room.outOfOrderReason).toBeNull();
    const renamedOnto = await admin.patch(`/rooms/${id}`, { roomNumber: '101' });
    expect(renamedOnto.status).toBe(409);
    expect(renamedOnto.body.code).toBe('ROOM_EXISTS');
    const bad = await admin.patch(`/rooms/${id}`, { roomNumber: '  ', floor: 'x'.repeat(11) });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string; code: string }) => [e.field, e.code])).toEqual([
      ['roomNumber', 'REQUIRED'],
      ['floor', 'TOO_LONG'],
    ]);
    const renamed = await admin.patch(`/rooms/${id}`, { roomNumber: '601' });
    expect(renamed.body.room).toMatchObject({ roomNumber: '601', floor: '6' });

    const removed = await admin.post(`/rooms/${id}/remove`, {});
    expect(removed.status, removed.text).toBe(200);
    expect((await list()).some((r) => r.roomNumber === '601')).toBe(false);
    expect((await admin.post(`/rooms/${id}/remove`, {})).status).toBe(404);
  });

  it('adopt: the rooms the roster has held that the list lacks are listed, then added; the PMS may still use any room', async () => {
    // A PMS guest in a room not on the list: accepted as before.
    const inRoom = await t.post(`${t.pmsBase}/guests/checkin`, guest({ roomNumber: '777' }));
    expect(inRoom.status, inRoom.text).toBe(200);
    const moved = await t.post(`${t.pmsBase}/guests/checkin`, guest({ roomNumber: '101' }));
    expect(moved.status, moved.text).toBe(200);
    const gone = guest({ roomNumber: 'Annex 2' });
    expect((await t.post(`${t.pmsBase}/guests/checkin`, gone)).status).toBe(200);
    expect((await t.post(`${t.pmsBase}/guests/checkout`, { pmsGuestId: gone.pmsGuestId })).status).toBe(200);

    const seen = await admin.get('/rooms/unlisted');
    expect(seen.status, seen.text).toBe(200);
    expect(seen.body.roomNumbers).toEqual(['777', 'Annex 2']);
    const adopted = await admin.post('/rooms/adopt', { roomNumbers: seen.body.roomNumbers });
    expect(adopted.status, adopted.text).toBe(200);
    expect(adopted.body.added).toEqual(['777', 'Annex 2']);
    const rooms = await list();
    expect(rooms.find((r) => r.roomNumber === '777')).toMatchObject({ floor: '7', type: null, outOfOrderReason: null });
    expect((await admin.get('/rooms/unlisted')).body.roomNumbers).toEqual([]);
    // A room never held is not adopted.
    expect((await admin.post('/rooms/adopt', { roomNumbers: ['999'] })).body.added).toEqual([]);
  });

  it('a change to the room list tells the hotel’s open boards to re-read (a roster event without changes)', async () => {
    const stream = await receptionist.events();
    try {
      expect((await stream.next()).event).toBe('ready');
      const added = await admin.post('/rooms', { roomNumber: '888' });
      expect(added.status).toBe(201);
      const event = await stream.next();
      expect(event.event).toBe('roster');
      expect(event.data).toMatchObject({ changes: [] });
    } finally {
      stream.close();
    }
  });

  it('roles: a receptionist reads the list but cannot change it; another hotel’s rooms are not found', async () => {
    const tries = [
      await receptionist.post('/rooms/import', { csv: `${HEADER}\n101,1,,\n` }),
      await receptionist.post('/rooms', { roomNumber: '909' }),
      await receptionist.get('/rooms/unlisted'),
      await receptionist.post('/rooms/adopt', { roomNumbers: ['777'] }),
    ];
    const id = (await list()).find((r) => r.roomNumber === '101')?.id as string;
    tries.push(await receptionist.patch(`/rooms/${id}`, { outOfOrderReason: 'x' }), await receptionist.post(`/rooms/${id}/remove`, {}));
    expect(tries.map((r) => [r.status, r.body.code])).toEqual(tries.map(() => [403, 'FORBIDDEN']));
    expect((await list()).find((r) => r.roomNumber === '101')?.outOfOrderReason).toBeNull();

    // A front-desk display reads the list (the board shows it) and changes nothing.
    const display = new DashboardClient(t);
    display.adopt(
      await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email: receptionist.session.user.email, password: STAFF_PASSWORD, display: true } }),
    );
    expect((await display.get('/rooms')).status).toBe(200);
    const refused = await display.post('/rooms', { roomNumber: '910' });
    expect([refused.status, refused.body.code]).toEqual([403, 'DISPLAY_READ_ONLY']);

    await t.addHotel(`other-${engine}-rooms`);
    const other = await addStaffUser(t.server.database.db, `other-${engine}-rooms`, `rooms-other-${engine}@test.example`, 'admin');
    const otherAdmin = await DashboardClient.loggedIn(t, other.email);
    expect(await list(otherAdmin)).toEqual([]);
    const foreign = await otherAdmin.patch(`/rooms/${id}`, { outOfOrderReason: 'x' });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('RECORD_NOT_FOUND');
    expect((await list()).find((r) => r.id === id)?.outOfOrderReason).toBeNull();
  });

  it("the rooms to adopt are read from this hotel's assignments through an index, never by scanning every hotel's history", async () => {
    const db = t.server.database.db;
    const { id: hotelId } = await db.selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow();
    const query = roomsSeenNotListedQuery(db, hotelId, 5_001).compile();
    const plan = await db.transaction().execute(async (trx) => {
      if (engine === 'postgres') {
        // With a table scan priced out, PostgreSQL still scans when no index serves the query.
        await trx.executeQuery(CompiledQuery.raw('set local enable_seqscan = off'));
        const rows = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]));
        return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
      }
      const rows = await trx.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
      return rows.rows.map((r) => r.detail).join('\n');
    });
    expect(plan).toContain('room_assignments_hotel_room_idx');
    expect(plan).not.toMatch(/Seq Scan on room_assignments|SCAN a\b(?! USING)/);
  });
});
