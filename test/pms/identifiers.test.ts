import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomId } from '../../src/domain/ids.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/identifiers.md: a room number and a pmsGuestId are compared in one form (NFKC, room
// numbers trimmed), and invisible format characters are refused, so no look-alike of a held
// room or an active stay gets past the database's unique indexes.

/** Invisible characters that made look-alikes: zero-width space, soft hyphen, word joiner, right-to-left override, BOM. */
const FORMAT_CHARACTERS = ['\u200b', '\u00ad', '\u2060', '\u202e', '\u200e', '\ufeff'];

describe.each(testEngines())('identifiers in one form (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
  });
  afterAll(() => t.close());

  /** A fresh room number of digits (so its full-width form differs), checked in. */
  async function heldRoom(): Promise<{ room: string; pmsGuestId: string }> {
    const room = String(100 + Math.floor(Math.random() * 1e9));
    const g = guest({ roomNumber: room });
    expect((await t.post(`${base}/guests/checkin`, g)).status).toBe(200);
    return { room, pmsGuestId: String(g.pmsGuestId) };
  }
  const fullWidth = (s: string): string => s.replace(/[0-9A-Za-z-]/g, (c) => (c === '-' ? '\uff0d' : String.fromCodePoint(c.codePointAt(0)! + 0xfee0)));

  it('a room number with a format character is refused with 422, naming the field and the rule, and nothing is stored', async () => {
    const { room } = await heldRoom();
    for (const [i, mark] of FORMAT_CHARACTERS.entries()) {
      for (const roomNumber of [`${room}${mark}`, `${mark}${room}`, `${room.slice(0, 1)}${mark}${room.slice(1)}`]) {
        const res = await t.post(`${base}/guests/checkin`, guest({ pmsGuestId: `LOOK-${i}-${randomId(6)}`, roomNumber }));
        expect(res.status, JSON.stringify(roomNumber)).toBe(422);
        expect(res.body.errors).toEqual([
          expect.objectContaining({
            field: 'roomNumber',
            code: 'INVALID_FORMAT',
            message: expect.stringContaining('format characters (such as zero-width spaces'),
          }),
        ]);
      }
    }
    const list = await t.api('GET', `${base}/guests`);
    expect(list.body.guests.filter((g: { roomNumber: string }) => g.roomNumber.includes(room))).toHaveLength(1);
  });

  it('a full-width room number is the same room: 409 ROOM_OCCUPIED naming the holder, and a free one is stored in its plain form', async () => {
    const { room, pmsGuestId } = await heldRoom();
    const clash = await t.post(`${base}/guests/checkin`, guest({ roomNumber: fullWidth(room) }));
    expect(clash.status, clash.text).toBe(409);
    expect(clash.body).toMatchObject({ code: 'ROOM_OCCUPIED', currentGuest: { pmsGuestId } });

    const free = String(100 + Math.floor(Math.random() * 1e9));
    const g = guest({ roomNumber: `\u3000${fullWidth(free)}\u3000` });
    const res = await t.post(`${base}/guests/checkin`, g);
    expect(res.status, res.text).toBe(200);
    expect(res.body.roomNumber).toBe(free);
    const listed = await t.api('GET', `${base}/guests?roomNumber=${encodeURIComponent(fullWidth(free))}`);
    expect(listed.body.guests).toEqual([expect.objectContaining({ pmsGuestId: g.pmsGuestId, roomNumber: free })]);
  });

  it('"Suite é" composed and decomposed is one room', async () => {
    const name = `Suite ${randomId(4)} \u00e9`;
    const first = await t.post(`${base}/guests/checkin`, guest({ roomNumber: name }));
    expect(first.status, first.text).toBe(200);
    const decomposed = name.normalize('NFD');
    expect(decomposed).not.toBe(name);
    const second = await t.post(`${base}/guests/checkin`, guest({ roomNumber: decomposed }));
    expect(second.status, second.text).toBe(409);
    expect(second.body.code).toBe('ROOM_OCCUPIED');
  });

  it('a pmsGuestId with a format character is refused; a full-width one is the same guest (409, then update and checkout find it)', async () => {
    const { pmsGuestId } = await heldRoom();
    for (const mark of FORMAT_CHARACTERS) {
      const res = await t.post(`${base}/guests/checkin`, guest({ pmsGuestId: `${pmsGuestId}${mark}` }));
      expect(res.status, JSON.stringify(mark)).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'pmsGuestId', code: 'INVALID_FORMAT' })]);
    }
    const again = await t.post(`${base}/guests/checkin`, guest({ pmsGuestId: fullWidth(pmsGuestId) }));
    expect(again.status, again.text).toBe(409);
    expect(again.body.code).toBe('GUEST_ALREADY_CHECKED_IN');

    const update = await t.post(`${base}/guests/update`, { pmsGuestId: fullWidth(pmsGuestId), firstName: 'Grace' });
    expect(update.status, update.text).toBe(200);
    expect(update.body).toMatchObject({ status: 'updated', pmsGuestId, changes: { firstName: { to: 'Grace' } } });
    const out = await t.post(`${base}/guests/checkout`, { pmsGuestId: fullWidth(pmsGuestId) });
    expect(out.status, out.text).toBe(200);
    expect(out.body.pmsGuestId).toBe(pmsGuestId);
  });

  it('a pmsGuestId longer than 128 characters once normalised is refused with 422 (check-in and check-out)', async () => {
    // U+FDFA is one character that NFKC spells with 18.
    const id = `LONG-${'\ufdfa'.repeat(8)}`;
    expect([...id].length).toBeLessThanOrEqual(128);
    for (const [path, body] of [
      ['checkin', guest({ pmsGuestId: id })],
      ['checkout', { pmsGuestId: id }],
    ] as const) {
      const res = await t.post(`${base}/guests/${path}`, body);
      expect(res.status, res.text).toBe(422);
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'pmsGuestId', code: 'TOO_LONG' })]);
    }
  });

  it('a sync list naming one room or one guest twice in two forms is refused as a duplicate', async () => {
    const room = String(100 + Math.floor(Math.random() * 1e9));
    const rooms = await t.post(
      `${base}/guests/sync`,
      { syncMode: 'full', guests: [guest({ roomNumber: room }), guest({ roomNumber: fullWidth(room) })] },
      { key: t.keys.test },
    );
    expect(rooms.status, rooms.text).toBe(422);
    expect(rooms.body.errors).toEqual([expect.objectContaining({ field: 'guests[1].roomNumber', code: 'DUPLICATE' })]);

    const id = `SYNC-${randomId(6)}`;
    const ids = await t.post(
      `${base}/guests/sync`,
      { syncMode: 'full', guests: [guest({ pmsGuestId: id }), guest({ pmsGuestId: fullWidth(id) })] },
      { key: t.keys.test },
    );
    expect(ids.status, ids.text).toBe(422);
    expect(ids.body.errors).toEqual([expect.objectContaining({ field: 'guests[1].pmsGuestId', code: 'DUPLICATE' })]);
  });

  it('a walk-in from the dashboard cannot take a held room by its full-width form or with a zero-width space', async () => {
    const { room } = await heldRoom();
    const user = await addStaffUser(t.server.database.db, t.slug, `desk-${randomId(6)}@identifiers.example`, 'receptionist');
    const desk = await DashboardClient.loggedIn(t, user.email);
    const walkIn = (roomNumber: string) => desk.post('/guests', { lastName: 'Walker', roomNumber, checkInDate: '2026-11-23', checkOutDate: '2026-11-24' });
    const clash = await walkIn(fullWidth(room));
    expect(clash.status, clash.text).toBe(409);
    expect(clash.body.code).toBe('ROOM_OCCUPIED');
    const hidden = await walkIn(`${room}\u200b`);
    expect(hidden.status, hidden.text).toBe(422);
    expect(hidden.body.errors).toEqual([expect.objectContaining({ field: 'roomNumber', code: 'INVALID_FORMAT' })]);
  });
});
