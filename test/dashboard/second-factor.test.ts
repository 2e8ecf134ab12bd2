import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISPLAY_COOKIE } from '../../src/dashboard/session.js';
import type { Db } from '../../src/db/database.js';
import {
  addStaffUser,
  cookieAttributes,
  DashboardClient,
  DASHBOARD_API,
  send,
  SESSION_COOKIE,
  STAFF_PASSWORD,
  type DashboardResponse,
} from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Second factors": an authenticator app (TOTP) and recovery codes for
// staff sign-in, the hotel's rule that requires one, an admin's reset, and paired front-desk
// displays, through real HTTPS requests on both engines. The codes are computed here from
// the secret the enrolment shows, as the user's app computes them.

/** The authenticator's code for the time step `steps` away from now (0: the current one). */
const codeAt = (secret: string, steps = 0): Promise<string> => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

/** A six-digit code that is none of the codes accepted now (the steps before, now and after). */
async function wrongCode(secret: string): Promise<string> {
  const accepted = new Set(await Promise.all([-1, 0, 1].map((s) => codeAt(secret, s))));
  for (let n = 0; ; n++) {
    const code = String(n).padStart(6, '0');
    if (!accepted.has(code)) return code;
  }
}

/** The value a Set-Cookie list sets for `name`, or undefined. */
function cookieOf(res: DashboardResponse, name: string): { value: string; line: string } | undefined {
  const line = res.setCookies.find((l) => l.startsWith(`${name}=`));
  return line === undefined ? undefined : { value: line.slice(name.length + 1).split(';')[0] ?? '', line };
}

