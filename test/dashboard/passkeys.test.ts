import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { createHotel } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { userHasPasskey } from '../../src/staff/passkeys.js';
import { addStaffUser, DashboardClient, DASHBOARD_API, send, STAFF_PASSWORD, type DashboardResponse } from '../support/dashboard-client.js';
import { createTestStorage, databaseEnv, startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { createCredential, getAssertion, type SoftPasskey } from '../support/soft-authenticator.js';

// docs/dashboard.md, "Passkeys": registration and sign-in through real HTTPS requests on
// both engines, answered by a software authenticator (test/support/soft-authenticator.ts)
// whose signatures the server verifies. The browser's side: test/browser/passkeys.test.ts.

describe.each(testEngines())('passkeys (%s)', (engine) => {
  let t: TestServer;
  const db = (): Db => t.server.database.db;
  const origin = (): string => t.baseUrl;
  const hotelIdOf = async (): Promise<string> => (await db().selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;

  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  let n = 0;
  const newUser = async (): Promise<{ id: string; email: string; client: DashboardClient }> => {
    const user = await addStaffUser(db(), t.slug, `pk-${engine}-${++n}@passkeys.example`, 'receptionist');
    return { ...user, client: await DashboardClient.loggedIn(t, user.email) };
  };

  /** Registration's options after the password entered again. */
  const registerOptions = async (client: DashboardClient) => {
    const res = await client.post('/account/passkeys/options', { password: STAFF_PASSWORD });
    expect(res.status, res.text).toBe(200);
    return res.body.options;
  };

  const register = async (client: DashboardClient, name = 'Laptop'): Promise<{ passkey: SoftPasskey; res: DashboardResponse }> => {
    const { passkey, json } = createCredential(await registerOptions(client), origin());
    const res = await client.post('/account/passkeys', { name, credential: json });
    return { passkey, res };
  };

  const signInOptions = async () => {
    const res = await send(t, 'POST', `${DASHBOARD_API}/passkey-login/options`, { body: {} });
    expect(res.status, res.text).toBe(200);
    return res.body.options;
  };

  const signIn = (credential: unknown): Promise<DashboardResponse> => send(t, 'POST', `${DASHBOARD_API}/passkey-login`, { body: { credential } });

  it('a passkey registered on My account (password entered again) signs in without e-mail or password: a full session of its user and hotel', async () => {
    const { id, email, client } = await newUser();
    const options = await registerOptions(client);
    // A discoverable credential with user verification, for the host the dashboard was asked for.
    expect(options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    expect(options.rp.id).toBe(new URL(t.baseUrl).hostname);
    expect(Buffer.from(options.user.id, 'base64url').toString()).toBe(id);
    const { passkey, json } = createCredential(options, origin());
    const added = await client.post('/account/passkeys', { name: ' Laptop ', credential: json });
    expect(added.status, added.text).toBe(201);
    expect(added.body.passkey).toEqual({ id: expect.stringMatching(/^pk_/), name: 'Laptop', createdAt: expect.any(String), lastUsedAt: null });
    expect(await userHasPasskey(db(), await hotelIdOf(), id)).toBe(true);
    // Only the public key is stored.
    const row = await db().selectFrom('staff_passkeys').selectAll().where('user_id', '=', id).executeTakeFirstOrThrow();
    expect(row.credential_id).toBe(json.id);

    const res = await signIn(getAssertion(passkey, await signInOptions(), origin()));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ user: { id, email, role: 'receptionist' }, hotel: { slug: t.slug }, display: false });
    const fresh = new DashboardClient(t);
    fresh.adopt(res);
    const list = await fresh.get('/account/passkeys');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ passkeysOnly: false, signedInWithPasskey: true, passkeys: [{ name: 'Laptop', lastUsedAt: expect.any(String) }] });
    expect((await client.get('/account/passkeys')).body.signedInWithPasskey).toBe(false);
  });

  it('the page’s headers leave WebAuthn to this origin: no Permissions-Policy that withholds publickey-credentials-create or -get', async () => {
    const page = await send(t, 'GET', '/dashboard/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    const policy = page.headers['permissions-policy'] ?? '';
    for (const feature of ['publickey-credentials-create', 'publickey-credentials-get']) expect(policy).not.toMatch(new RegExp(`${feature}=\\((?!self)`));
  });

  it('a challenge is single use: the same sign-in answered again, or a registration answered twice, is PASSKEY_CHALLENGE_EXPIRED', async () => {
    const { client } = await newUser();
    const options = await registerOptions(client);
    const first = createCredential(options, origin());
    expect((await client.post('/account/passkeys', { name: 'A', credential: first.json })).status).toBe(201);
    const again = await client.post('/account/passkeys', { name: 'B', credential: createCredential(options, origin()).json });
    expect([again.status, again.body.code]).toEqual([400, 'PASSKEY_CHALLENGE_EXPIRED']);

    const assertion = getAssertion(first.passkey, await signInOptions(), origin());
    expect((await signIn(assertion)).status).toBe(200);
    const replay = await signIn(assertion);
    expect([replay.status, replay.body.code]).toEqual([400, 'PASSKEY_CHALLENGE_EXPIRED']);
    expect(replay.setCookies).toEqual([]);
  });

  it('a challenge older than 5 minutes is PASSKEY_CHALLENGE_EXPIRED; one of a registration is not a sign-in', async () => {
    const { client } = await newUser();
    const { passkey } = await register(client);
    const options = await signInOptions();
    await db()
      .updateTable('staff_passkey_challenges')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('kind', '=', 'login')
      .execute();
    const late = await signIn(getAssertion(passkey, options, origin()));
    expect([late.status, late.body.code]).toEqual([400, 'PASSKEY_CHALLENGE_EXPIRED']);
    // A registration's challenge answered as a sign-in.
    const wrongKind = await signIn(getAssertion(passkey, { ...(await registerOptions(client)), rpId: new URL(t.baseUrl).hostname }, origin()));
    expect([wrongKind.status, wrongKind.body.code]).toEqual([400, 'PASSKEY_CHALLENGE_EXPIRED']);
  });

  it('an unknown credential, a forged signature, another origin or no user verification is PASSKEY_INVALID, and starts no session', async () => {
    const { client } = await newUser();
    const { passkey } = await register(client);
    const stranger = createCredential(await registerOptions(client), origin()).passkey; // never sent: unknown
    const forged = { ...passkey, privateKey: stranger.privateKey };
    const cases = [
      getAssertion(stranger, await signInOptions(), origin()),
      getAssertion(forged, await signInOptions(), origin()),
      getAssertion(passkey, await signInOptions(), 'https://evil.example'),
      getAssertion(passkey, await signInOptions(), origin(), { verified: false }),
    ];
    for (const credential of cases) {
      const res = await signIn(credential);
      expect([res.status, res.body.code], res.text).toEqual([400, 'PASSKEY_INVALID']);
      expect(res.setCookies).toEqual([]);
    }
    // A registration without user verification is refused too.
    const unverified = createCredential(await registerOptions(client), origin(), { verified: false });
    const res = await client.post('/account/passkeys', { name: 'No UV', credential: unverified.json });
    expect([res.status, res.body.code]).toEqual([400, 'PASSKEY_INVALID']);
  });

  it('the sign-in routes refuse another origin (CSRF_REJECTED), as login does; a passkey may start a front-desk display', async () => {
    for (const route of ['/passkey-login/options', '/passkey-login']) {
      const res = await send(t, 'POST', `${DASHBOARD_API}${route}`, { body: {}, headers: { origin: 'https://evil.example' } });
      expect([res.status, res.body.code]).toEqual([403, 'CSRF_REJECTED']);
    }
    const { client } = await newUser();
    const { passkey } = await register(client);
    const res = await send(t, 'POST', `${DASHBOARD_API}/passkey-login`, {
      body: { credential: getAssertion(passkey, await signInOptions(), origin()), display: true },
    });
    expect([res.status, res.body.display]).toEqual([200, true]);
    const display = new DashboardClient(t);
    display.adopt(res);
    expect((await display.get('/account/passkeys')).body.code).toBe('DISPLAY_READ_ONLY');
  });

  it('a deactivated user’s passkey signs in no more (PASSKEY_INVALID)', async () => {
    const { id, client } = await newUser();
    const { passkey } = await register(client);
    await db().updateTable('staff_users').set({ deactivated_at: new Date().toISOString() }).where('id', '=', id).execute();
    const res = await signIn(getAssertion(passkey, await signInOptions(), origin()));
    expect([res.status, res.body.code]).toEqual([400, 'PASSKEY_INVALID']);
  });

  it('My account routes need a session (401) and the CSRF token; the password entered again must be right (403 PASSWORD_INCORRECT)', async () => {
    for (const [method, path] of [
      ['GET', '/account/passkeys'],
      ['POST', '/account/passkeys/options'],
      ['POST', '/account/passkeys'],
      ['POST', '/account/passkeys/pk_x/remove'],
      ['POST', '/account/passkeys-only'],
    ] as const) {
      const res = await send(t, method, `${DASHBOARD_API}${path}`, method === 'POST' ? { body: { password: STAFF_PASSWORD } } : {});
      expect([res.status, res.body.code]).toEqual([401, 'NOT_AUTHENTICATED']);
    }
    const { client } = await newUser();
    const noCsrf = await client.post('/account/passkeys/options', { password: STAFF_PASSWORD }, { csrf: null });
    expect([noCsrf.status, noCsrf.body.code]).toEqual([403, 'CSRF_REJECTED']);
    const wrong = await client.post('/account/passkeys/options', { password: 'not-my-password' });
    expect([wrong.status, wrong.body.code]).toEqual([403, 'PASSWORD_INCORRECT']);
  });

  it('the password entered again is counted by the failed-login limits of the account: the sixth wrong one in a row is 429 RATE_LIMITED', async () => {
    const { client } = await newUser();
    for (let i = 0; i < 5; i++) expect((await client.post('/account/passkeys/options', { password: `wrong-${i}-password` })).status).toBe(403);
    const held = await client.post('/account/passkeys/options', { password: STAFF_PASSWORD });
    expect([held.status, held.body.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(held.headers['retry-after'])).toBeGreaterThan(0);
  });

  it('adding or removing a passkey ends the user’s other sessions (not this one) and records factor.added / factor.removed', async () => {
    const { id, email, client } = await newUser();
    const other = await DashboardClient.loggedIn(t, email);
    const { res } = await register(client);
    expect(res.status).toBe(201);
    expect((await other.get('/session')).status).toBe(401);
    expect((await client.get('/session')).status).toBe(200);

    const third = await DashboardClient.loggedIn(t, email);
    const removed = await client.post(`/account/passkeys/${res.body.passkey.id}/remove`, { password: STAFF_PASSWORD });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body).toEqual({ id: res.body.passkey.id, removed: true });
    expect((await third.get('/session')).status).toBe(401);
    expect(await userHasPasskey(db(), await hotelIdOf(), id)).toBe(false);
    const events = await db()
      .selectFrom('security_events')
      .select(['kind', 'detail', 'actor_id'])
      .where('subject_user_id', '=', id)
      .orderBy('created_at')
      .execute();
    expect(events).toEqual([
      { kind: 'factor.added', detail: JSON.stringify({ factor: 'passkey' }), actor_id: id },
      { kind: 'factor.removed', detail: JSON.stringify({ factor: 'passkey' }), actor_id: id },
    ]);
    const gone = await client.post(`/account/passkeys/${res.body.passkey.id}/remove`, { password: STAFF_PASSWORD });
    expect([gone.status, gone.body.code]).toEqual([404, 'RECORD_NOT_FOUND']);
  });

  it('passkeys only: the password then opens nothing (LOGIN_FAILED, as a wrong one); the last passkey cannot be removed; only a passkey session turns it off', async () => {
    const { email, client } = await newUser();
    const none = await client.post('/account/passkeys-only', { passkeysOnly: true, password: STAFF_PASSWORD });
    expect([none.status, none.body.code]).toEqual([409, 'PASSKEY_REQUIRED']);
    const { passkey, res } = await register(client);
    const on = await client.post('/account/passkeys-only', { passkeysOnly: true, password: STAFF_PASSWORD });
    expect([on.status, on.body]).toEqual([200, { passkeysOnly: true }]);

    const refused = await new DashboardClient(t).login(email);
    const wrong = await new DashboardClient(t).login(email, 'a-wrong-password');
    expect([refused.status, refused.body.code, refused.body.message]).toEqual([401, 'LOGIN_FAILED', wrong.body.message]);

    const last = await client.post(`/account/passkeys/${res.body.passkey.id}/remove`, { password: STAFF_PASSWORD });
    expect([last.status, last.body.code]).toEqual([409, 'LAST_PASSKEY']);
    const offByPassword = await client.post('/account/passkeys-only', { passkeysOnly: false });
    expect([offByPassword.status, offByPassword.body.code]).toEqual([403, 'PASSKEY_SESSION_REQUIRED']);

    const signedIn = await signIn(getAssertion(passkey, await signInOptions(), origin()));
    const viaPasskey = new DashboardClient(t);
    viaPasskey.adopt(signedIn);
    const off = await viaPasskey.post('/account/passkeys-only', { passkeysOnly: false });
    expect([off.status, off.body]).toEqual([200, { passkeysOnly: false }]);
    expect((await new DashboardClient(t).login(email)).status).toBe(200);
  });
});

