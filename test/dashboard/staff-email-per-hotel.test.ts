import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { newId } from '../../src/domain/ids.js';
import {
  addStaffUser,
  DashboardClient,
  DASHBOARD_API,
  fixturePasswordHash,
  hotelIdOf,
  send,
  STAFF_PASSWORD,
  withinOneWindow,
  withoutRequestId,
  type DashboardResponse,
} from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { lines, parseJsonOutput, runCli, storageEnv, type CliResult } from '../cli/cli-helpers.js';

// "Staff accounts": e-mails are unique per hotel (one person may hold accounts
// at two hotels); login takes the hotel from the e-mail's one account, or asks which hotel
// when the password opens several (docs/dashboard.md: Staff accounts and login). Through
// real HTTPS requests and the real `innsync` command (dist/: build first), both engines.

describe.each(testEngines())('staff e-mails unique per hotel, and the login that follows (%s)', (engine) => {
  let t: TestServer;
  let slugB: string;
  let slugC: string;
  let adminA: DashboardClient;
  let adminB: DashboardClient;
  let adminAEmail: string;
  const db = (): Db => t.server.database.db;
  const hotelName = (slug: string): string => (slug === t.slug ? 'Test Hotel' : `Hotel ${slug}`);

  beforeAll(async () => {
    t = await startTestServer(engine);
    slugB = `${t.slug}-b`;
    slugC = `${t.slug}-c`;
    await t.addHotel(slugB);
    await t.addHotel(slugC);
    adminAEmail = (await addStaffUser(db(), t.slug, `admin-a-${engine}@multi.example`, 'admin')).email;
    const adminBEmail = (await addStaffUser(db(), slugB, `admin-b-${engine}@multi.example`, 'admin')).email;
    adminA = await DashboardClient.loggedIn(t, adminAEmail);
    adminB = await DashboardClient.loggedIn(t, adminBEmail);
  });
  afterAll(() => t.close());

  const cli = (args: string[], input: string): Promise<CliResult> => runCli(args, { input, env: storageEnv(t.config) });
  const accountsOf = (email: string) => db().selectFrom('staff_users').select(['id', 'hotel_id', 'role']).where('email', '=', email).execute();
  const sessionsOf = async (email: string) =>
    (
      await db()
        .selectFrom('staff_sessions')
        .innerJoin('staff_users', 'staff_users.id', 'staff_sessions.user_id')
        .select('staff_sessions.id')
        .where('staff_users.email', '=', email)
        .execute()
    ).length;

  /** A user of hotel `slug` with its own password (the helper's users all share STAFF_PASSWORD). */
  async function addUser(slug: string, email: string, password: string): Promise<string> {
    const id = newId('user');
    await db()
      .insertInto('staff_users')
      .values({
        id,
        hotel_id: await hotelIdOf(db(), slug),
        email,
        role: 'receptionist',
        password_hash: await fixturePasswordHash(password),
        created_at: new Date().toISOString(),
        deactivated_at: null,
      })
      .execute();
    return id;
  }

  it('the same e-mail gets an account at three hotels (two admins on the dashboard, one `innsync user create`); a second one within a hotel is 409 EMAIL_TAKEN on the dashboard and refused by the CLI; the database holds the rule', async () => {
    const email = `pat-${engine}@multi.example`;
    const atA = await adminA.post('/users', { email: `Pat-${engine}@Multi.example`, role: 'receptionist', password: 'password-at-a-1' });
    expect(atA.status, atA.text).toBe(201);
    const atB = await adminB.post('/users', { email: email.toUpperCase(), role: 'admin', password: 'password-at-b-1' });
    expect(atB.status, atB.text).toBe(201);
    expect(atB.body.user).toEqual({ id: expect.any(String), email, role: 'admin', createdAt: expect.any(String), deactivatedAt: null });
    const atC = await cli(['user', 'create', slugC, '--email', email, '--role', 'receptionist', '--json'], 'password-at-c-1\n');
    expect(atC.stderr).toBe('');
    expect(parseJsonOutput(atC)).toEqual({ userId: expect.any(String), email, role: 'receptionist' });

    const accounts = await accountsOf(email);
    expect(accounts).toHaveLength(3);
    expect(new Set(accounts.map((a) => a.hotel_id))).toEqual(
      new Set([await hotelIdOf(db(), t.slug), await hotelIdOf(db(), slugB), await hotelIdOf(db(), slugC)]),
    );

    // Within one hotel the e-mail is still taken, any case, and the answer names no other hotel.
    for (const dup of [email, email.toUpperCase()]) {
      const again = await adminA.post('/users', { email: dup, role: 'admin', password: 'another-password-2' });
      expect(again.status, dup).toBe(409);
      expect(again.body).toMatchObject({ status: 'error', code: 'EMAIL_TAKEN', message: 'This hotel already has a user with this e-mail.' });
      expect(again.body.errors).toEqual([{ field: 'email', code: 'DUPLICATE', message: 'This hotel already has a user with this e-mail.' }]);
      for (const other of [slugB, slugC]) expect(again.text).not.toContain(other);
    }
    // Two admins of one hotel adding the same e-mail at once: one account.
    const race = await Promise.all([
      adminB.post('/users', { email: `race-${engine}@multi.example`, role: 'receptionist', password: 'race-password-1' }),
      adminB.post('/users', { email: `race-${engine}@multi.example`, role: 'admin', password: 'race-password-2' }),
    ]);
    expect(race.map((r) => r.status).sort()).toEqual([201, 409]);
    expect(await accountsOf(`race-${engine}@multi.example`)).toHaveLength(1);

    // The CLI: the hotel where the e-mail exists refuses it (one stderr line naming it), at either hotel.
    for (const slug of [slugC, t.slug]) {
      const r = await cli(['user', 'create', slug, '--email', email, '--role', 'admin', '--json'], 'yet-another-password\n');
      expect(r.code, slug).not.toBe(0);
      expect(r.stdout).toBe('');
      expect(lines(r.stderr)).toHaveLength(1);
      expect(r.stderr).toContain(email);
      expect(r.stderr).toContain(slug);
    }
    expect(await accountsOf(email)).toHaveLength(3);

    // The rule is the database's, not a check before the insert.
    await expect(
      db()
        .insertInto('staff_users')
        .values({
          id: newId('user'),
          hotel_id: await hotelIdOf(db(), slugB),
          email,
          role: 'receptionist',
          password_hash: 'x',
          created_at: new Date().toISOString(),
          deactivated_at: null,
        })
        .execute(),
    ).rejects.toThrow();
    expect(await accountsOf(email)).toHaveLength(3);

    // Three accounts, three passwords: each password logs in to its own hotel.
    for (const [password, slug, role] of [
      ['password-at-a-1', t.slug, 'receptionist'],
      ['password-at-b-1', slugB, 'admin'],
      ['password-at-c-1', slugC, 'receptionist'],
    ] as const) {
      const client = new DashboardClient(t);
      const res = await client.login(email, password);
      expect(res.status, `${slug}: ${res.text}`).toBe(200);
      expect(res.body.hotel).toEqual({ slug, name: hotelName(slug), timeZone: 'UTC' });
      expect(res.body.user.role).toBe(role);
      const s = await client.get('/session');
      expect(s.status).toBe(200);
      expect(s.body.hotel.slug).toBe(slug);
      const account = (await accountsOf(email)).find((a) => a.id === s.body.user.id);
      expect(account?.hotel_id).toBe(await hotelIdOf(db(), slug));
    }
  });

  it("an e-mail with one account logs in to that account's hotel, as before (no `hotel` needed)", async () => {
    const client = new DashboardClient(t);
    const res = await client.login(adminAEmail.toUpperCase());
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ user: { email: adminAEmail, role: 'admin' }, hotel: { slug: t.slug, name: 'Test Hotel' }, csrfToken: expect.any(String) });
    expect((await client.get('/session')).body.hotel.slug).toBe(t.slug);
  });

  it('the same e-mail and password at two hotels: 409 HOTEL_CHOICE_REQUIRED naming only those two hotels, no session; sent again with `hotel` it logs in to the chosen one', async () => {
    const email = `sam-${engine}@multi.example`;
    const [idA, idB] = [await addUser(t.slug, email, 'same-password-1'), await addUser(slugB, email, 'same-password-1')];
    await addUser(slugC, email, 'other-password-c');

    const ask = await new DashboardClient(t).login(email, 'same-password-1');
    expect(ask.status, ask.text).toBe(409);
    expect(withoutRequestId(ask.body)).toEqual({
      status: 'error',
      code: 'HOTEL_CHOICE_REQUIRED',
      message: 'This e-mail and password open accounts at more than one hotel: log in again naming one of the listed hotels (its slug as "hotel").',
      hotels: [
        { slug: t.slug, name: 'Test Hotel' },
        { slug: slugB, name: hotelName(slugB) },
      ],
    });
    // Hotel C's account has another password: it is not named.
    expect(ask.text).not.toContain(slugC);
    expect(ask.setCookies).toEqual([]);
    expect(await sessionsOf(email)).toBe(0);

    for (const [slug, id] of [
      [slugB, idB],
      [t.slug, idA],
    ] as const) {
      const client = new DashboardClient(t);
      // As the login page does: ask, then send again with the hotel chosen.
      expect((await client.login(email, 'same-password-1')).status).toBe(409);
      const chosen = await sendLogin(client, { email: email.toUpperCase(), password: 'same-password-1', hotel: slug });
      expect(chosen.status, chosen.text).toBe(200);
      expect(chosen.body).toEqual({
        user: { id, email, role: 'receptionist' },
        hotel: { slug, name: hotelName(slug), timeZone: 'UTC' },
        display: false,
        csrfToken: expect.any(String),
      });
      const s = await client.get('/session');
      expect(s.status).toBe(200);
      expect(s.body.hotel).toEqual({ slug, name: hotelName(slug), timeZone: 'UTC' });
      expect(s.body.user.id).toBe(id);
    }

    // `hotel` selects the one account checked: C with C's password logs in; C with the
    // shared password, or a hotel without this e-mail, is the usual 401.
    expect((await sendLogin(new DashboardClient(t), { email, password: 'other-password-c', hotel: slugC })).body.hotel?.slug).toBe(slugC);
    for (const [password, hotel] of [
      ['same-password-1', slugC],
      ['same-password-1', 'no-such-hotel'],
    ]) {
      const res = await sendLogin(new DashboardClient(t), { email, password, hotel });
      expect(res.status, hotel).toBe(401);
      expect(res.body.code).toBe('LOGIN_FAILED');
      expect(res.setCookies).toEqual([]);
    }
    // An empty `hotel` is a field error.
    expect((await sendLogin(new DashboardClient(t), { email, password: 'same-password-1', hotel: '' })).status).toBe(422);
  });

  it('a wrong password for an e-mail with accounts at several hotels is the same 401 LOGIN_FAILED as an unknown e-mail, naming no hotel, with no cookie', async () => {
    const email = `lee-${engine}@multi.example`;
    await addUser(t.slug, email, 'lee-password-a1');
    await addUser(slugB, email, 'lee-password-b1');
    const wrong = await new DashboardClient(t).login(email, 'not-the-password-at-all');
    const unknown = await new DashboardClient(t).login(`nobody-${engine}@multi.example`, 'not-the-password-at-all');
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.setCookies).toEqual([]);
      expect(res.body.code).toBe('LOGIN_FAILED');
      for (const hint of [t.slug, slugB, 'Test Hotel', hotelName(slugB), 'hotels']) expect(res.text).not.toContain(hint);
    }
    expect(withoutRequestId(wrong.body)).toEqual(withoutRequestId(unknown.body));
    // Naming a hotel does not change the answer either.
    const named = await sendLogin(new DashboardClient(t), { email, password: 'not-the-password-at-all', hotel: slugB });
    expect(withoutRequestId(named.body)).toEqual(withoutRequestId(unknown.body));
    expect(await sessionsOf(email)).toBe(0);
  });

  it('a deactivated account is not a choice: the same password at an active account of another hotel logs straight in there', async () => {
    const email = `kim-${engine}@multi.example`;
    const atA = await addUser(t.slug, email, 'kim-password-1');
    await addUser(slugB, email, 'kim-password-1');
    expect((await adminA.post(`/users/${atA}/deactivate`)).status).toBe(200);
    const res = await new DashboardClient(t).login(email, 'kim-password-1');
    expect(res.status, res.text).toBe(200);
    expect(res.body.hotel.slug).toBe(slugB);
    // Naming the deactivated account's hotel is the usual 401.
    expect((await sendLogin(new DashboardClient(t), { email, password: 'kim-password-1', hotel: t.slug })).status).toBe(401);
  });

  it('docs/dashboard.md Security: the failed-login limit is unchanged for an e-mail of several accounts (5 failures, then 429 even with the right password and hotel); answers asking for the hotel are not failures', async () => {
    const email = `max-${engine}@multi.example`;
    await addStaffUser(db(), t.slug, email, 'receptionist');
    await addStaffUser(db(), slugB, email, 'receptionist');
    // 12 slow password checks: on a busy machine they take tens of seconds, all in one window.
    await withinOneWindow(15 * 60_000, 60_000);
    // Six right passwords in a row: six questions, none counted as a failure.
    for (let i = 0; i < 6; i++) expect((await new DashboardClient(t).login(email)).status, `question ${i + 1}`).toBe(409);
    for (let i = 0; i < 5; i++) expect((await new DashboardClient(t).login(email, `wrong-password-${i}`)).status, `failure ${i + 1}`).toBe(401);
    const locked = await sendLogin(new DashboardClient(t), { email, password: STAFF_PASSWORD, hotel: slugB });
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('RATE_LIMITED');
    expect((await new DashboardClient(t).login(email)).status).toBe(429);
    expect(await sessionsOf(email)).toBe(0);
  }, 120_000);
});

// The answer time of a login (it must not tell how many accounts an e-mail has) is measured
// by `npm run bench:login`, not asserted here: tests never assert on wall-clock time.

/** POST /login with any body (the client's login() sends e-mail and password only). */
async function sendLogin(client: DashboardClient, body: Record<string, unknown>): Promise<DashboardResponse> {
  const res = await send(client.target, 'POST', `${DASHBOARD_API}/login`, { body });
  client.adopt(res);
  return res;
}
