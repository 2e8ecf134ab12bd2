import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { endStaffSessions } from '../../src/staff/staff-service.js';
import { addStaffUser, DashboardClient, DASHBOARD_API, hotelIdOf, send, STAFF_PASSWORD, type EventStream } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "My account" and "Ending sessions": a user's own sessions (device,
// address, started, last seen, this one marked), ending one or all others, an admin ending
// all of a user's, and a password change ending the others; each ended session's next
// request is 401 and its event stream closes. Through real HTTPS requests on both engines.

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0';
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

describe.each(testEngines())('My account: sessions and password (%s)', (engine) => {
  let t: TestServer;
  const open: EventStream[] = [];
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t.close();
  });

  /** A login of `email` from a browser with this User-Agent. */
  async function loginFrom(email: string, userAgent: string): Promise<DashboardClient> {
    const client = new DashboardClient(t);
    const res = await client.login(email, STAFF_PASSWORD, { 'user-agent': userAgent });
    expect(res.status, res.text).toBe(200);
    return client;
  }

  async function stream(client: DashboardClient): Promise<EventStream> {
    const s = await client.events();
    open.push(s);
    expect(s.status).toBe(200);
    expect((await s.next()).event).toBe('ready');
    return s;
  }

  const securityEvents = (userId: string) =>
    db()
      .selectFrom('security_events')
      .select(['kind', 'actor_type', 'actor_id', 'detail'])
      .where('subject_user_id', '=', userId)
      .orderBy('created_at')
      .execute();

  it('GET /account/sessions lists the own live sessions only: browser and system from the User-Agent, the client address, times, display, this one marked', async () => {
    const user = await addStaffUser(db(), t.slug, `list-${engine}@sessions.example`, 'receptionist');
    const other = await addStaffUser(db(), t.slug, `other-${engine}@sessions.example`, 'receptionist');
    const chrome = await loginFrom(user.email, CHROME);
    const firefox = await loginFrom(user.email, FIREFOX);
    await loginFrom(other.email, CHROME);
    const display = await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email: user.email, password: STAFF_PASSWORD, display: true } });
    expect(display.status).toBe(200);

    const res = await chrome.get('/account/sessions');
    expect(res.status, res.text).toBe(200);
    const sessions = res.body.sessions as Array<Record<string, unknown>>;
    expect(sessions).toHaveLength(3);
    const mine = sessions.find((s) => s.current === true);
    expect(mine).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      browser: 'Chrome 120',
      system: 'Linux',
      ip: '127.0.0.1',
      createdAt: expect.any(String),
      lastSeenAt: expect.any(String),
      display: false,
      current: true,
    });
    expect(sessions.filter((s) => s.current === true)).toHaveLength(1);
    expect(sessions).toContainEqual(expect.objectContaining({ browser: 'Firefox 121', system: 'Windows', current: false, display: false }));
    // A login without a User-Agent names no device.
    expect(sessions).toContainEqual(expect.objectContaining({ browser: null, system: null, display: true, current: false }));
    // The id shown is not the row's id (the SHA-256 of the cookie), which finds the session.
    const rowIds = (await db().selectFrom('staff_sessions').select('id').where('user_id', '=', user.id).execute()).map((r) => r.id);
    for (const s of sessions) expect(rowIds).not.toContain(s.id);
    expect(rowIds).toContain(sha256(chrome.cookie ?? ''));
    // The other browser sees the same list, itself marked.
    const seen = await firefox.get('/account/sessions');
    expect(seen.body.sessions.find((s: { current: boolean }) => s.current)).toMatchObject({ browser: 'Firefox 121' });
    // The User-Agent is kept cut to a few hundred characters.
    const long = await loginFrom(user.email, `${CHROME} ${'x'.repeat(2000)}`);
    const row = await db()
      .selectFrom('staff_sessions')
      .select(['user_agent', 'client_ip'])
      .where('id', '=', sha256(long.cookie ?? ''))
      .executeTakeFirstOrThrow();
    expect(row.user_agent?.length).toBe(300);
    expect(row.client_ip).toBe('127.0.0.1');
  });

  it('ending one session: its next request is 401 and its event stream closes at once; the others live on; session.ended is recorded; an unknown id is 404', async () => {
    const user = await addStaffUser(db(), t.slug, `end-one-${engine}@sessions.example`, 'receptionist');
    const me = await loginFrom(user.email, CHROME);
    const laptop = await loginFrom(user.email, FIREFOX);
    const third = await loginFrom(user.email, FIREFOX);
    const laptopStream = await stream(laptop);
    const thirdStream = await stream(third);
    // The laptop's id: the one the laptop itself sees as current, one of the others in my list.
    const laptopId = ((await laptop.get('/account/sessions')).body.sessions as Array<{ id: string; current: boolean }>).find((s) => s.current)?.id;
    const list = (await me.get('/account/sessions')).body.sessions as Array<{ id: string; current: boolean }>;
    expect(list.filter((s) => !s.current).map((s) => s.id)).toContain(laptopId);

    const res = await me.post(`/account/sessions/${laptopId}/end`, {});
    expect([res.status, res.body]).toEqual([200, { ended: 1 }]);
    await expect.poll(() => laptopStream.hasEnded).toBe(true);
    expect((await laptop.get('/session')).status).toBe(401);
    expect(thirdStream.hasEnded).toBe(false);
    expect((await third.get('/session')).status).toBe(200);
    expect((await me.get('/session')).status).toBe(200);

    const again = await me.post(`/account/sessions/${laptopId}/end`, {});
    expect([again.status, again.body.code]).toEqual([404, 'RECORD_NOT_FOUND']);
    // Another user's session cannot be ended by its id.
    const stranger = await addStaffUser(db(), t.slug, `stranger-${engine}@sessions.example`, 'receptionist');
    const strangerClient = await loginFrom(stranger.email, CHROME);
    const strangerId = ((await strangerClient.get('/account/sessions')).body.sessions as Array<{ id: string }>)[0]?.id;
    expect((await me.post(`/account/sessions/${strangerId}/end`, {})).status).toBe(404);
    expect((await strangerClient.get('/session')).status).toBe(200);

    expect(await securityEvents(user.id)).toEqual([
      { kind: 'session.ended', actor_type: 'staff', actor_id: user.id, detail: expect.stringContaining('"count":1') },
    ]);
  });

  it('"End all others": every other session of the user ends (401, streams closed), this one stays; sessions.ended is recorded', async () => {
    const user = await addStaffUser(db(), t.slug, `end-others-${engine}@sessions.example`, 'receptionist');
    const me = await loginFrom(user.email, CHROME);
    const others = [await loginFrom(user.email, FIREFOX), await loginFrom(user.email, CHROME)];
    const streams = await Promise.all(others.map(stream));
    const mine = await stream(me);

    const res = await me.post('/account/sessions/end-others', {});
    expect([res.status, res.body]).toEqual([200, { ended: 2 }]);
    for (const s of streams) await expect.poll(() => s.hasEnded).toBe(true);
    for (const c of others) expect((await c.get('/session')).status).toBe(401);
    expect((await me.get('/session')).status).toBe(200);
    expect(mine.hasEnded).toBe(false);
    expect((await me.get('/account/sessions')).body.sessions).toHaveLength(1);
    // Nothing left to end: 0, and no entry.
    expect((await me.post('/account/sessions/end-others', {})).body).toEqual({ ended: 0 });
    expect(await securityEvents(user.id)).toEqual([
      { kind: 'sessions.ended', actor_type: 'staff', actor_id: user.id, detail: expect.stringContaining('"scope":"others"') },
    ]);
  });

  it('an admin ends every session of a user (POST /users/:id/end-sessions): all 401, streams closed; a receptionist may not; another hotel’s user is 404', async () => {
    const admin = await addStaffUser(db(), t.slug, `admin-${engine}@sessions.example`, 'admin');
    const user = await addStaffUser(db(), t.slug, `ended-${engine}@sessions.example`, 'receptionist');
    const adminClient = await loginFrom(admin.email, CHROME);
    const sessions = [await loginFrom(user.email, CHROME), await loginFrom(user.email, FIREFOX)];
    const streams = await Promise.all(sessions.map(stream));

    const refused = await sessions[0]!.post(`/users/${user.id}/end-sessions`, {});
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    const res = await adminClient.post(`/users/${user.id}/end-sessions`, {});
    expect([res.status, res.body]).toEqual([200, { ended: 2 }]);
    for (const s of streams) await expect.poll(() => s.hasEnded).toBe(true);
    for (const c of sessions) expect((await c.get('/session')).status).toBe(401);
    expect((await adminClient.get('/session')).status).toBe(200);
    expect((await adminClient.post('/users/user_unknown/end-sessions', {})).status).toBe(404);
    expect(await securityEvents(user.id)).toEqual([
      { kind: 'sessions.ended', actor_type: 'staff', actor_id: admin.id, detail: expect.stringContaining('"scope":"all"') },
    ]);
    // The user logs in again as before.
    expect((await new DashboardClient(t).login(user.email)).status).toBe(200);
  });

  it('a session ended where this instance does not hear of it (as on another instance) closes its stream within the streams’ session check', async () => {
    const user = await addStaffUser(db(), t.slug, `elsewhere-${engine}@sessions.example`, 'receptionist');
    const client = await loginFrom(user.email, CHROME);
    const s = await stream(client);
    // The use case another instance runs: the rows go, this instance's streams are not told.
    const ended = await endStaffSessions(db(), await hotelIdOf(db(), t.slug), user.id, {}, { type: 'operator' });
    expect(ended).toEqual([sha256(client.cookie ?? '')]);
    await expect.poll(() => s.hasEnded).toBe(true);
    expect((await client.get('/session')).status).toBe(401);
  });

  it('POST /account/password: the current password is required (422 currentPassword); a new one changes it, ends the other sessions (streams closed) and keeps this one; password.changed is recorded', async () => {
    const user = await addStaffUser(db(), t.slug, `change-${engine}@sessions.example`, 'receptionist');
    const me = await loginFrom(user.email, CHROME);
    const other = await loginFrom(user.email, FIREFOX);
    const otherStream = await stream(other);
    const next = 'ochre-pelican-harbour-31';

    const wrong = await me.post('/account/password', { currentPassword: 'not-my-password-9', newPassword: next });
    expect([wrong.status, wrong.body.code, wrong.body.errors]).toEqual([
      422,
      'VALIDATION_ERROR',
      [expect.objectContaining({ field: 'currentPassword', code: 'INVALID_VALUE' })],
    ]);
    const weak = await me.post('/account/password', { currentPassword: STAFF_PASSWORD, newPassword: 'password1234' });
    expect([weak.status, weak.body.errors]).toEqual([422, [expect.objectContaining({ field: 'newPassword', code: 'PASSWORD_TOO_COMMON' })]]);
    expect((await other.get('/session')).status).toBe(200);

    const res = await me.post('/account/password', { currentPassword: STAFF_PASSWORD, newPassword: next });
    expect([res.status, res.body]).toEqual([200, { passwordChanged: true, sessionsEnded: 1 }]);
    await expect.poll(() => otherStream.hasEnded).toBe(true);
    expect((await other.get('/session')).status).toBe(401);
    expect((await me.get('/session')).status).toBe(200);
    expect((await new DashboardClient(t).login(user.email, STAFF_PASSWORD)).status).toBe(401);
    expect((await new DashboardClient(t).login(user.email, next)).status).toBe(200);
    // The old password's try is a failed sign-in of the account (docs/dashboard.md, "Access trail"),
    // written once its answer is sent: awaited.
    await expect.poll(async () => (await securityEvents(user.id)).length).toBe(2);
    expect(await securityEvents(user.id)).toEqual([
      { kind: 'password.changed', actor_type: 'staff', actor_id: user.id, detail: '{"sessionsEnded":1}' },
      { kind: 'login.failed', actor_type: 'anonymous', actor_id: null, detail: null },
    ]);
  });

  it('a front-desk display has no My account: its sessions and password routes are 403 DISPLAY_READ_ONLY', async () => {
    const user = await addStaffUser(db(), t.slug, `display-${engine}@sessions.example`, 'receptionist');
    const display = new DashboardClient(t);
    display.adopt(await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email: user.email, password: STAFF_PASSWORD, display: true } }));
    expect((await display.get('/account/sessions')).body.code).toBe('DISPLAY_READ_ONLY');
    expect((await display.post('/account/sessions/end-others', {})).body.code).toBe('DISPLAY_READ_ONLY');
    expect((await display.post('/account/password', { currentPassword: STAFF_PASSWORD, newPassword: 'ochre-pelican-harbour-31' })).body.code).toBe(
      'DISPLAY_READ_ONLY',
    );
  });
});
