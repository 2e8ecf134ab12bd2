import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { addStaffUser, DashboardClient, DASHBOARD_API, send, STAFF_PASSWORD, sessionCookieOf } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// A front-desk display: a login with `display: true` shows the board read-only on a shared
// screen for a shift (12 hours) without the idle expiry of a person's session.

const MINUTE = 60_000;

describe.each(testEngines())('the front-desk display session (%s)', (engine) => {
  let t: TestServer;
  let display: DashboardClient;
  const db = (): Db => t.server.database.db;

  async function displayLogin(email: string): Promise<DashboardClient> {
    const client = new DashboardClient(t);
    const res = await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email, password: STAFF_PASSWORD, display: true } });
    expect(res.status).toBe(200);
    expect(res.body.display).toBe(true);
    client.adopt(res);
    return client;
  }

  const age = async (client: DashboardClient, column: 'last_seen_at' | 'created_at', ms: number): Promise<void> => {
    const { createHash } = await import('node:crypto');
    const id = createHash('sha256')
      .update(client.cookie ?? '')
      .digest('hex');
    await db()
      .updateTable('staff_sessions')
      .set({ [column]: new Date(Date.now() - ms).toISOString() })
      .where('id', '=', id)
      .execute();
  };

  beforeAll(async () => {
    t = await startTestServer(engine);
    await addStaffUser(db(), t.slug, 'admin@display.example', 'admin');
    display = await displayLogin('admin@display.example');
    expect((await t.post(`${t.pmsBase}/guests/checkin`, guest({ pmsGuestId: 'D-1', roomNumber: '101', lastName: 'Shown' }))).status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads the session and the roster (all of it, or the guests a live event named)', async () => {
    const session = await display.get('/session');
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ display: true, user: { email: 'admin@display.example' } });
    const all = await display.get('/guests');
    expect(all.status).toBe(200);
    const shown = all.body.guests.find((g: { lastName: string }) => g.lastName === 'Shown');
    expect(shown).toBeDefined();
    const some = await display.get(`/guests?ids=${shown.id},guest_nosuchguest0000000`);
    expect(some.status).toBe(200);
    expect(some.body.guests.map((g: { id: string }) => g.id)).toEqual([shown.id]);
  });

  it('gets what the board shows of each guest and no more: no phone, e-mail, language, nationality, status or creation time (all, ?ids= and the live events); a person still gets them', async () => {
    const full = guest({
      pmsGuestId: 'D-2',
      roomNumber: '103',
      lastName: 'Private',
      phone: '+4930123456',
      email: 'private@guest.example',
      language: 'de',
      nationality: 'DE',
      adults: 2,
      children: 1,
    });
    expect((await t.post(`${t.pmsBase}/guests/checkin`, full)).status).toBe(200);
    const boardFields = [
      'adults',
      'anonymisedAt',
      'checkInDate',
      'checkOutDate',
      'children',
      'firstName',
      'id',
      'lastName',
      'pmsGuestId',
      'roomNumber',
      'source',
      'updatedAt',
    ];
    const all = await display.get('/guests');
    const shown = all.body.guests.find((g: { pmsGuestId: string }) => g.pmsGuestId === 'D-2');
    expect(Object.keys(shown).sort()).toEqual(boardFields);
    expect(shown).toMatchObject({ roomNumber: '103', lastName: 'Private', firstName: 'Ada', adults: 2, children: 1, source: 'pms' });
    for (const g of all.body.guests) expect(Object.keys(g).sort()).toEqual(boardFields);
    const some = await display.get(`/guests?ids=${shown.id}`);
    expect(some.body.guests).toEqual([shown]);
    expect(some.text).not.toMatch(/private@guest|4930123456|"DE"/);
    // A live event names the guest, its PMS id and room: what the board shows anyway.
    const stream = await display.events();
    try {
      expect((await stream.next()).event).toBe('ready');
      expect((await t.post(`${t.pmsBase}/guests/update`, { pmsGuestId: 'D-2', phone: '+4930999999' })).status).toBe(200);
      const event = await stream.next();
      expect(event.event).toBe('roster');
      for (const change of event.data.changes) expect(Object.keys(change).sort()).toEqual(['action', 'guestId', 'pmsGuestId', 'roomNumber']);
    } finally {
      stream.close();
    }
    const person = await DashboardClient.loggedIn(t, 'admin@display.example');
    const [personal] = (await person.get(`/guests?ids=${shown.id}`)).body.guests;
    expect(personal).toMatchObject({ phone: '+4930999999', email: 'private@guest.example', language: 'de', nationality: 'DE', status: 'active' });
  });

  it('is refused everything else, even for an admin: guest details, writes, admin pages (403 DISPLAY_READ_ONLY)', async () => {
    const all = await display.get('/guests');
    const id = all.body.guests[0].id as string;
    const attempts = [
      await display.get(`/guests/${id}`),
      await display.post('/guests', guest({ pmsGuestId: undefined, roomNumber: '102', lastName: 'Nope' })),
      await display.api('PATCH', `/guests/${id}`, { body: { lastName: 'Changed' } }),
      await display.post(`/guests/${id}/checkout`, {}),
      await display.get('/activity'),
      await display.get('/keys'),
      await display.get('/users'),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('DISPLAY_READ_ONLY');
      expect(res.body.message).toMatch(/front-desk display/);
    }
    const stored = await db().selectFrom('guests').select('last_name').where('last_name', 'in', ['Nope', 'Changed']).execute();
    expect(stored).toEqual([]);
  });

  it("outlives 30 minutes idle (a person's session does not), but not the 12-hour shift", async () => {
    await addStaffUser(db(), t.slug, 'desk@display.example', 'receptionist');
    const person = await DashboardClient.loggedIn(t, 'desk@display.example');
    const screen = await displayLogin('desk@display.example');
    await age(person, 'last_seen_at', 3 * 60 * MINUTE);
    await age(screen, 'last_seen_at', 3 * 60 * MINUTE);
    expect((await person.get('/session')).status).toBe(401);
    expect((await screen.get('/session')).status).toBe(200);
    await age(screen, 'created_at', 12 * 60 * MINUTE + MINUTE);
    expect((await screen.get('/session')).status).toBe(401);
  });

  it('a login without `display` is an ordinary session, and `display` must be true or false', async () => {
    const person = await DashboardClient.loggedIn(t, 'admin@display.example');
    expect(person.session.display).toBe(false);
    expect((await person.get('/activity')).status).toBe(200);
    const wrong = await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email: 'admin@display.example', password: STAFF_PASSWORD, display: 'yes' } });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].field).toBe('display');
    expect(sessionCookieOf(wrong.setCookies)).toBeUndefined();
  });

  it('logs out', async () => {
    const screen = await displayLogin('admin@display.example');
    expect((await screen.post('/logout', {})).status).toBe(200);
    expect((await screen.get('/session')).status).toBe(401);
  });
});
