import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { runRetention } from '../../src/jobs/retention.js';
import { insertAccessEntry } from '../../src/db/repositories/security.repository.js';
import { issueKeyPair } from '../../src/operations.js';
import { addStaffUser, DashboardClient, hotelIdOf } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { loggedRows } from '../support/request-log.js';

// docs/dashboard.md, "Access trail": every view of a guest's personal data in the dashboard
// is an access entry (who, when, from which address, what), for admins and receptionists;
// admins read it with the security events; a guest's export says who saw its data; the
// retention job deletes both after ACCESS_LOG_RETENTION_DAYS. Real HTTPS, both engines.

interface Entry {
  id: string;
  at: string;
  action: string;
  staff: { userId: string; email: string | null };
  clientIp: string | null;
  guestId: string | null;
  guestName: string | null;
  search: string | null;
}

interface SecurityEvent {
  kind: string;
  actorType: string;
  actor: { userId: string | null; email: string | null } | null;
  subject: { userId: string; email: string | null } | null;
  clientIp: string | null;
  detail: unknown;
}

const walkIn = (roomNumber: string, lastName: string) => ({ lastName, firstName: 'Wanda', roomNumber, checkInDate: '2026-11-23', checkOutDate: '2026-11-25' });

describe.each(testEngines())('access trail and security events (%s)', (engine) => {
  let t: TestServer;
  let admin: { id: string; email: string };
  let desk: { id: string; email: string };
  let adminClient: DashboardClient;
  let deskClient: DashboardClient;
  let hotelId: string;
  /** A PMS guest checked in with the live key: its dashboard id and the check-in's request id. */
  let pmsGuest: { id: string; requestId: string; lastName: string };
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    hotelId = await hotelIdOf(db(), t.slug);
    admin = await addStaffUser(db(), t.slug, `admin-${engine}@trail.example`, 'admin');
    desk = await addStaffUser(db(), t.slug, `desk-${engine}@trail.example`, 'receptionist');
    adminClient = await DashboardClient.loggedIn(t, admin.email);
    deskClient = await DashboardClient.loggedIn(t, desk.email);
    const body = guest({ lastName: 'Trailblazer', firstName: 'Tess' });
    const res = await t.post(`${t.pmsBase}/guests/checkin`, body);
    expect(res.status).toBe(200);
    pmsGuest = { id: res.body.guestId as string, requestId: res.body.requestId as string, lastName: 'Trailblazer' };
  });
  afterAll(() => t.close());

  /** The access entries the admin's page lists for this query, newest first. */
  const trail = async (query = ''): Promise<Entry[]> => {
    const res = await adminClient.get(`/access-trail${query}`);
    expect(res.status, res.text).toBe(200);
    return res.body.entries as Entry[];
  };
  const securityEvents = async (query = ''): Promise<SecurityEvent[]> => {
    const res = await adminClient.get(`/security-events${query}`);
    expect(res.status, res.text).toBe(200);
    return res.body.events as SecurityEvent[];
  };
  const accessCount = async (): Promise<number> => (await db().selectFrom('access_log').select('id').where('hotel_id', '=', hotelId).execute()).length;

  it("a guest's page, as admin and as receptionist: one guest.viewed entry each with the staff member, the client's address and the guest", async () => {
    for (const [client, user] of [
      [adminClient, admin],
      [deskClient, desk],
    ] as const) {
      expect((await client.get(`/guests/${pmsGuest.id}`)).status).toBe(200);
      const [latest] = await trail();
      expect(latest).toMatchObject({
        action: 'guest.viewed',
        staff: { userId: user.id, email: user.email },
        clientIp: '127.0.0.1',
        guestId: pmsGuest.id,
        guestName: `${pmsGuest.lastName}, Tess`,
        search: null,
      });
    }
    // The same person's page of the same guest again (its refetch after a live change) is the same view.
    const once = await accessCount();
    expect((await deskClient.get(`/guests/${pmsGuest.id}`)).status).toBe(200);
    expect(await accessCount()).toBe(once);
    // A guest the hotel does not have is no one's data: 404, no entry.
    const before = await accessCount();
    expect((await deskClient.get('/guests/gst_nobody')).status).toBe(404);
    expect(await accessCount()).toBe(before);
  });

  it('the roster (board, list, display): one roster.viewed entry per staff member and address in 10 minutes; a roster of nobody is none', async () => {
    for (const [client, user] of [
      [adminClient, admin],
      [deskClient, desk],
    ] as const) {
      const before = await accessCount();
      expect((await client.get('/guests')).body.guests.length).toBeGreaterThan(0);
      const [latest] = await trail();
      expect(latest).toMatchObject({
        action: 'roster.viewed',
        staff: { userId: user.id },
        clientIp: '127.0.0.1',
        guestId: null,
        guestName: null,
        search: null,
      });
      // Its refetch after a live change (the guests it concerns), and a reload: the same view.
      expect((await client.get(`/guests?ids=${pmsGuest.id}`)).status).toBe(200);
      expect((await client.get('/guests')).status).toBe(200);
      expect(await accessCount()).toBe(before + 1);
    }
    // A refetch that finds none of its guests in the house shows nobody: no entry.
    const before = await accessCount();
    await db().deleteFrom('access_log').where('hotel_id', '=', hotelId).where('action', '=', 'roster.viewed').execute();
    expect((await deskClient.get('/guests?ids=gst_nobody')).body.guests).toEqual([]);
    expect(await accessCount()).toBe(before - 2);
  });

  it('a search that shows guests names is one guest.searched entry with its text, as admin and as receptionist; one that finds none is none', async () => {
    for (const [client, user] of [
      [adminClient, admin],
      [deskClient, desk],
    ] as const) {
      const res = await client.get(`/activity?guest=${pmsGuest.lastName}`);
      expect(res.body.entries.length).toBeGreaterThan(0);
      const [latest] = await trail();
      expect(latest).toMatchObject({ action: 'guest.searched', staff: { userId: user.id }, clientIp: '127.0.0.1', guestId: null, search: pmsGuest.lastName });
    }
    const before = await accessCount();
    expect((await deskClient.get('/activity?guest=Nobodyatall')).body.entries).toEqual([]);
    // The activity page without a search names guests it was not asked about: not a search.
    expect((await deskClient.get('/activity')).status).toBe(200);
    expect(await accessCount()).toBe(before);
  });

  it("the request log's body view: one request_log.viewed entry for the guest a live request names; a test-mode (sandbox) request's body none", async () => {
    const pair = await issueKeyPair(db(), t.slug);
    const sandbox = await t.post(`${t.pmsBase}/guests/checkin`, guest({ lastName: 'Sandy' }), { key: pair.test });
    expect(sandbox.status).toBe(200);
    await loggedRows(db(), [pmsGuest.requestId, sandbox.body.requestId as string]);

    expect((await adminClient.get(`/requests/${pmsGuest.requestId}`)).status).toBe(200);
    const [latest] = await trail();
    expect(latest).toMatchObject({ action: 'request_log.viewed', staff: { userId: admin.id }, clientIp: '127.0.0.1', guestId: pmsGuest.id });

    const before = await accessCount();
    const sandboxView = await adminClient.get(`/requests/${sandbox.body.requestId as string}`);
    expect(sandboxView.body.request).toMatchObject({ mode: 'test' });
    expect(sandboxView.body.request.requestBody).toContain('Sandy');
    expect(await accessCount()).toBe(before);
  });

  it("an export and an erasure are entries (the erasure's with it); the export lists who accessed the guest's data: e-mail, role, when, what, nothing else of theirs", async () => {
    const created = await deskClient.post('/guests', walkIn('TR-1', 'Erasmus'));
    const id = created.body.guest.id as string;
    expect((await deskClient.get(`/guests/${id}`)).status).toBe(200);
    expect((await deskClient.post(`/guests/${id}/checkout`, {})).status).toBe(200);
    // A search that named the guest keeps its text until the guest is erased.
    expect((await deskClient.get('/activity?guest=erasm')).body.entries.length).toBeGreaterThan(0);
    const searchEntry = (await trail())[0];
    expect(searchEntry).toMatchObject({ action: 'guest.searched', search: 'erasm' });

    const download = await adminClient.get(`/guests/${id}/export`);
    expect(download.status).toBe(200);
    expect(download.body.accessedBy).toEqual([
      { at: expect.any(String), action: 'guest.viewed', guestId: id, staffEmail: desk.email, staffRole: 'receptionist' },
    ]);
    expect((await trail())[0]).toMatchObject({ action: 'guest.exported', staff: { userId: admin.id }, guestId: id });

    expect((await adminClient.post(`/guests/${id}/erase`, {})).status).toBe(200);
    // The erasure clears the search's text that named the guest; the entry stays.
    const searched = await db()
      .selectFrom('access_log')
      .select('search')
      .where('id', '=', searchEntry?.id ?? '')
      .executeTakeFirstOrThrow();
    expect(searched.search).toBeNull();
    const erased = (await trail(`?guest=${id}`)).map((e) => [e.action, e.staff.email]);
    expect(erased).toEqual([
      ['guest.erased', admin.email],
      ['guest.exported', admin.email],
      ['guest.viewed', desk.email],
    ]);
    // The next export names the export and the erasure too.
    const again = await adminClient.get(`/guests/${id}/export`);
    expect((again.body.accessedBy as Array<{ action: string; staffRole: string }>).map((a) => [a.action, a.staffRole])).toEqual([
      ['guest.viewed', 'receptionist'],
      ['guest.exported', 'admin'],
      ['guest.erased', 'admin'],
    ]);
  });

  it('the filters: by staff member, by guest, by the hotel day; pages follow `next`', async () => {
    const byDesk = await trail(`?staff=${desk.id}&limit=200`);
    expect(byDesk.length).toBeGreaterThan(0);
    expect(byDesk.every((e) => e.staff.userId === desk.id)).toBe(true);
    const byAdmin = await trail(`?staff=${admin.id}&limit=200`);
    expect(byAdmin.every((e) => e.staff.userId === admin.id)).toBe(true);

    const byGuest = await trail(`?guest=${pmsGuest.id}&limit=200`);
    expect(new Set(byGuest.map((e) => e.guestId))).toEqual(new Set([pmsGuest.id]));
    expect(new Set(byGuest.map((e) => e.action))).toEqual(new Set(['guest.viewed', 'request_log.viewed']));

    // The hotel's time zone is UTC: its day is the UTC date of the entries.
    const all = await trail('?limit=200');
    const today = all[0]?.at.slice(0, 10) ?? '';
    const sameDay = await trail(`?day=${today}&limit=200`);
    expect(sameDay.map((e) => e.id)).toEqual(all.filter((e) => e.at.startsWith(today)).map((e) => e.id));
    expect(await trail('?day=2020-01-01')).toEqual([]);
    expect((await adminClient.get('/access-trail?day=2026-02-30')).status).toBe(422);

    const first = await adminClient.get('/access-trail?limit=2');
    expect(first.body.entries).toHaveLength(2);
    const second = await adminClient.get(`/access-trail?limit=2&before=${encodeURIComponent(first.body.next as string)}`);
    expect(second.body.entries.map((e: Entry) => e.id)).toEqual(all.slice(2, 4).map((e) => e.id));
  });

  it("the day filter is the hotel's day in its time zone (India, Asia/Calcutta, UTC+5:30)", async () => {
    expect((await adminClient.patch('/hotel', { timeZone: 'Asia/Calcutta' })).status).toBe(200);
    try {
      const at = (iso: string, id: string) => ({ hotelId, staffUserId: desk.id, clientIp: '127.0.0.1', action: 'guest.viewed' as const, guestId: id, at: iso });
      await insertAccessEntry(db(), at('2026-11-26T18:29:59.000Z', 'gst_late_26')); // 23:59:59 on the 26th there
      await insertAccessEntry(db(), at('2026-11-26T18:30:00.000Z', 'gst_early_27')); // midnight of the 27th there
      await insertAccessEntry(db(), at('2026-11-27T18:29:59.000Z', 'gst_late_27'));
      expect((await trail('?day=2026-11-27')).map((e) => e.guestId)).toEqual(['gst_late_27', 'gst_early_27']);
      expect((await trail('?day=2026-11-26')).map((e) => e.guestId)).toEqual(['gst_late_26']);
    } finally {
      await adminClient.patch('/hotel', { timeZone: 'UTC' });
    }
  });

  it('a receptionist is refused the trail and the security events (403 FORBIDDEN)', async () => {
    for (const path of ['/access-trail', '/security-events']) {
      const res = await deskClient.get(path);
      expect([res.status, res.body.code]).toEqual([403, 'FORBIDDEN']);
    }
  });

  it("security events: a failed sign-in of an existing account (none for an unknown e-mail), a CSRF refusal of a signed-in session, staff added and deactivated by an admin with the admin's address", async () => {
    const wrong = await new DashboardClient(t).login(desk.email, 'not-the-password-at-all');
    expect(wrong.status).toBe(401);
    // Written once the answer is sent (so an unknown e-mail answers as fast): awaited.
    await expect.poll(async () => (await securityEvents('?kind=login.failed')).length).toBeGreaterThan(0);
    expect((await securityEvents('?kind=login.failed'))[0]).toMatchObject({
      kind: 'login.failed',
      actorType: 'anonymous',
      actor: null,
      subject: { userId: desk.id, email: desk.email },
      clientIp: '127.0.0.1',
    });
    const failed = await db().selectFrom('security_events').select('id').where('kind', '=', 'login.failed').execute();
    expect((await new DashboardClient(t).login(`nobody-${engine}@trail.example`, 'whatever-password')).status).toBe(401);
    expect(await db().selectFrom('security_events').select('id').where('kind', '=', 'login.failed').execute()).toHaveLength(failed.length);

    const forged = await deskClient.post('/guests', walkIn('TR-CSRF', 'Forged'), { csrf: null });
    expect([forged.status, forged.body.code]).toEqual([403, 'CSRF_REJECTED']);
    expect((await securityEvents('?kind=csrf.refused'))[0]).toMatchObject({
      kind: 'csrf.refused',
      subject: { userId: desk.id },
      clientIp: '127.0.0.1',
      detail: { method: 'POST', route: '/dashboard/api/guests' },
    });

    const added = await adminClient.post('/users', { email: `new-${engine}@trail.example`, role: 'receptionist', password: 'a-good-long-password' });
    expect(added.status).toBe(201);
    const userId = added.body.user.id as string;
    expect((await adminClient.post(`/users/${userId}/deactivate`)).status).toBe(200);
    const staffEvents = (await securityEvents()).filter((e) => e.subject?.userId === userId);
    expect(staffEvents).toEqual([
      expect.objectContaining({ kind: 'staff.deactivated', actorType: 'staff', actor: { userId: admin.id, email: admin.email }, clientIp: '127.0.0.1' }),
      expect.objectContaining({ kind: 'staff.added', actorType: 'staff', actor: { userId: admin.id, email: admin.email }, detail: { role: 'receptionist' } }),
    ]);
    expect((await securityEvents('?kind=staff.added')).every((e) => e.kind === 'staff.added')).toBe(true);
    // One account's events (its failed sign-ins among them), alone or of one kind.
    expect((await securityEvents(`?staff=${userId}`)).map((e) => e.kind)).toEqual(['staff.deactivated', 'staff.added']);
    const deskFailures = await securityEvents(`?staff=${desk.id}&kind=login.failed`);
    expect(deskFailures.length).toBeGreaterThan(0);
    expect(deskFailures.every((e) => e.kind === 'login.failed' && e.subject?.userId === desk.id)).toBe(true);
    expect((await adminClient.get('/security-events?kind=no.such')).status).toBe(422);
  });

  it('retention: entries and events older than ACCESS_LOG_RETENTION_DAYS are deleted by the retention job, and counted', async () => {
    expect(await accessCount()).toBeGreaterThan(0);
    const r = await runRetention(db(), null, Date.now() + 2 * 24 * 60 * 60 * 1000, 1);
    expect(r.accessLog).toBeGreaterThan(0);
    expect(r.securityEvents).toBeGreaterThan(0);
    expect(await accessCount()).toBe(0);
    // The purge, run as if days later, ended the sessions too.
    adminClient = await DashboardClient.loggedIn(t, admin.email);
    deskClient = await DashboardClient.loggedIn(t, desk.email);
    expect(await trail()).toEqual([]);
    expect(await securityEvents()).toEqual([]);
    // A view after the purge is recorded as before.
    expect((await deskClient.get(`/guests/${pmsGuest.id}`)).status).toBe(200);
    expect((await trail()).map((e) => [e.action, e.staff.userId])).toEqual([['guest.viewed', desk.id]]);
  });
});

describe('ACCESS_LOG_RETENTION_DAYS', () => {
  it('is 365 days unless set; a whole number of days from 1 to 36500, else the variable is named', () => {
    expect(loadConfig({}).accessLogRetentionDays).toBe(365);
    expect(loadConfig({ ACCESS_LOG_RETENTION_DAYS: '30' }).accessLogRetentionDays).toBe(30);
    for (const bad of ['0', '-1', '1.5', 'off', '36501'])
      expect(() => loadConfig({ ACCESS_LOG_RETENTION_DAYS: bad })).toThrow(/ACCESS_LOG_RETENTION_DAYS must be a whole number of days from 1 to 36500/);
  });
});
