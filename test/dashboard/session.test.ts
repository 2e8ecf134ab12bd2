import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { startServer } from '../../src/server.js';
import {
  addStaffUser,
  cookieAttributes,
  DashboardClient,
  DASHBOARD_API,
  send,
  SESSION_COOKIE,
  sessionCookieOf,
  STAFF_PASSWORD,
  withinOneWindow,
  withoutRequestId,
  type Target,
} from '../support/dashboard-client.js';
import { createTestStorage, startTestServer, testEngines, type TestServer, databaseEnv } from '../support/harness.js';

// docs/dashboard.md Security: sessions, login, logout, expiry, failed-login
// limits, and the first-run setup link, through real HTTPS requests on both engines.

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const MINUTE = 60_000;

/** Every text value in every table of the database. */
async function allStoredText(db: Db): Promise<string[]> {
  const out: string[] = [];
  for (const table of await db.introspection.getTables()) {
    const rows = (await db
      .selectFrom(table.name as 'hotels')
      .selectAll()
      .execute()) as unknown as Array<Record<string, unknown>>;
    for (const row of rows) for (const v of Object.values(row)) if (v !== null && v !== undefined) out.push(String(v));
  }
  return out;
}

describe.each(testEngines())('dashboard sessions and login (%s)', (engine) => {
  let t: TestServer;
  let admin: { id: string; email: string };
  let desk: { id: string; email: string };
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    admin = await addStaffUser(db(), t.slug, `admin-${engine}@session.example`, 'admin');
    desk = await addStaffUser(db(), t.slug, `desk-${engine}@session.example`, 'receptionist');
  });
  afterAll(() => t.close());

  const sessionRow = (token: string) => db().selectFrom('staff_sessions').selectAll().where('id', '=', sha256(token)).executeTakeFirst();

  it('docs/dashboard.md Security: login answers Set-Cookie __Host-innsync_session with a random 256-bit token, HttpOnly, Secure, SameSite=Strict, Path=/, and the session', async () => {
    const client = new DashboardClient(t);
    // E-mails are compared case-insensitively.
    const res = await client.login(admin.email.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.setCookies).toHaveLength(1);
    const line = res.setCookies[0] ?? '';
    expect(line.startsWith(`${SESSION_COOKIE}=`)).toBe(true);
    const attrs = cookieAttributes(line);
    expect(attrs).toHaveProperty('httponly');
    expect(attrs).toHaveProperty('secure');
    expect(attrs.samesite).toBe('Strict');
    expect(attrs.path).toBe('/');
    const token = sessionCookieOf(res.setCookies) ?? '';
    // 32 random bytes, base64url.
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(res.body).toEqual({
      user: { id: admin.id, email: admin.email, role: 'admin' },
      hotel: { slug: t.slug, name: 'Test Hotel', timeZone: 'UTC' },
      display: false,
      csrfToken: expect.any(String),
    });
    expect(res.body.csrfToken).not.toBe(token);

    // GET /session answers the same session with the same CSRF token.
    const again = await client.get('/session');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);

    // Two logins are two sessions with two tokens.
    const second = await DashboardClient.loggedIn(t, admin.email);
    expect(second.cookie).not.toBe(client.cookie);
    expect(second.csrfToken).not.toBe(client.csrfToken);
  });

  it('docs/dashboard.md Security: staff_sessions.id is the SHA-256 of the cookie token; no column of any table holds the token', async () => {
    const client = await DashboardClient.loggedIn(t, desk.email);
    const token = client.cookie ?? '';
    const row = await sessionRow(token);
    expect(row).toBeDefined();
    expect(row?.id).toBe(sha256(token));
    expect(row?.id).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.user_id).toBe(desk.id);
    const stored = await allStoredText(db());
    expect(stored).toContain(sha256(token));
    expect(stored.filter((v) => v.includes(token))).toEqual([]);
  });

  it('docs/dashboard.md JSON API POST /logout: 200 {loggedOut: true}, clears the cookie; the old cookie then gets 401 NOT_AUTHENTICATED; other sessions live on', async () => {
    const other = await DashboardClient.loggedIn(t, admin.email);
    const client = await DashboardClient.loggedIn(t, admin.email);
    const token = client.cookie ?? '';
    expect(await sessionRow(token)).toBeDefined();

    const out = await client.post('/logout');
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ loggedOut: true });
    expect(out.setCookies).toHaveLength(1);
    expect(sessionCookieOf(out.setCookies)).toBe('');
    const attrs = cookieAttributes(out.setCookies[0] ?? '');
    expect(attrs['max-age']).toBe('0');
    expect(attrs.path).toBe('/');
    expect(await sessionRow(token)).toBeUndefined();

    for (const [method, p] of [
      ['GET', '/session'],
      ['GET', '/guests'],
      ['POST', '/logout'],
    ] as const) {
      const res = await send(t, method, `${DASHBOARD_API}${p}`, { cookie: token, csrf: client.csrfToken });
      expect(res.status, `${method} ${p}`).toBe(401);
      expect(res.body.code).toBe('NOT_AUTHENTICATED');
    }
    expect((await other.get('/session')).status).toBe(200);
  });

  it('docs/dashboard.md JSON API GET /session: no cookie, an empty one or an unknown one is 401 NOT_AUTHENTICATED on every staff route', async () => {
    const unknown = Buffer.alloc(32, 7).toString('base64url');
    for (const cookie of [null, '', unknown, 'x'.repeat(300)]) {
      for (const [method, p] of [
        ['GET', '/session'],
        ['GET', '/guests'],
        ['GET', '/activity'],
        ['GET', '/keys'],
        ['POST', '/guests'],
        ['GET', '/events'],
      ] as const) {
        const res = await send(t, method, `${DASHBOARD_API}${p}`, { cookie, ...(method === 'POST' ? { body: {} } : {}) });
        expect(res.status, `${method} ${p} cookie=${String(cookie).slice(0, 10)}`).toBe(401);
        expect(res.body).toMatchObject({ status: 'error', code: 'NOT_AUTHENTICATED', requestId: expect.any(String) });
      }
    }
  });

  it('docs/dashboard.md JSON API POST /login: a wrong password and an unknown e-mail get the same 401 LOGIN_FAILED and no cookie', async () => {
    const wrong = await new DashboardClient(t).login(admin.email, 'not-the-password-at-all');
    const unknown = await new DashboardClient(t).login(`nobody-${engine}@session.example`, STAFF_PASSWORD);
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.setCookies).toEqual([]);
      expect(res.body).toMatchObject({ status: 'error', code: 'LOGIN_FAILED' });
    }
    expect(withoutRequestId(wrong.body)).toEqual(withoutRequestId(unknown.body));
  });

  it('docs/dashboard.md Security: a login from a foreign Origin is 403 CSRF_REJECTED (even with the right password); the same origin is accepted', async () => {
    for (const origin of ['https://evil.example', `https://127.0.0.1:${t.server.httpsPort + 1}`, 'null']) {
      const res = await new DashboardClient(t).login(desk.email, STAFF_PASSWORD, { origin });
      expect(res.status, origin).toBe(403);
      expect(res.body.code).toBe('CSRF_REJECTED');
      expect(res.setCookies).toEqual([]);
    }
    const same = await new DashboardClient(t).login(desk.email, STAFF_PASSWORD, { origin: t.baseUrl });
    expect(same.status).toBe(200);
    expect(sessionCookieOf(same.setCookies)).toBeTruthy();
  });

  it('docs/dashboard.md Security: login must be application/json; what a cross-site form can send never logs in', async () => {
    const credentials = JSON.stringify({ email: desk.email, password: STAFF_PASSWORD });
    for (const [type, body] of [
      ['text/plain', credentials],
      ['application/x-www-form-urlencoded', `email=${encodeURIComponent(desk.email)}&password=${STAFF_PASSWORD}`],
      ['multipart/form-data; boundary=x', `--x\r\nContent-Disposition: form-data; name="email"\r\n\r\n${desk.email}\r\n--x--\r\n`],
    ] as const) {
      const res = await send(t, 'POST', `${DASHBOARD_API}/login`, { rawBody: body, headers: { 'content-type': type } });
      expect(res.status, type).toBeGreaterThanOrEqual(400);
      expect(res.status, type).toBeLessThan(500);
      expect(res.setCookies, type).toEqual([]);
      expect(res.body?.status, type).toBe('error');
    }
  });

  it('docs/dashboard.md Security: deactivating a user ends their sessions at once, and they cannot log in again (401 LOGIN_FAILED, as a wrong password)', async () => {
    const victim = await addStaffUser(db(), t.slug, `leaver-${engine}@session.example`, 'receptionist');
    const victimClient = await DashboardClient.loggedIn(t, victim.email);
    const victimSecond = await DashboardClient.loggedIn(t, victim.email);
    expect((await victimClient.get('/session')).status).toBe(200);

    const adminClient = await DashboardClient.loggedIn(t, admin.email);
    const res = await adminClient.post(`/users/${victim.id}/deactivate`);
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: victim.id, email: victim.email, role: 'receptionist', deactivatedAt: expect.any(String) });

    for (const c of [victimClient, victimSecond]) {
      const s = await c.get('/session');
      expect(s.status).toBe(401);
      expect(s.body.code).toBe('NOT_AUTHENTICATED');
      const w = await c.post('/guests', { lastName: 'Ghost', roomNumber: 'G1', checkInDate: '2026-11-23', checkOutDate: '2026-11-24' });
      expect(w.status).toBe(401);
    }
    expect(await db().selectFrom('staff_sessions').select('id').where('user_id', '=', victim.id).execute()).toEqual([]);
    expect(await db().selectFrom('guests').select('id').where('last_name', '=', 'Ghost').execute()).toEqual([]);

    const login = await new DashboardClient(t).login(victim.email);
    expect(login.status).toBe(401);
    expect(login.setCookies).toEqual([]);
    const wrong = await new DashboardClient(t).login(victim.email, 'not-the-password-at-all');
    expect(withoutRequestId(login.body)).toEqual(withoutRequestId(wrong.body));
    expect(login.body.code).toBe('LOGIN_FAILED');
  });

  it('docs/dashboard.md Security: after 5 failed logins for one e-mail from one address the 6th from there, even with the right password, is 429 RATE_LIMITED with Retry-After and retryAfter; other users still log in', async () => {
    const locked = await addStaffUser(db(), t.slug, `locked-${engine}@session.example`, 'receptionist');
    await withinOneWindow();
    // The limit is per e-mail as the user types it, case aside.
    const spellings = [locked.email, locked.email, locked.email, locked.email.toUpperCase(), ` ${locked.email} `];
    for (const [i, email] of spellings.entries()) {
      const res = await new DashboardClient(t).login(email, `wrong-password-${i}`);
      expect(res.status, `failure ${i + 1}`).toBe(401);
      expect(res.body.code).toBe('LOGIN_FAILED');
    }
    const sixth = await new DashboardClient(t).login(locked.email, STAFF_PASSWORD);
    expect(sixth.status).toBe(429);
    expect(sixth.body).toMatchObject({ status: 'error', code: 'RATE_LIMITED', retryAfter: expect.any(Number) });
    expect(sixth.setCookies).toEqual([]);
    const retryAfter = sixth.body.retryAfter as number;
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(sixth.headers['retry-after']).toBe(String(retryAfter));
    expect(await db().selectFrom('staff_sessions').select('id').where('user_id', '=', locked.id).execute()).toEqual([]);

    // Another e-mail is not affected.
    expect((await new DashboardClient(t).login(desk.email)).status).toBe(200);
  });

  it('docs/dashboard.md Security: idle expiry 30 minutes, sliding: 29 minutes idle still works and renews last_seen_at; 31 minutes idle is 401 and the session is gone', async () => {
    const client = await DashboardClient.loggedIn(t, desk.email);
    const id = sha256(client.cookie ?? '');
    const setLastSeen = (ms: number) =>
      db()
        .updateTable('staff_sessions')
        .set({ last_seen_at: new Date(Date.now() - ms).toISOString() })
        .where('id', '=', id)
        .execute();

    await setLastSeen(29 * MINUTE);
    const before = (await sessionRow(client.cookie ?? ''))?.last_seen_at ?? '';
    expect((await client.get('/session')).status).toBe(200);
    const after = (await sessionRow(client.cookie ?? ''))?.last_seen_at ?? '';
    expect(after > before).toBe(true);
    // Renewed: the session is fresh again.
    expect((await client.get('/guests')).status).toBe(200);

    await setLastSeen(31 * MINUTE);
    const res = await client.get('/session');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('NOT_AUTHENTICATED');
    expect(await sessionRow(client.cookie ?? '')).toBeUndefined();
  });

  it('docs/dashboard.md Security: absolute expiry 12 hours: a session created 13 hours ago is 401 even when just used', async () => {
    const client = await DashboardClient.loggedIn(t, desk.email);
    await db()
      .updateTable('staff_sessions')
      .set({ created_at: new Date(Date.now() - 13 * 60 * MINUTE).toISOString(), last_seen_at: new Date().toISOString() })
      .where('id', '=', sha256(client.cookie ?? ''))
      .execute();
    const res = await client.get('/session');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('NOT_AUTHENTICATED');
    expect(await sessionRow(client.cookie ?? '')).toBeUndefined();
  });

  it('docs/dashboard.md Security: the PMS API never reads cookies: a PMS request with only a session cookie is 401 UNAUTHORIZED; with its key it needs no CSRF token', async () => {
    const client = await DashboardClient.loggedIn(t, admin.email);
    const base = `${t.pmsBase}`;
    const list = await send(t, 'GET', `${base}/guests`, { cookie: client.cookie });
    expect(list.status).toBe(401);
    expect(list.body.code).toBe('UNAUTHORIZED');
    const write = await send(t, 'POST', `${base}/guests/checkin`, {
      cookie: client.cookie,
      csrf: client.csrfToken,
      headers: { 'idempotency-key': `cookie-only-${engine}` },
      body: { pmsGuestId: 'COOKIE-1', lastName: 'Cookie', roomNumber: 'C1', checkInDate: '2026-11-23', checkOutDate: '2026-11-24' },
    });
    expect(write.status).toBe(401);
    expect(write.body.code).toBe('UNAUTHORIZED');
    expect(await db().selectFrom('guests').select('id').where('pms_guest_id', '=', 'COOKIE-1').execute()).toEqual([]);

    // With the key, a cookie and no X-CSRF-Token change nothing: 200.
    const keyed = await send(t, 'POST', `${base}/guests/checkin`, {
      cookie: client.cookie,
      headers: { authorization: `Bearer ${t.keys.live}`, 'idempotency-key': `keyed-${engine}` },
      body: { pmsGuestId: 'COOKIE-2', lastName: 'Keyed', roomNumber: 'C2', checkInDate: '2026-11-23', checkOutDate: '2026-11-24' },
    });
    expect(keyed.status).toBe(200);
    expect(keyed.body.code).toBeUndefined();
  });

  it('docs/dashboard.md Pages #/setup: a server whose storage got a hotel after start (the CLI) has a dead setup link', async () => {
    // The harness creates its hotel after the server started: the link it printed is dead.
    const token = /#\/setup\/(.+)$/.exec(t.server.setupUrl ?? '')?.[1] ?? '';
    expect(token).not.toBe('');
    const res = await send(t, 'GET', `${DASHBOARD_API}/setup/${token}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('SETUP_LINK_INVALID');
    const post = await send(t, 'POST', `${DASHBOARD_API}/setup`, {
      body: { token, hotelSlug: `late-${engine}`, hotelName: 'Late', email: `late-${engine}@session.example`, password: STAFF_PASSWORD },
    });
    expect(post.status).toBe(404);
    expect(post.body.code).toBe('SETUP_LINK_INVALID');
    expect(post.setCookies).toEqual([]);
    expect(await db().selectFrom('hotels').select('slug').where('slug', '=', `late-${engine}`).execute()).toEqual([]);
  });
});

describe.each(testEngines())('first-run setup link (%s)', (engine) => {
  it('docs/dashboard.md JSON API /setup: the link of an empty storage works once: GET 200, wrong token 404 SETUP_LINK_INVALID, POST 201 with a session cookie, then dead; a restart on that storage has setupUrl null', async () => {
    const storage = await createTestStorage(engine);
    const env = { PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: storage.dataDir, ...databaseEnv(storage), LOG_LEVEL: 'silent' };
    let server = await startServer(loadConfig(env), pino({ level: 'silent' }));
    const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
    try {
      expect(server.setupUrl).toMatch(/^https:\/\/localhost:\d+\/dashboard\/#\/setup\/[A-Za-z0-9_-]+$/);
      const token = /#\/setup\/(.+)$/.exec(server.setupUrl ?? '')?.[1] ?? '';
      const target: Target = { baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent };

      const ok = await send(target, 'GET', `${DASHBOARD_API}/setup/${token}`);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ valid: true });
      for (const wrong of [`${token}x`, token.slice(1), 'nope']) {
        const res = await send(target, 'GET', `${DASHBOARD_API}/setup/${wrong}`);
        expect(res.status, wrong).toBe(404);
        expect(res.body.code).toBe('SETUP_LINK_INVALID');
      }

      const body = { token, hotelSlug: `first-${engine}`, hotelName: 'First Inn', email: `Owner-${engine}@First.example`, password: STAFF_PASSWORD };
      // A wrong token or a foreign origin creates nothing and leaves the link alive.
      const wrongToken = await send(target, 'POST', `${DASHBOARD_API}/setup`, { body: { ...body, token: `${token}x` } });
      expect(wrongToken.status).toBe(404);
      expect(wrongToken.body.code).toBe('SETUP_LINK_INVALID');
      expect(wrongToken.body.message).toContain('not the current one');
      const foreign = await send(target, 'POST', `${DASHBOARD_API}/setup`, { body, headers: { origin: 'https://evil.example' } });
      expect(foreign.status).toBe(403);
      expect(foreign.body.code).toBe('CSRF_REJECTED');
      // Setup must be JSON: what a cross-site form can send is refused.
      const form = await send(target, 'POST', `${DASHBOARD_API}/setup`, { rawBody: JSON.stringify(body), headers: { 'content-type': 'text/plain' } });
      expect(form.status).toBeGreaterThanOrEqual(400);
      expect(form.status).toBeLessThan(500);
      expect(form.setCookies).toEqual([]);
      expect(await server.database.db.selectFrom('hotels').select('id').execute()).toEqual([]);
      expect((await send(target, 'GET', `${DASHBOARD_API}/setup/${token}`)).status).toBe(200);

      // Two newcomers at once: one wins, the other finds the link dead.
      const rival = { ...body, hotelSlug: `rival-${engine}`, email: `rival-${engine}@first.example` };
      const race = await Promise.all([
        send(target, 'POST', `${DASHBOARD_API}/setup`, { body, headers: { origin: target.baseUrl } }),
        send(target, 'POST', `${DASHBOARD_API}/setup`, { body: rival }),
      ]);
      expect(race.map((r) => r.status).sort()).toEqual([201, 404]);
      const loser = race.find((r) => r.status === 404);
      expect(loser?.body.code).toBe('SETUP_LINK_INVALID');
      expect(loser?.setCookies).toEqual([]);
      if (race[1]?.status === 201) {
        // The rival won: the rest of the test checks its hotel and admin.
        Object.assign(body, rival);
      }
      const created = race.find((r) => r.status === 201) as (typeof race)[number];
      expect(created.status).toBe(201);
      const email = body.email.toLowerCase();
      const slug = body.hotelSlug;
      expect(created.body).toEqual({
        user: { id: expect.any(String), email, role: 'admin' },
        hotel: { slug, name: 'First Inn', timeZone: 'UTC' },
        display: false,
        csrfToken: expect.any(String),
      });
      const attrs = cookieAttributes(created.setCookies[0] ?? '');
      expect(attrs).toHaveProperty('httponly');
      expect(attrs).toHaveProperty('secure');
      expect(attrs.samesite).toBe('Strict');
      expect(attrs.path).toBe('/');
      const admin = new DashboardClient(target);
      admin.adopt(created);
      expect(admin.cookie).toBeTruthy();
      const session = await admin.get('/session');
      expect(session.status).toBe(200);
      expect(session.body).toEqual(created.body);
      // The new admin is an admin of the new hotel: the console is open.
      expect((await admin.get('/users')).body.users).toEqual([expect.objectContaining({ email, role: 'admin', deactivatedAt: null })]);
      expect(await server.database.db.selectFrom('hotels').select(['slug', 'name']).execute()).toEqual([{ slug, name: 'First Inn' }]);

      // The link is dead: GET 404, a second POST 404 (even with another slug and e-mail).
      const dead = await send(target, 'GET', `${DASHBOARD_API}/setup/${token}`);
      expect(dead.status).toBe(404);
      expect(dead.body.code).toBe('SETUP_LINK_INVALID');
      // It says why, and what to do instead; hotelExists lets the dashboard word it by code and case.
      expect(dead.body.hotelExists).toBe(true);
      expect(dead.body.message).toBe(
        'A hotel already exists, so the setup link no longer works: sign in, or ask an admin of your hotel for an account (operators: innsync user create).',
      );
      const second = await send(target, 'POST', `${DASHBOARD_API}/setup`, {
        body: { ...body, token, hotelSlug: `second-${engine}`, email: `second-${engine}@first.example` },
      });
      expect(second.status).toBe(404);
      expect(second.body.code).toBe('SETUP_LINK_INVALID');
      expect(second.setCookies).toEqual([]);
      expect(await server.database.db.selectFrom('hotels').select('slug').execute()).toHaveLength(1);
      expect(await server.database.db.selectFrom('staff_users').select('email').execute()).toEqual([{ email }]);

      // The admin logs in with the password chosen at setup.
      expect((await new DashboardClient(target).login(email)).status).toBe(200);

      // A restart on storage that has a hotel prints no link.
      await server.close();
      server = await startServer(loadConfig(env), pino({ level: 'silent' }));
      expect(server.setupUrl).toBeNull();
      const restarted: Target = { baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent };
      expect((await send(restarted, 'GET', `${DASHBOARD_API}/setup/${token}`)).status).toBe(404);
    } finally {
      await agent.close();
      await server.close();
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    }
  });
});

describe.each(testEngines())('failed logins per client IP (%s)', (engine) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  it('docs/dashboard.md Security: after 20 failed logins from one client IP (any e-mails), the next login, even a right one, is 429 RATE_LIMITED with Retry-After', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `ip-${engine}@session.example`, 'admin');
    // 21 slow password checks: on a busy machine they take tens of seconds, all in one window.
    await withinOneWindow(15 * 60_000, 60_000);
    // 20 failures, each for another e-mail: no per-e-mail limit is reached.
    for (let i = 0; i < 20; i++) {
      const res = await new DashboardClient(t).login(`stranger-${i}-${engine}@session.example`, 'wrong-password-x');
      expect(res.status, `failure ${i + 1}`).toBe(401);
      expect(res.body.code).toBe('LOGIN_FAILED');
    }
    const res = await new DashboardClient(t).login(user.email);
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ code: 'RATE_LIMITED', retryAfter: expect.any(Number) });
    expect(res.headers['retry-after']).toBe(String(res.body.retryAfter));
    expect(res.setCookies).toEqual([]);
  }, 120_000);
});

describe.each(testEngines())('first-run setup field rules (%s)', (engine) => {
  it('docs/dashboard.md JSON API POST /setup: a setup the field rules refuse (bad slug, blank hotel name, bad e-mail, short password) is 422 naming the field, creates nothing and leaves the link alive', async () => {
    const storage = await createTestStorage(engine);
    const env = { PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: storage.dataDir, ...databaseEnv(storage), LOG_LEVEL: 'silent' };
    const server = await startServer(loadConfig(env), pino({ level: 'silent' }));
    const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
    try {
      const token = /#\/setup\/(.+)$/.exec(server.setupUrl ?? '')?.[1] ?? '';
      const target: Target = { baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent };
      const good = { token, hotelSlug: `rules-${engine}`, hotelName: 'Rules Inn', email: `owner-${engine}@rules.example`, password: STAFF_PASSWORD };
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...good, hotelSlug: 'Not A Slug' }, 'hotelSlug'],
        [{ ...good, hotelSlug: '9starts-with-digit' }, 'hotelSlug'],
        // As the CLI's createHotel: the hotel name must not be empty (it is trimmed).
        [{ ...good, hotelName: '' }, 'hotelName'],
        [{ ...good, hotelName: '   ' }, 'hotelName'],
        [{ ...good, email: 'not-an-email' }, 'email'],
        [{ ...good, password: 'short' }, 'password'],
        // The form's second entry is checked with the rest, so every problem is answered at once.
        [{ ...good, passwordConfirm: `${STAFF_PASSWORD}x` }, 'passwordConfirm'],
      ];
      for (const [body, field] of cases) {
        const res = await send(target, 'POST', `${DASHBOARD_API}/setup`, { body });
        expect.soft(res.status, `${field}: ${JSON.stringify(body[field])}`).toBe(422);
        expect.soft(res.body.errors?.map((e: { field: string }) => e.field) ?? [], `${field}: ${JSON.stringify(body[field])}`).toContain(field);
        if (res.status === 201) break;
      }
      const all = await send(target, 'POST', `${DASHBOARD_API}/setup`, { body: { ...good, email: 'not-an-email', passwordConfirm: 'other' } });
      expect(all.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['email', 'passwordConfirm']);
      expect(all.body.errors.find((e: { field: string }) => e.field === 'passwordConfirm').message).toBe('passwordConfirm must repeat the password exactly.');
      expect(await server.database.db.selectFrom('hotels').select(['slug', 'name']).execute()).toEqual([]);
      expect((await send(target, 'GET', `${DASHBOARD_API}/setup/${token}`)).status).toBe(200);
    } finally {
      await agent.close();
      await server.close();
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    }
  });
});
