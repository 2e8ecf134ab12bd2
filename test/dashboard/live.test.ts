import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import {
  addStaffUser,
  DashboardClient,
  DASHBOARD_API,
  send,
  sleep,
  type DashboardResponse,
  type EventStream,
  type SseEvent,
} from '../support/dashboard-client.js';
import { startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';

// docs/dashboard.md Live events and Security (CSP, HSTS): the event stream read
// incrementally over real HTTPS on both engines. "Nothing arrives" is proven by order:
// the change that must not publish is made first, then one that must; when the second's
// event is the next one, the first would have come before it.

const pmsGuest = (pmsGuestId: string, roomNumber: string, lastName = 'Lovelace') => ({
  pmsGuestId,
  lastName,
  firstName: 'Ada',
  roomNumber,
  checkInDate: '2026-11-23',
  checkOutDate: '2026-11-26',
});
const walkIn = (roomNumber: string, lastName = 'Walker') => ({ lastName, roomNumber, checkInDate: '2026-11-23', checkOutDate: '2026-11-25' });

describe.each(testEngines())('dashboard live events and security headers (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let desk: DashboardClient;
  let admin: DashboardClient;
  const db = (): Db => t.server.database.db;
  const open: EventStream[] = [];

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    const user = await addStaffUser(db(), t.slug, `desk-${engine}@live.example`, 'receptionist');
    desk = await DashboardClient.loggedIn(t, user.email);
    const adminUser = await addStaffUser(db(), t.slug, `admin-${engine}@live.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, adminUser.email);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t.close();
  });

  /** A stream whose `ready` has been read. */
  async function stream(client = desk): Promise<EventStream> {
    const s = await client.events();
    open.push(s);
    expect(s.status).toBe(200);
    const ready = await s.next();
    expect(ready.event).toBe('ready');
    return s;
  }

  const checkIn = (body: Record<string, unknown>, key = t.keys.live) => t.post(`${base}/guests/checkin`, body, { key });
  const roster = (e: SseEvent) => {
    expect(e.event).toBe('roster');
    expect(Date.parse(e.data.at as string)).not.toBeNaN();
    return e.data.changes as Array<{ action: string; guestId: string; pmsGuestId: string | null; roomNumber: string }>;
  };

  it('docs/dashboard.md Live events: GET /dashboard/api/events is text/event-stream; the first event is `ready` with {at}; the answer carries the CSP and HSTS', async () => {
    const s = await desk.events();
    open.push(s);
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(s.headers['content-security-policy']).toContain("default-src 'self'");
    expect(s.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    const first = await s.next();
    expect(first.event).toBe('ready');
    expect(Object.keys(first.data as object)).toEqual(['at']);
    expect(new Date(first.data.at as string).toISOString()).toBe(first.data.at);
    s.close();
  });

  it('docs/dashboard.md Live events: without a session the stream is refused with 401 NOT_AUTHENTICATED', async () => {
    const res = await send(t, 'GET', `${DASHBOARD_API}/events`);
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.code).toBe('NOT_AUTHENTICATED');
    const stale = await send(t, 'GET', `${DASHBOARD_API}/events`, { cookie: Buffer.alloc(32, 1).toString('base64url') });
    expect(stale.status).toBe(401);
  });

  it('docs/dashboard.md Live events: a live-key check-in produces `event: roster` with guest.checked_in and the room; a test-key check-in (sent first) produces nothing', async () => {
    const s = await stream();
    const sandbox = await checkIn(pmsGuest(`T-${engine}-1`, '101', 'Sandbox'), t.keys.test);
    expect(sandbox.status).toBe(200);
    expect(sandbox.body._sandbox).toBe(true);
    const live = await checkIn(pmsGuest(`L-${engine}-1`, '102'));
    expect(live.status).toBe(200);

    const e = await s.next();
    expect(roster(e)).toEqual([{ action: 'guest.checked_in', guestId: live.body.guestId, pmsGuestId: `L-${engine}-1`, roomNumber: '102' }]);
    await sleep(500);
    expect(s.pending()).toEqual([]);
  });

  it('docs/dashboard.md Live events: test-key updates, check-outs and syncs publish nothing either; the live ones do (update, move, check-out, sync)', async () => {
    const id = `L-${engine}-2`;
    // The stream opens first: with PostgreSQL a change reaches streams asynchronously
    // (NOTIFY), so one committed just before a stream opened may still arrive on it.
    const s = await stream();
    const live = await checkIn(pmsGuest(id, '201'));
    expect(live.status).toBe(200);
    expect(roster(await s.next())).toEqual([{ action: 'guest.checked_in', guestId: live.body.guestId, pmsGuestId: id, roomNumber: '201' }]);

    for (const [p, body] of [
      ['/guests/update', { pmsGuestId: id, roomNumber: '299' }],
      ['/guests/checkout', { pmsGuestId: id }],
      ['/guests/sync', { syncMode: 'full', guests: [] }],
    ] as const) {
      expect((await t.post(`${base}${p}`, body, { key: t.keys.test, idempotencyKey: uniqueKey('sandbox') })).status, p).toBe(200);
    }

    const updated = await t.post(`${base}/guests/update`, { pmsGuestId: id, phone: '+4930123456' });
    expect(updated.status).toBe(200);
    expect(roster(await s.next())).toEqual([{ action: 'guest.updated', guestId: live.body.guestId, pmsGuestId: id, roomNumber: '201' }]);
    const moved = await t.post(`${base}/guests/update`, { pmsGuestId: id, roomNumber: '202' });
    expect(moved.status).toBe(200);
    expect(roster(await s.next())).toEqual([{ action: 'guest.room_moved', guestId: live.body.guestId, pmsGuestId: id, roomNumber: '202' }]);
    const out = await t.post(`${base}/guests/checkout`, { pmsGuestId: id });
    expect(out.status).toBe(200);
    expect(roster(await s.next())).toEqual([{ action: 'guest.checked_out', guestId: live.body.guestId, pmsGuestId: id, roomNumber: '202' }]);

    // A live sync that checks one guest in publishes that change.
    const current = ((await t.api('GET', `${base}/guests?source=pms`)).body.guests as Array<Record<string, unknown>>).map((g) => ({
      pmsGuestId: g.pmsGuestId,
      lastName: g.lastName,
      firstName: g.firstName,
      roomNumber: g.roomNumber,
      checkInDate: g.checkInDate,
      checkOutDate: g.checkOutDate,
    }));
    const synced = await t.post(
      `${base}/guests/sync`,
      { syncMode: 'full', guests: [...current, pmsGuest(`S-${engine}-1`, '203')] },
      { idempotencyKey: uniqueKey('sync') },
    );
    expect(synced.status).toBe(200);
    expect(synced.body.summary).toMatchObject({ checkedIn: 1, checkedOut: 0, updated: 0 });
    const changes = roster(await s.next());
    expect(changes).toEqual([{ action: 'guest.checked_in', guestId: expect.any(String), pmsGuestId: `S-${engine}-1`, roomNumber: '203' }]);
    await sleep(500);
    expect(s.pending()).toEqual([]);
  });

  it('docs/dashboard.md Live events: staff changes publish too: walk-in, move, edit, check-out; refused writes (409, 422, CSRF) publish nothing', async () => {
    const s = await stream();
    await checkIn(pmsGuest(`HOLD-${engine}`, '301', 'Holder'));
    expect(roster(await s.next())[0]?.roomNumber).toBe('301');

    // Refused first: none may publish.
    expect((await desk.post('/guests', walkIn('301'))).status).toBe(409);
    expect((await desk.post('/guests', { ...walkIn('302'), checkInDate: 'tomorrow' })).status).toBe(422);
    expect((await desk.post('/guests', walkIn('302'), { csrf: null })).status).toBe(403);

    const created = await desk.post('/guests', walkIn('302'));
    expect(created.status).toBe(201);
    const id = created.body.guest.id as string;
    expect(roster(await s.next())).toEqual([{ action: 'guest.checked_in', guestId: id, pmsGuestId: null, roomNumber: '302' }]);

    expect((await desk.patch(`/guests/${id}`, { roomNumber: '303' })).status).toBe(200);
    expect(roster(await s.next())).toEqual([{ action: 'guest.room_moved', guestId: id, pmsGuestId: null, roomNumber: '303' }]);
    expect((await desk.patch(`/guests/${id}`, { lastName: 'Renamed' })).status).toBe(200);
    expect(roster(await s.next())).toEqual([{ action: 'guest.updated', guestId: id, pmsGuestId: null, roomNumber: '303' }]);
    // An edit that changes nothing publishes nothing: the check-out's event comes next.
    expect((await desk.patch(`/guests/${id}`, { lastName: 'Renamed' })).status).toBe(200);
    expect((await desk.post(`/guests/${id}/checkout`)).status).toBe(200);
    expect(roster(await s.next())).toEqual([{ action: 'guest.checked_out', guestId: id, pmsGuestId: null, roomNumber: '303' }]);
    await sleep(500);
    expect(s.pending()).toEqual([]);
  });

  it('docs/dashboard.md Live events: every open stream of the hotel gets each change; a closed one does not hold the others up', async () => {
    const s1 = await stream();
    const s2 = await stream(admin);
    const s3 = await stream();
    s3.close();
    const live = await checkIn(pmsGuest(`M-${engine}-1`, '401'));
    expect(live.status).toBe(200);
    for (const s of [s1, s2])
      expect(roster(await s.next())).toEqual([{ action: 'guest.checked_in', guestId: live.body.guestId, pmsGuestId: `M-${engine}-1`, roomNumber: '401' }]);
    await sleep(100);
    expect(s1.pending()).toEqual([]);
    expect(s2.pending()).toEqual([]);
  });

  it('docs/dashboard.md Security: logout, user deactivation and expiry end the session — also for a stream it opened: no roster event reaches it afterwards, and a new stream is refused', async () => {
    const watcher = await stream();
    const leaving = await addStaffUser(db(), t.slug, `leaving-${engine}@live.example`, 'receptionist');
    const loggingOut = await addStaffUser(db(), t.slug, `logout-${engine}@live.example`, 'receptionist');
    const leaverClient = await DashboardClient.loggedIn(t, leaving.email);
    const logoutClient = await DashboardClient.loggedIn(t, loggingOut.email);
    const expiringClient = await DashboardClient.loggedIn(t, loggingOut.email);
    const leaverStream = await stream(leaverClient);
    const logoutStream = await stream(logoutClient);
    const expiringStream = await stream(expiringClient);

    expect((await admin.post(`/users/${leaving.id}/deactivate`)).status).toBe(200);
    expect((await logoutClient.post('/logout')).status).toBe(200);
    // The absolute expiry (12 hours) passes for the third session.
    await db()
      .updateTable('staff_sessions')
      .set({ created_at: new Date(Date.now() - 13 * 3600_000).toISOString() })
      .where(
        'id',
        '=',
        createHash('sha256')
          .update(expiringClient.cookie ?? '')
          .digest('hex'),
      )
      .execute();
    for (const c of [leaverClient, logoutClient, expiringClient]) {
      const refused = await c.events();
      open.push(refused);
      expect(refused.status).toBe(401);
    }

    const live = await checkIn(pmsGuest(`E-${engine}-1`, '402', 'Private'));
    expect(live.status).toBe(200);
    expect(roster(await watcher.next())[0]?.pmsGuestId).toBe(`E-${engine}-1`);
    await sleep(500);
    // The ended sessions' streams get nothing of the change (closing them is fine too).
    expect
      .soft(
        leaverStream.pending().filter((e) => e.event === 'roster'),
        'deactivated user',
      )
      .toEqual([]);
    expect
      .soft(
        logoutStream.pending().filter((e) => e.event === 'roster'),
        'logged out',
      )
      .toEqual([]);
    expect
      .soft(
        expiringStream.pending().filter((e) => e.event === 'roster'),
        'expired',
      )
      .toEqual([]);
  });

  it('"Event streams": a stream whose session expires is closed within seconds, with no change to carry', async () => {
    const user = await addStaffUser(db(), t.slug, `expiring-${engine}@live.example`, 'receptionist');
    const client = await DashboardClient.loggedIn(t, user.email);
    const s = await stream(client);
    await db()
      .updateTable('staff_sessions')
      .set({ last_seen_at: new Date(Date.now() - 31 * 60_000).toISOString() })
      .where(
        'id',
        '=',
        createHash('sha256')
          .update(client.cookie ?? '')
          .digest('hex'),
      )
      .execute();
    await expect.poll(() => s.hasEnded).toBe(true);
    expect(s.pending().filter((e) => e.event === 'roster')).toEqual([]);
  });

  it('"Event streams": one session holds at most 5 streams; opening a sixth closes the oldest, the other five stay open and get changes', async () => {
    const user = await addStaffUser(db(), t.slug, `tabs-${engine}@live.example`, 'receptionist');
    const client = await DashboardClient.loggedIn(t, user.email);
    const tabs: EventStream[] = [];
    for (let i = 0; i < 6; i++) tabs.push(await stream(client));
    await expect.poll(() => tabs[0]?.hasEnded).toBe(true);
    expect(tabs.slice(1).map((s) => s.hasEnded)).toEqual([false, false, false, false, false]);
    expect((await checkIn(pmsGuest(`TABS-${engine}`, '611'))).status).toBe(200);
    for (const s of tabs.slice(1)) expect(roster(await s.next())[0]?.pmsGuestId).toBe(`TABS-${engine}`);
  });

  it("docs/dashboard.md Security: every page and API answer carries a Content-Security-Policy allowing only this origin (default-src 'self', no inline script or style, frame-ancestors 'none') and Strict-Transport-Security", async () => {
    const answers: Array<[string, DashboardResponse]> = [
      ['GET /dashboard/', await send(t, 'GET', '/dashboard/')],
      ['GET /dashboard/assets/app.js', await send(t, 'GET', '/dashboard/assets/app.js')],
      ['GET /dashboard/assets/app.css', await send(t, 'GET', '/dashboard/assets/app.css')],
      ['GET /session (200)', await desk.get('/session')],
      ['GET /guests (200)', await desk.get('/guests')],
      ['POST /guests (422)', await desk.post('/guests', {})],
      ['GET /guests/:id (404)', await desk.get('/guests/gst_doesnotexist')],
      ['GET /keys (403)', await desk.get('/keys')],
      ['POST /guests without CSRF (403)', await desk.post('/guests', walkIn('501'), { csrf: null })],
      ['GET /session without cookie (401)', await send(t, 'GET', `${DASHBOARD_API}/session`)],
      ['POST /login (401)', await new DashboardClient(t).login(`nobody-${engine}@live.example`, 'wrong-password-1')],
      ['GET /setup/:token (404)', await send(t, 'GET', `${DASHBOARD_API}/setup/nope`)],
    ];
    expect(answers[0]?.[1].status).toBe(200);
    expect(answers[0]?.[1].headers['content-type']).toMatch(/^text\/html/);
    for (const [name, res] of answers) {
      const csp = res.headers['content-security-policy'] ?? '';
      expect(csp, name).not.toBe('');
      const directives = new Map(
        csp
          .split(';')
          .map((d) => d.trim())
          .filter(Boolean)
          .map((d) => {
            const [k, ...v] = d.split(/\s+/);
            return [k ?? '', v] as const;
          }),
      );
      expect(directives.get('default-src'), name).toEqual(["'self'"]);
      expect(directives.get('frame-ancestors'), name).toEqual(["'none'"]);
      for (const d of ['script-src', 'style-src']) {
        const sources = directives.get(d) ?? directives.get('default-src') ?? [];
        expect(sources, `${name} ${d}`).toEqual(["'self'"]);
      }
      expect(csp, name).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
      expect(res.headers['strict-transport-security'], name).toMatch(/max-age=\d{7,}/);
    }
  });

  it('docs/dashboard.md Security: an unknown path under /dashboard/api/ is an API answer too: 404 with the CSP', async () => {
    const res = await desk.get('/no-such-route');
    expect(res.status).toBe(404);
    expect(res.body.status).toBe('error');
    expect(res.headers['content-security-policy'] ?? '').toContain("default-src 'self'");
    const wrongMethod = await desk.api('DELETE', '/guests');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers['content-security-policy'] ?? '').toContain("default-src 'self'");
  });
});
