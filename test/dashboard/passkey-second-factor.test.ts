import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { addStaffUser, DashboardClient, DASHBOARD_API, send, STAFF_PASSWORD, type DashboardResponse } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { createCredential, getAssertion, type SoftPasskey } from '../support/soft-authenticator.js';

// docs/dashboard.md, "Second factors" and "Passkeys": a passkey is a second factor. An
// account with one is asked for it after the password, the hotel's rule counts it, and an
// admin's reset removes it with the authenticator app.

describe.each(testEngines())('a passkey as the second factor (%s)', (engine) => {
  let t: TestServer;
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  let n = 0;
  const newUser = async (role: 'admin' | 'receptionist' = 'receptionist') => {
    const user = await addStaffUser(db(), t.slug, `pk2f-${engine}-${++n}@passkeys.example`, role);
    return { ...user, client: await DashboardClient.loggedIn(t, user.email) };
  };

  const withPasskey = async (client: DashboardClient): Promise<SoftPasskey> => {
    const options = await client.post('/account/passkeys/options', { password: STAFF_PASSWORD });
    expect(options.status, options.text).toBe(200);
    const { passkey, json } = createCredential(options.body.options, t.baseUrl);
    const added = await client.post('/account/passkeys', { name: 'Laptop', credential: json });
    expect(added.status, added.text).toBe(201);
    return passkey;
  };

  const passkeySignIn = async (passkey: SoftPasskey): Promise<DashboardResponse> => {
    const options = await send(t, 'POST', `${DASHBOARD_API}/passkey-login/options`, { body: {} });
    return send(t, 'POST', `${DASHBOARD_API}/passkey-login`, { body: { credential: getAssertion(passkey, options.body.options, t.baseUrl) } });
  };

  it('the password of an account with a passkey opens only a sign-in waiting for its second factor; the passkey completes it', async () => {
    const user = await newUser();
    const passkey = await withPasskey(user.client);
    const waiting = new DashboardClient(t);
    const res = await waiting.login(user.email);
    expect([res.status, res.body.stage]).toEqual([200, 'second_factor']);
    expect((await waiting.get('/guests')).body.code).toBe('SECOND_FACTOR_REQUIRED');
    const full = await passkeySignIn(passkey);
    expect(full.status, full.text).toBe(200);
    expect(full.body.stage).toBeUndefined();
  });

  it("the hotel's rule counts a passkey: its account is not sent to enrolment; an admin's reset removes passkeys and passkeys-only, and the password opens the account again", async () => {
    const admin = await newUser('admin');
    const user = await newUser();
    const passkey = await withPasskey(user.client);
    const only = await user.client.post('/account/passkeys-only', { passkeysOnly: true, password: STAFF_PASSWORD });
    expect(only.status, only.text).toBe(200);
    expect((await admin.client.post('/hotel/second-factor', { required: true })).body).toEqual({ required: true });
    try {
      expect((await admin.client.get('/hotel/second-factor')).body.usersWithFactor).toContain(user.id);
      // Passkeys only: the password opens nothing, the passkey everything.
      expect((await new DashboardClient(t).login(user.email)).status).toBe(401);
      expect((await passkeySignIn(passkey)).status).toBe(200);

      const reset = await admin.client.post(`/users/${user.id}/reset-factors`);
      expect(reset.status, reset.text).toBe(200);
      expect(await db().selectFrom('staff_passkeys').select('id').where('user_id', '=', user.id).execute()).toEqual([]);
      expect((await passkeySignIn(passkey)).body.code).toBe('PASSKEY_INVALID');
      // The password opens the account again, to enrol a factor first (the hotel requires one).
      const again = await new DashboardClient(t).login(user.email);
      expect([again.status, again.body.stage]).toEqual([200, 'enrol']);
      const entry = await db()
        .selectFrom('security_events')
        .select(['kind', 'actor_type', 'detail'])
        .where('subject_user_id', '=', user.id)
        .where('kind', '=', 'factors.reset')
        .execute();
      expect(entry).toEqual([{ kind: 'factors.reset', actor_type: 'staff', detail: '{"removed":true}' }]);
    } finally {
      await admin.client.post('/hotel/second-factor', { required: false });
    }
  });
});
