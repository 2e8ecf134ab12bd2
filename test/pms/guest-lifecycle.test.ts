import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';

describe.each(testEngines())('guest lifecycle over HTTPS (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
  });
  afterAll(() => t.close());

  it('check-in answers created with guestId, pmsGuestId, trimmed roomNumber and requestId', async () => {
    const g = guest({ roomNumber: ' 305 ' });
    const res = await t.post(`${base}/guests/checkin`, g);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'created',
      guestId: expect.stringMatching(/^guest_/),
      pmsGuestId: g.pmsGuestId,
      roomNumber: '305',
      requestId: expect.stringMatching(/^req_(?!test_)/),
    });
    expect(res.body).not.toHaveProperty('_sandbox');
    const list = await t.api('GET', `${base}/guests?roomNumber=305`);
    expect(list.body.count).toBe(1);
    expect(list.body.guests[0]).toMatchObject({ pmsGuestId: g.pmsGuestId, roomNumber: '305', source: 'pms', phone: null });
  });

  it('check-in of an active pmsGuestId is 409 GUEST_ALREADY_CHECKED_IN with the active stay', async () => {
    const g = guest();
    const first = await t.post(`${base}/guests/checkin`, g);
    const again = await t.post(`${base}/guests/checkin`, { ...g, roomNumber: 'other-room' });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ status: 'error', code: 'GUEST_ALREADY_CHECKED_IN', guestId: first.body.guestId, roomNumber: g.roomNumber });
  });

  it('check-in into a held room is 409 ROOM_OCCUPIED naming the holder', async () => {
    const holder = guest({ lastName: 'Holder', checkInDate: '2026-11-20' });
    await t.post(`${base}/guests/checkin`, holder);
    const res = await t.post(`${base}/guests/checkin`, guest({ roomNumber: holder.roomNumber }));
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'ROOM_OCCUPIED', currentGuest: { pmsGuestId: holder.pmsGuestId, lastName: 'Holder', checkInDate: '2026-11-20' } });
  });

  it('update changes only submitted fields and reports {from, to}; null clears, absent keeps', async () => {
    const g = guest({ phone: '+4930123456', email: 'a@example.com' });
    await t.post(`${base}/guests/checkin`, g);
    const res = await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, firstName: 'Grace', phone: null, adults: 2 });
    expect(res.status).toBe(200);
    expect(res.body.changes).toEqual({ firstName: { from: 'Ada', to: 'Grace' }, phone: { from: '+4930123456', to: null }, adults: { from: null, to: 2 } });
    const list = await t.api('GET', `${base}/guests?pmsGuestId=${g.pmsGuestId}`);
    expect(list.body.guests[0]).toMatchObject({ firstName: 'Grace', phone: null, email: 'a@example.com', adults: 2 });
  });

  it('an update that changes nothing is 200 with changes {}', async () => {
    const g = guest();
    await t.post(`${base}/guests/checkin`, g);
    const res = await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, lastName: g.lastName });
    expect(res.status).toBe(200);
    expect(res.body.changes).toEqual({});
  });

  it('a room move frees the old room and keeps the assignment history', async () => {
    const g = guest();
    await t.post(`${base}/guests/checkin`, g);
    const res = await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, roomNumber: `${String(g.roomNumber)}-new` });
    expect(res.body.changes).toEqual({ roomNumber: { from: g.roomNumber, to: `${String(g.roomNumber)}-new` } });
    // The old room is free again: another guest can take it.
    const other = await t.post(`${base}/guests/checkin`, guest({ roomNumber: g.roomNumber }));
    expect(other.status).toBe(200);
    const rows = await t.server.database.db
      .selectFrom('room_assignments')
      .innerJoin('guests', 'guests.id', 'room_assignments.guest_id')
      .select(['room_assignments.room_number', 'room_assignments.released_at'])
      .where('guests.pms_guest_id', '=', String(g.pmsGuestId))
      .orderBy('room_assignments.assigned_at')
      .execute();
    expect(rows.map((r) => [r.room_number, r.released_at === null])).toEqual([
      [g.roomNumber, false],
      [`${String(g.roomNumber)}-new`, true],
    ]);
  });

  it('a move into a held room is 409 ROOM_OCCUPIED and changes nothing', async () => {
    const a = guest();
    const b = guest({ lastName: 'Babbage' });
    await t.post(`${base}/guests/checkin`, a);
    await t.post(`${base}/guests/checkin`, b);
    const res = await t.post(`${base}/guests/update`, { pmsGuestId: a.pmsGuestId, roomNumber: b.roomNumber, firstName: 'Changed' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'ROOM_OCCUPIED', currentGuest: { pmsGuestId: b.pmsGuestId, lastName: 'Babbage' } });
    const list = await t.api('GET', `${base}/guests?pmsGuestId=${String(a.pmsGuestId)}`);
    expect(list.body.guests[0]).toMatchObject({ roomNumber: a.roomNumber, firstName: 'Ada' });
  });

  it('update or checkout of an unknown guest is 404 GUEST_NOT_FOUND', async () => {
    expect((await t.post(`${base}/guests/update`, { pmsGuestId: 'nobody', firstName: 'X' })).body.code).toBe('GUEST_NOT_FOUND');
    const res = await t.post(`${base}/guests/checkout`, { pmsGuestId: 'nobody' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('GUEST_NOT_FOUND');
  });

  it('checkout frees the room; a second checkout is 404; the guest may check in again as a new stay', async () => {
    const g = guest();
    const first = await t.post(`${base}/guests/checkin`, g);
    const out = await t.post(`${base}/guests/checkout`, { pmsGuestId: g.pmsGuestId });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ status: 'checked_out', guestId: first.body.guestId, pmsGuestId: g.pmsGuestId, roomNumber: g.roomNumber });
    expect((await t.post(`${base}/guests/checkout`, { pmsGuestId: g.pmsGuestId })).status).toBe(404);
    expect((await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, firstName: 'X' })).status).toBe(404);
    const again = await t.post(`${base}/guests/checkin`, g);
    expect(again.status).toBe(200);
    expect(again.body.guestId).not.toBe(first.body.guestId);
  });

  it('GET /guests lists both sources in natural room order with every member', async () => {
    const other = await t.addHotel(`order-${engine}`);
    const b = `/api/pms/v1/order-${engine}`;
    for (const room of ['10', '2', '1A', '1']) {
      await t.post(`${b}/guests/checkin`, guest({ roomNumber: room }), { key: other.live });
    }
    const res = await t.api('GET', `${b}/guests`, { key: other.live });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(4);
    expect(res.body.guests.map((g: { roomNumber: string }) => g.roomNumber)).toEqual(['1', '1A', '2', '10']);
    expect(Object.keys(res.body.guests[0]).sort()).toEqual(
      [
        'guestId',
        'pmsGuestId',
        'source',
        'firstName',
        'lastName',
        'phone',
        'roomNumber',
        'checkInDate',
        'checkOutDate',
        'language',
        'adults',
        'children',
        'nationality',
        'email',
        'createdAt',
        'updatedAt',
      ].sort(),
    );
    expect(res.body.guests[0].createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('GET /guests with an unknown query parameter is 422 naming it', async () => {
    const res = await t.api('GET', `${base}/guests?room=1`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'room', code: 'UNKNOWN_FIELD' })]);
  });

  it('two concurrent moves into one free room: exactly one wins', async () => {
    const a = guest();
    const b = guest();
    await t.post(`${base}/guests/checkin`, a);
    await t.post(`${base}/guests/checkin`, b);
    const target = `race-${uniqueKey().slice(-6)}`;
    const results = await Promise.all([
      t.post(`${base}/guests/update`, { pmsGuestId: a.pmsGuestId, roomNumber: target }),
      t.post(`${base}/guests/update`, { pmsGuestId: b.pmsGuestId, roomNumber: target }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const loser = results.find((r) => r.status === 409);
    expect(loser?.body.code).toBe('ROOM_OCCUPIED');
    const list = await t.api('GET', `${base}/guests?roomNumber=${target}`);
    expect(list.body.count).toBe(1);
  });
});