describe.each(testEngines())('second factors for staff sign-in (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    await addStaffUser(db(), t.slug, 'admin@factors.example', 'admin');
    admin = await DashboardClient.loggedIn(t, 'admin@factors.example');
  });
  afterAll(() => t.close());

  const securityKinds = async (userId: string): Promise<string[]> =>
    (await db().selectFrom('security_events').select('kind').where('subject_user_id', '=', userId).orderBy('created_at').orderBy('id').execute()).map(
      (r) => r.kind,
    );

  /** Sets up an authenticator for a signed-in client: its secret and recovery codes. */
  async function enrol(client: DashboardClient): Promise<{ secret: string; recoveryCodes: string[]; confirmed: DashboardResponse }> {
    const started = await client.post('/account/totp/start', { password: STAFF_PASSWORD });
    expect(started.status, started.text).toBe(200);
    const secret = started.body.secret as string;
    const confirmed = await client.post('/account/totp/confirm', { code: await codeAt(secret) });
    expect(confirmed.status, confirmed.text).toBe(200);
    client.adopt({ ...confirmed, body: confirmed.body.session });
    return { secret, recoveryCodes: confirmed.body.recoveryCodes, confirmed };
  }

  /** A password sign-in, as the login page sends it. */
  async function signIn(email: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<DashboardClient> {
    const client = new DashboardClient(t);
    const res = await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email, password: STAFF_PASSWORD, ...extra }, headers });
    expect(res.status, res.text).toBe(200);
    client.adopt(res);
    return client;
  }

  it('enrolment: the password again, a secret with its QR code, a first code confirms it and gives ten recovery codes; the other sessions end', async () => {
    const user = await addStaffUser(db(), t.slug, 'enrol@factors.example', 'receptionist');
    const client = await DashboardClient.loggedIn(t, user.email);
    const other = await DashboardClient.loggedIn(t, user.email);
    const wrongPassword = await client.post('/account/totp/start', { password: 'not-my-password' });
    expect([wrongPassword.status, wrongPassword.body.code]).toEqual([403, 'PASSWORD_INCORRECT']);
    const started = await client.post('/account/totp/start', { password: STAFF_PASSWORD });
    expect(started.status).toBe(200);
    expect(started.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(started.body.uri).toContain(`secret=${started.body.secret}`);
    expect(Buffer.from(String(started.body.qr).replace('data:image/svg+xml;base64,', ''), 'base64').toString()).toContain('<svg');
    const wrong = await client.post('/account/totp/confirm', { code: await wrongCode(started.body.secret) });
    expect([wrong.status, wrong.body.code]).toEqual([401, 'SECOND_FACTOR_INVALID']);
    expect((await client.get('/account/factors')).body).toEqual({ totp: false, recoveryCodesLeft: 0, required: false });

    const confirmed = await client.post('/account/totp/confirm', { code: await codeAt(started.body.secret) });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect(confirmed.body.recoveryCodes).toHaveLength(10);
    expect(new Set(confirmed.body.recoveryCodes).size).toBe(10);
    expect((await client.get('/account/factors')).body).toEqual({ totp: true, recoveryCodesLeft: 10, required: false });
    // This session goes on; the other one ended.
    expect((await client.get('/guests')).status).toBe(200);
    expect([(await other.get('/guests')).status, (await other.get('/session')).status]).toEqual([401, 401]);
    expect(await securityKinds(user.id)).toEqual(['factor.added']);
    // The recovery codes are kept as hashes only.
    const stored = await db().selectFrom('staff_recovery_codes').select('code_hash').where('user_id', '=', user.id).execute();
    expect(stored.map((r) => r.code_hash)).not.toContain(confirmed.body.recoveryCodes[0]);
    const again = await client.post('/account/totp/start', { password: STAFF_PASSWORD });
    expect([again.status, again.body.code]).toEqual([409, 'FACTOR_STATE_CONFLICT']);
  });

  it('sign-in: the password gives a session that can only take the second factor; a right code gives a new full session, a wrong or reused one is refused', async () => {
    const user = await addStaffUser(db(), t.slug, 'signin@factors.example', 'receptionist');
    const { secret } = await enrol(await DashboardClient.loggedIn(t, user.email));

    const pending = await signIn(user.email);
    expect(pending.session).toMatchObject({ stage: 'second_factor', user: { email: user.email } });
    const refused = await pending.get('/guests');
    expect([refused.status, refused.body.code]).toEqual([403, 'SECOND_FACTOR_REQUIRED']);
    expect((await pending.get('/session')).body.stage).toBe('second_factor');
    const wrong = await pending.post('/login/second-factor', { code: await wrongCode(secret) });
    expect([wrong.status, wrong.body.code]).toEqual([401, 'SECOND_FACTOR_INVALID']);

    // The enrolment took the current step's code: the next step's is the next that works.
    const code = await codeAt(secret, 1);
    const pendingCookie = pending.cookie;
    const ok = await pending.post('/login/second-factor', { code });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.stage).toBeUndefined();
    pending.adopt(ok);
    expect(pending.cookie).not.toBe(pendingCookie);
    expect((await pending.get('/guests')).status).toBe(200);
    // The pending session's cookie no longer works.
    expect((await send(t, 'GET', `${DASHBOARD_API}/session`, { cookie: pendingCookie })).status).toBe(401);

    // The same code (its time step) works once, and an earlier step's not at all.
    const second = await signIn(user.email);
    for (const again of [code, await codeAt(secret)]) {
      const reused = await second.post('/login/second-factor', { code: again });
      expect([reused.status, reused.body.code]).toEqual([401, 'SECOND_FACTOR_INVALID']);
    }
  });

  it('recovery codes: each works once in place of a code (typed in any case, with or without the dash), with a security entry', async () => {
    const user = await addStaffUser(db(), t.slug, 'recovery@factors.example', 'receptionist');
    const enrolled = await DashboardClient.loggedIn(t, user.email);
    const { recoveryCodes } = await enrol(enrolled);
    const [first = ''] = recoveryCodes;
    const pending = await signIn(user.email);
    const ok = await pending.post('/login/second-factor', { code: first.replace('-', '').toLowerCase() });
    expect(ok.status, ok.text).toBe(200);
    const again = await signIn(user.email);
    const reused = await again.post('/login/second-factor', { code: first });
    expect([reused.status, reused.body.code]).toEqual([401, 'SECOND_FACTOR_INVALID']);
    // The used code's second try is a failed sign-in of the account, at its second step.
    expect(await securityKinds(user.id)).toEqual(['factor.added', 'recovery_code.used', 'login.failed']);

    // New codes (the password again): the old ones stop working; other sessions end.
    const renewed = await enrolled.post('/account/recovery-codes', { password: STAFF_PASSWORD });
    expect(renewed.status, renewed.text).toBe(200);
    expect(renewed.body.recoveryCodes).toHaveLength(10);
    expect((await again.get('/session')).status).toBe(401);
    const fresh = await signIn(user.email);
    const old = await fresh.post('/login/second-factor', { code: recoveryCodes[1] });
    expect([old.status, old.body.code]).toEqual([401, 'SECOND_FACTOR_INVALID']);
    expect((await fresh.post('/login/second-factor', { code: renewed.body.recoveryCodes[0] })).status).toBe(200);
  });

  it('wrong codes count against the failed-login limits: the sixth try from one address is 429', async () => {
    const user = await addStaffUser(db(), t.slug, 'guesser@factors.example', 'receptionist');
    const { secret } = await enrol(await DashboardClient.loggedIn(t, user.email));
    const pending = await signIn(user.email);
    const code = await wrongCode(secret);
    for (let i = 0; i < 5; i++) expect((await pending.post('/login/second-factor', { code })).status).toBe(401);
    const held = await pending.post('/login/second-factor', { code: await codeAt(secret) });
    expect([held.status, held.body.code]).toEqual([429, 'RATE_LIMITED']);
  });

  it('removing the authenticator needs the password, ends the other sessions, and sign-in is a password again', async () => {
    const user = await addStaffUser(db(), t.slug, 'remove@factors.example', 'receptionist');
    const client = await DashboardClient.loggedIn(t, user.email);
    const { secret } = await enrol(client);
    const other = await signIn(user.email);
    expect((await other.post('/login/second-factor', { code: await codeAt(secret, 1) })).status).toBe(200);
    const wrong = await client.post('/account/totp/remove', { password: 'not-my-password' });
    expect(wrong.body.code).toBe('PASSWORD_INCORRECT');
    expect((await client.post('/account/totp/remove', { password: STAFF_PASSWORD })).body).toEqual({ removed: true });
    expect((await other.get('/guests')).status).toBe(401);
    expect((await client.get('/guests')).status).toBe(200);
    expect((await signIn(user.email)).session.stage).toBeUndefined();
    expect(await securityKinds(user.id)).toEqual(['factor.added', 'factor.removed']);
  });

  it("the hotel's rule: an account without a factor signs in to enrolment only, and its session becomes full once enrolled", async () => {
    const rule = await admin.post('/hotel/second-factor', { required: true });
    expect(rule.body).toEqual({ required: true });
    try {
      const user = await addStaffUser(db(), t.slug, 'required@factors.example', 'receptionist');
      const client = await signIn(user.email);
      expect(client.session.stage).toBe('enrol');
      const refused = await client.get('/guests');
      expect([refused.status, refused.body.code]).toEqual([403, 'ENROLMENT_REQUIRED']);
      expect((await client.get('/account/factors')).body).toEqual({ totp: false, recoveryCodesLeft: 0, required: true });
      const { confirmed } = await enrol(client);
      expect(confirmed.body.session.stage).toBeUndefined();
      expect((await client.get('/guests')).status).toBe(200);
      const hotelId = (await db().selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;
      const kinds = await db().selectFrom('security_events').select('kind').where('hotel_id', '=', hotelId).where('kind', 'like', 'mfa.%').execute();
      expect(kinds.map((k) => k.kind)).toEqual(['mfa.required']);
    } finally {
      expect((await admin.post('/hotel/second-factor', { required: false })).body).toEqual({ required: false });
    }
  });

  it("an admin resets a user's factors: audited, the user's sessions end, the next sign-in is a password; receptionists may not", async () => {
    const user = await addStaffUser(db(), t.slug, 'lost-phone@factors.example', 'receptionist');
    const client = await DashboardClient.loggedIn(t, user.email);
    await enrol(client);
    expect((await admin.get('/hotel/second-factor')).body.usersWithFactor).toContain(user.id);
    const forbidden = await client.post(`/users/${user.id}/reset-factors`);
    expect([forbidden.status, forbidden.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await admin.post('/users/user_nosuchuser000000/reset-factors')).status).toBe(404);
    const reset = await admin.post(`/users/${user.id}/reset-factors`);
    expect(reset.body).toEqual({ userId: user.id, reset: true });
    expect((await client.get('/guests')).status).toBe(401);
    expect((await admin.get('/guests')).status).toBe(200);
    expect((await admin.get('/hotel/second-factor')).body.usersWithFactor).not.toContain(user.id);
    expect((await signIn(user.email)).session.stage).toBeUndefined();
    expect(await securityKinds(user.id)).toEqual(['factor.added', 'factors.reset']);
  });

  it("display pairing: a display signed in once with an admin's code holds a paired-device cookie and skips the factor; an unpaired display needs it", async () => {
    const user = await addStaffUser(db(), t.slug, 'desk-screen@factors.example', 'receptionist');
    const { secret } = await enrol(await DashboardClient.loggedIn(t, user.email));

    const unpaired = await signIn(user.email, { display: true });
    expect(unpaired.session).toMatchObject({ display: true, stage: 'second_factor' });

    const made = await admin.post('/displays/pairing-code');
    expect(made.status).toBe(201);
    expect(made.body.code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    const pairing = await send(t, 'POST', `${DASHBOARD_API}/login`, {
      body: { email: user.email, password: STAFF_PASSWORD, display: true, pairingCode: made.body.code },
    });
    expect(pairing.status, pairing.text).toBe(200);
    expect(pairing.body.stage).toBeUndefined();
    expect(pairing.body.display).toBe(true);
    const device = cookieOf(pairing, DISPLAY_COOKIE);
    expect(device).toBeDefined();
    const attrs = cookieAttributes(device?.line ?? '');
    expect([attrs.path, attrs.samesite, 'httponly' in attrs, 'secure' in attrs]).toEqual(['/', 'Strict', true, true]);
    expect(await securityKinds(user.id)).toEqual(['factor.added', 'display.paired']);

    // Later display sign-ins on that device skip the factor; a person's sign-in there does not.
    const deviceCookie = `${DISPLAY_COOKIE}=${device?.value ?? ''}`;
    const later = await signIn(user.email, { display: true }, { cookie: deviceCookie });
    expect(later.session.stage).toBeUndefined();
    expect((await send(t, 'GET', `${DASHBOARD_API}/guests`, { headers: { cookie: `${SESSION_COOKIE}=${later.cookie ?? ''}` } })).status).toBe(200);
    expect((await signIn(user.email, {}, { cookie: deviceCookie })).session.stage).toBe('second_factor');
    // A code works once; a made-up device token is no pairing.
    const reused = await send(t, 'POST', `${DASHBOARD_API}/login`, {
      body: { email: user.email, password: STAFF_PASSWORD, display: true, pairingCode: made.body.code },
    });
    expect([reused.status, reused.body.code]).toEqual([401, 'PAIRING_CODE_INVALID']);
    expect((await signIn(user.email, { display: true }, { cookie: `${DISPLAY_COOKIE}=made-up` })).session.stage).toBe('second_factor');
    // The unpaired display still gets in with its code.
    expect((await unpaired.post('/login/second-factor', { code: await codeAt(secret, 1) })).status).toBe(200);
  });
});
