import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addStaffUser, cookieAttributes, DashboardClient, DASHBOARD_API, send, STAFF_PASSWORD, withinOneWindow } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// Findings of the review of the dashboard against its contract, each pinned by a test:
// bad input is a clear 4xx naming the field, never a 5xx, on both engines.

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

describe.each(testEngines())('dashboard hardening (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;

  beforeAll(async () => {
    t = await startTestServer(engine);
    const a = await addStaffUser(t.server.database.db, t.slug, `hard-admin-${engine}@hotel.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, a.email);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('bad input: a NUL character in an id, a query or a body is a 4xx naming the field (PostgreSQL cannot store it), never a 500; the PMS API alike', async () => {
    const answers = [
      await admin.get('/guests/a%00b'),
      await admin.get('/requests/a%00b'),
      await admin.get('/activity?guest=a%00b'),
      await admin.post('/users/a%00b/deactivate'),
      await admin.post('/keys/a%00b/revoke'),
      await admin.post('/guests', { lastName: 'A\u0000B', roomNumber: '1', checkInDate: '2026-11-23', checkOutDate: '2026-11-24' }),
      await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email: 'x\u0000@y.example', password: 'whatever-password' } }),
      await t.post(`${t.pmsBase}/guests/checkin`, {
        pmsGuestId: 'NUL-1',
        lastName: 'A\u0000B',
        roomNumber: '1',
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-24',
      }),
      await t.api('GET', `${t.pmsBase}/guests?pmsGuestId=a%00b`),
    ];
    for (const res of answers) {
      expect(res.status, res.text).toBeGreaterThanOrEqual(400);
      expect(res.status, res.text).toBeLessThan(500);
      expect(res.body.status).toBe('error');
    }
    const walkIn = answers[5];
    expect(walkIn?.status).toBe(422);
    expect(walkIn?.body.errors).toEqual([expect.objectContaining({ field: 'lastName', code: 'INVALID_FORMAT' })]);
    const checkIn = answers[7];
    expect(checkIn?.status).toBe(422);
    expect(checkIn?.body.errors).toEqual([expect.objectContaining({ field: 'lastName', code: 'INVALID_FORMAT' })]);
  });

  it('bad input: since/until that no clock shows (a leap second) are 422 naming the field, not a 500', async () => {
    const res = await admin.get('/requests?since=2024-12-31T23:59:60Z');
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'since', code: 'INVALID_FORMAT' })]);
  });

  it('field errors state the rule of a pattern: a slug says which characters it takes, a limit its range', async () => {
    const res = await admin.get('/activity?limit=0');
    expect(res.status).toBe(422);
    expect(res.body.errors[0].message).toMatch(/1-200/);
  });

  it('docs/dashboard.md Security: parallel wrong guesses cannot slip under the failed-login limit (every attempt is counted before the password check)', async () => {
    const victim = await addStaffUser(t.server.database.db, t.slug, `parallel-${engine}@hotel.example`, 'receptionist');
    await withinOneWindow();
    const attempts = await Promise.all([
      ...Array.from({ length: 12 }, () => new DashboardClient(t).login(victim.email, 'wrong-password-1')),
      new DashboardClient(t).login(victim.email, STAFF_PASSWORD),
    ]);
    const statuses = attempts.map((r) => r.status);
    // At most five attempts reach the password check; the rest are refused unchecked.
    expect(statuses.filter((s) => s === 401 || s === 200).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(8);
  });

  it('docs/dashboard.md Security: a successful login does not count against the limit (six good logins in a row all succeed)', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `often-${engine}@hotel.example`, 'receptionist');
    await withinOneWindow();
    for (let i = 0; i < 6; i++) expect((await new DashboardClient(t).login(user.email)).status).toBe(200);
  });

  it('docs/dashboard.md Security: the session cookie carries the __Host- prefix (only this host may set it)', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `prefix-${engine}@hotel.example`, 'receptionist');
    const res = await new DashboardClient(t).login(user.email);
    const line = String(res.headers['set-cookie']);
    expect(line).toMatch(/^__Host-innsync_session=[^;]+;/);
    // A __Host- cookie needs Path=/, Secure and no Domain; the order of attributes is free.
    expect(cookieAttributes(line)).toEqual({ path: '/', httponly: '', secure: '', samesite: 'Strict', 'max-age': '43200' });
  });

  it('docs/dashboard.md Security: a background refresh (X-Background-Refresh: 1) does not renew the session; a request of the user does', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `idle-${engine}@hotel.example`, 'receptionist');
    const desk = await DashboardClient.loggedIn(t, user.email);
    const id = sha256(desk.cookie ?? '');
    const twentyMinutesAgo = new Date(Date.now() - 20 * 60_000).toISOString();
    const lastSeen = async () =>
      (await t.server.database.db.selectFrom('staff_sessions').select('last_seen_at').where('id', '=', id).executeTakeFirstOrThrow()).last_seen_at;
    await t.server.database.db.updateTable('staff_sessions').set({ last_seen_at: twentyMinutesAgo }).where('id', '=', id).execute();
    expect((await desk.api('GET', '/guests', { headers: { 'x-background-refresh': '1' } })).status).toBe(200);
    expect(await lastSeen()).toBe(twentyMinutesAgo);
    expect((await desk.get('/guests')).status).toBe(200);
    expect(Date.parse(await lastSeen())).toBeGreaterThan(Date.now() - 60_000);
  });

  it('docs/dashboard.md Live events: HEAD /events answers the headers and ends (no stream is left open)', async () => {
    const res = await admin.api('HEAD', '/events');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
  });
});