describe.runIf(testEngines().includes('postgres'))('passkeys on two instances sharing one PostgreSQL', () => {
  const servers: RunningServer[] = [];
  const dirs: string[] = [];
  const agents: Agent[] = [];
  // Both instances behind one name (no port), as behind a load balancer: the relying party is the Host.
  const HOST = 'localhost';
  const ORIGIN = `https://${HOST}`;

  beforeAll(async () => {
    const storage = await createTestStorage('postgres');
    dirs.push(storage.dataDir);
    for (let i = 0; i < 2; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-passkeys-'));
      dirs.push(dataDir);
      const config = loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: dataDir, ...databaseEnv(storage), LOG_LEVEL: 'silent' });
      servers.push(await startServer(config, pino({ level: 'silent' })));
      agents.push(new Agent({ connect: { ca: fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } }));
    }
  });
  afterAll(async () => {
    for (const a of agents) await a.close();
    for (const s of servers) await s.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a challenge issued by one instance is answered at the other, once: the answer again at the first is PASSKEY_CHALLENGE_EXPIRED', async () => {
    const [a, b] = servers.map((s, i) => ({ baseUrl: `https://127.0.0.1:${s.httpsPort}`, agent: agents[i] as Agent }));
    if (!a || !b || !servers[0]) throw new Error('two servers expected');
    await createHotel(servers[0].database.db, 'two-passkeys', 'Two Passkeys Hotel');
    const user = await addStaffUser(servers[0].database.db, 'two-passkeys', 'two@passkeys.example', 'admin');
    const headers = { host: HOST };
    const onA = new DashboardClient(a);
    onA.adopt(await send(a, 'POST', `${DASHBOARD_API}/login`, { body: { email: user.email, password: STAFF_PASSWORD }, headers }));
    // The same session (the cookie) on instance B.
    const onB = new DashboardClient(b);
    Object.assign(onB, { cookie: onA.cookie, csrfToken: onA.csrfToken });

    const options = (await onA.post('/account/passkeys/options', { password: STAFF_PASSWORD }, { headers })).body.options;
    expect(options.rp.id).toBe(HOST);
    const { passkey, json } = createCredential(options, ORIGIN);
    const added = await onB.post('/account/passkeys', { name: 'Desk', credential: json }, { headers });
    expect(added.status, added.text).toBe(201);

    const signInOptions = (await send(b, 'POST', `${DASHBOARD_API}/passkey-login/options`, { body: {}, headers })).body.options;
    const assertion = getAssertion(passkey, signInOptions, ORIGIN);
    const first = await send(a, 'POST', `${DASHBOARD_API}/passkey-login`, { body: { credential: assertion }, headers });
    expect([first.status, first.body.user?.id]).toEqual([200, user.id]);
    const again = await send(b, 'POST', `${DASHBOARD_API}/passkey-login`, { body: { credential: assertion }, headers });
    expect([again.status, again.body.code]).toEqual([400, 'PASSKEY_CHALLENGE_EXPIRED']);
  });
});
