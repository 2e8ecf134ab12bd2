import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { addStaffUser, DashboardClient, DASHBOARD_API, send, sessionCookieOf, STAFF_PASSWORD } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { createCredential, getAssertion } from '../support/soft-authenticator.js';

// docs/dashboard.md, "Second factors" and "Passkeys": at a hotel that requires a second
// factor, an account without one signs in to enrolment; a passkey added there is that factor
// and promotes the sign-in to a new full session, as the authenticator app's confirmation
// does. Real HTTPS requests on both engines; the credentials come from the software
// authenticator (test/support/soft-authenticator.ts) whose signatures the server verifies.

describe.each(testEngines())('a passkey completes the enrolment (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    await addStaffUser(db(), t.slug, `admin-${engine}@enrol-passkey.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, `admin-${engine}@enrol-passkey.example`);
    expect((await admin.post('/hotel/second-factor', { required: true })).body).toEqual({ required: true });
  });
  afterAll(async () => {
    await admin?.post('/hotel/second-factor', { required: false });
    await t?.close();
  });

  let n = 0;
  /** A password sign-in of an account without a second factor: an enrolling session. */
  const enrollingSignIn = async (email: string, login: Record<string, unknown> = {}): Promise<DashboardClient> => {
    const client = new DashboardClient(t);
    const res = await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email, password: STAFF_PASSWORD, ...login } });
    expect([res.status, res.body.stage], res.text).toEqual([200, 'enrol']);
    client.adopt(res);
    return client;
  };

  /** A new account without a second factor, signed in with its password. */
  const enrolling = async (login: Record<string, unknown> = {}) => {
    const user = await addStaffUser(db(), t.slug, `enrol-${engine}-${++n}@enrol-passkey.example`, 'receptionist');
    return { ...user, client: await enrollingSignIn(user.email, login) };
  };

  /** The registration's options (the password entered again) answered by a new software passkey. */
  const newCredential = async (client: DashboardClient) => {
    const options = await client.post('/account/passkeys/options', { password: STAFF_PASSWORD });
    expect(options.status, options.text).toBe(200);
    return createCredential(options.body.options, t.baseUrl);
  };

  it('an enrolling sign-in adds a passkey: a new full session (new cookie and CSRF token), the old one ends, factor.added is recorded, and the passkey then signs in', async () => {
    const user = await enrolling();
    const { client } = user;
    const secondTab = await enrollingSignIn(user.email);
    const enrolCookie = client.cookie;
    const enrolCsrf = client.csrfToken;

    const { passkey, json } = await newCredential(client);
    const added = await client.post('/account/passkeys', { name: 'Desk laptop', credential: json });
    expect(added.status, added.text).toBe(201);
    expect(added.body.passkey).toMatchObject({ name: 'Desk laptop', lastUsedAt: null });
    expect(added.body.session).toMatchObject({ user: { id: user.id, email: user.email }, hotel: { slug: t.slug }, display: false });
    expect(added.body.session.stage).toBeUndefined();
    const newCookie = sessionCookieOf(added.setCookies);
    expect(newCookie).toBeDefined();
    expect(newCookie).not.toBe(enrolCookie);
    expect(added.body.session.csrfToken).not.toBe(enrolCsrf);

    client.adopt({ ...added, body: added.body.session });
    expect((await client.get('/guests')).status).toBe(200);
    expect((await client.get('/session')).body.stage).toBeUndefined();
    // The enrolling session's cookie opens nothing any more, nor does the other tab's.
    expect((await send(t, 'GET', `${DASHBOARD_API}/session`, { cookie: enrolCookie })).status).toBe(401);
    expect((await secondTab.get('/session')).status).toBe(401);
    // The old CSRF token does not sign the new session's writes.
    const stale = await client.post('/account/passkeys/options', { password: STAFF_PASSWORD }, { csrf: enrolCsrf });
    expect([stale.status, stale.body.code]).toEqual([403, 'CSRF_REJECTED']);

    const entries = await db()
      .selectFrom('security_events')
      .select(['kind', 'actor_type', 'actor_id', 'detail'])
      .where('subject_user_id', '=', user.id)
      .where('kind', 'like', 'factor%')
      .execute();
    expect(entries).toEqual([{ kind: 'factor.added', actor_type: 'staff', actor_id: user.id, detail: '{"factor":"passkey"}' }]);

    // The account now has its second factor: the password opens a sign-in waiting for it, and the passkey signs in.
    const again = await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email: user.email, password: STAFF_PASSWORD } });
    expect([again.status, again.body.stage]).toEqual([200, 'second_factor']);
    const options = await send(t, 'POST', `${DASHBOARD_API}/passkey-login/options`, { body: {} });
    const signedIn = await send(t, 'POST', `${DASHBOARD_API}/passkey-login`, { body: { credential: getAssertion(passkey, options.body.options, t.baseUrl) } });
    expect([signedIn.status, signedIn.body.stage], signedIn.text).toEqual([200, undefined]);
  });

  it('at enrolment only adding a passkey is open: the list, removing, passkeys-only and the roster stay refused (403 ENROLMENT_REQUIRED)', async () => {
    const { client } = await enrolling();
    const refused = [
      await client.get('/guests'),
      await client.get('/account/passkeys'),
      await client.post('/account/passkeys/pk_x/remove', { password: STAFF_PASSWORD }),
      await client.post('/account/passkeys-only', { passkeysOnly: true, password: STAFF_PASSWORD }),
      await client.get('/account/sessions'),
    ];
    expect(refused.map((r) => [r.status, r.body.code])).toEqual(refused.map(() => [403, 'ENROLMENT_REQUIRED']));
    // Without the session the routes are 401 as ever; the password entered again is checked at enrolment too.
    const anonymous = await send(t, 'POST', `${DASHBOARD_API}/account/passkeys/options`, { body: { password: STAFF_PASSWORD } });
    expect([anonymous.status, anonymous.body.code]).toEqual([401, 'NOT_AUTHENTICATED']);
    const wrong = await client.post('/account/passkeys/options', { password: 'not-my-password' });
    expect([wrong.status, wrong.body.code]).toEqual([403, 'PASSWORD_INCORRECT']);
    // A credential that does not verify leaves the sign-in enrolling.
    const unverified = createCredential((await client.post('/account/passkeys/options', { password: STAFF_PASSWORD })).body.options, t.baseUrl, {
      verified: false,
    });
    const bad = await client.post('/account/passkeys', { name: 'No UV', credential: unverified.json });
    expect([bad.status, bad.body.code]).toEqual([400, 'PASSKEY_INVALID']);
    expect(sessionCookieOf(bad.setCookies)).toBeUndefined();
    expect((await client.get('/session')).body.stage).toBe('enrol');
  });

  it('a front-desk display that must enrol may set up the app but not add a passkey (403 DISPLAY_READ_ONLY)', async () => {
    const { client } = await enrolling({ display: true });
    expect(client.session.display).toBe(true);
    const res = await client.post('/account/passkeys/options', { password: STAFF_PASSWORD });
    expect([res.status, res.body.code]).toEqual([403, 'DISPLAY_READ_ONLY']);
    expect((await client.post('/account/totp/start', { password: STAFF_PASSWORD })).status).toBe(200);
  });

  it('a full session that adds a passkey keeps its session: the answer carries its own CSRF token and sets no cookie', async () => {
    // The hotel's rule is off for this one: the password opens a full session.
    expect((await admin.post('/hotel/second-factor', { required: false })).status).toBe(200);
    try {
      const user = await addStaffUser(db(), t.slug, `full-${engine}@enrol-passkey.example`, 'receptionist');
      const client = await DashboardClient.loggedIn(t, user.email);
      expect(client.session.stage).toBeUndefined();
      const { json } = await newCredential(client);
      const added = await client.post('/account/passkeys', { name: 'Phone', credential: json });
      expect(added.status, added.text).toBe(201);
      expect(sessionCookieOf(added.setCookies)).toBeUndefined();
      expect(added.body.session.csrfToken).toBe(client.csrfToken);
      expect((await client.get('/guests')).status).toBe(200);
    } finally {
      expect((await admin.post('/hotel/second-factor', { required: true })).status).toBe(200);
    }
  });
});
