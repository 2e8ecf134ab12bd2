import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { generate } from 'otplib';
import pino from 'pino';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISPLAY_COOKIE } from '../../src/dashboard/session.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { migrateTo, migrateToLatest } from '../../src/db/migrations.js';
import { runRetention } from '../../src/jobs/retention.js';
import { createHotel } from '../../src/operations.js';
import { startServer } from '../../src/server.js';
import {
  addStaffUser,
  DashboardClient,
  DASHBOARD_API,
  hotelIdOf,
  send,
  STAFF_PASSWORD,
  type DashboardResponse,
  type EventStream,
} from '../support/dashboard-client.js';
import { createTestStorage, startTestServer, testConfig, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Second factors" (front-desk displays): an admin lists the paired
// displays and unpairs one, which ends every session that came through it at once; a
// pairing unused for 90 days ends, and the retention job deletes it with the expired
// pairing codes. Through real HTTPS requests on both engines; and a pairing made before
// migration 0027 gets its id and still skips the factor after the upgrade.

const DAY_MS = 24 * 60 * 60 * 1000;

/** The value a Set-Cookie list sets for `name`, or undefined. */
function cookieValue(res: DashboardResponse, name: string): string | undefined {
  const line = res.setCookies.find((l) => l.startsWith(`${name}=`));
  return line?.slice(name.length + 1).split(';')[0];
}

describe.each(testEngines())('paired front-desk displays (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  const adminEmail = 'admin@displays.example';
  const open: EventStream[] = [];
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    await addStaffUser(db(), t.slug, adminEmail, 'admin');
    admin = await DashboardClient.loggedIn(t, adminEmail);
  });
  afterAll(async () => {
    for (const s of open) s.close();
    await t.close();
  });

  /** A receptionist with an authenticator app, so that a sign-in not through a pairing asks for its code. */
  async function deskUser(email: string): Promise<{ id: string; email: string }> {
    const user = await addStaffUser(db(), t.slug, email, 'receptionist');
    const client = await DashboardClient.loggedIn(t, user.email);
    const secret = (await client.post('/account/totp/start', { password: STAFF_PASSWORD })).body.secret as string;
    const confirmed = await client.post('/account/totp/confirm', { code: await generate({ secret }) });
    expect(confirmed.status, confirmed.text).toBe(200);
    return user;
  }

  /** A display sign-in as the login page sends it, with the device's cookie when given. */
  async function displaySignIn(
    email: string,
    device: string | null,
    extra: Record<string, unknown> = {},
  ): Promise<{ client: DashboardClient; res: DashboardResponse }> {
    const headers: Record<string, string> = device === null ? {} : { cookie: `${DISPLAY_COOKIE}=${device}` };
    const res = await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email, password: STAFF_PASSWORD, display: true, ...extra }, headers });
    expect(res.status, res.text).toBe(200);
    const client = new DashboardClient(t);
    client.adopt(res);
    return { client, res };
  }

  /** Pairs a display with a new code; the device's token and the pairing's id. */
  async function pair(email: string, label?: string): Promise<{ device: string; id: string; client: DashboardClient }> {
    const made = await admin.post('/displays/pairing-code', label === undefined ? undefined : { label });
    expect(made.status, made.text).toBe(201);
    const { client, res } = await displaySignIn(email, null, { pairingCode: made.body.code });
    expect(res.body.stage).toBeUndefined();
    const device = cookieValue(res, DISPLAY_COOKIE) ?? '';
    const row = await db().selectFrom('staff_sessions').select('paired_display_id').where('csrf_token', '=', res.body.csrfToken).executeTakeFirstOrThrow();
    expect(row.paired_display_id).toMatch(/^disp_/);
    return { device, id: row.paired_display_id ?? '', client };
  }

  async function stream(client: DashboardClient): Promise<EventStream> {
    const s = await client.events();
    open.push(s);
    expect(s.status).toBe(200);
    expect((await s.next()).event).toBe('ready');
    return s;
  }

  const listed = async (client = admin): Promise<Array<Record<string, unknown>>> => {
    const res = await client.get('/displays');
    expect(res.status, res.text).toBe(200);
    return res.body.displays as Array<Record<string, unknown>>;
  };

  const setLastUsed = (id: string, at: string) => db().updateTable('paired_displays').set({ last_used_at: at }).where('id', '=', id).execute();

  it('a pairing is listed with its name, who paired it and when; a display sign-in with the cookie skips the factor and records its last use', async () => {
    const user = await deskUser(`list-${engine}@displays.example`);
    const { device, id } = await pair(user.email, '  Lobby screen  ');
    const [entry] = (await listed()).filter((d) => d.id === id);
    expect(entry).toEqual({ id, pairedAt: expect.any(String), pairedBy: adminEmail, lastUsedAt: entry?.pairedAt, label: 'Lobby screen' });

    const before = new Date(Date.parse(String(entry?.pairedAt)) - 5 * DAY_MS).toISOString();
    await setLastUsed(id, before);
    const later = await displaySignIn(user.email, device);
    expect(later.res.body.stage).toBeUndefined();
    expect((await later.client.get('/guests')).status).toBe(200);
    const [after] = (await listed()).filter((d) => d.id === id);
    expect(Date.parse(String(after?.lastUsedAt))).toBeGreaterThan(Date.parse(before));
    const session = await db()
      .selectFrom('staff_sessions')
      .select('paired_display_id')
      .where('csrf_token', '=', later.res.body.csrfToken)
      .executeTakeFirstOrThrow();
    expect(session.paired_display_id).toBe(id);

    // A code made without a name pairs a display without one; a name over 60 characters is refused.
    const unnamed = await pair(user.email);
    expect((await listed()).find((d) => d.id === unnamed.id)?.label).toBeNull();
    const long = await admin.post('/displays/pairing-code', { label: 'x'.repeat(61) });
    expect([long.status, long.body.errors?.[0]?.field]).toEqual([422, 'label']);
  });

  it('unpairing ends the pairing and, at once, every session that came through it (401, event streams closed); the device needs the factor again; audited; others’ 404', async () => {
    const user = await deskUser(`unpair-${engine}@displays.example`);
    const first = await pair(user.email, 'Desk 2');
    const again = await displaySignIn(user.email, first.device);
    const streams = [await stream(first.client), await stream(again.client)];
    // A sign-in of the same user not through the pairing is not ended by it.
    const person = await DashboardClient.loggedIn(t, user.email);

    // Only an admin of the same hotel may unpair: a receptionist is refused, another hotel's admin finds nothing.
    const desk = await DashboardClient.loggedIn(t, (await addStaffUser(db(), t.slug, `desk-${engine}@displays.example`, 'receptionist')).email);
    expect((await desk.post(`/displays/${first.id}/unpair`)).status).toBe(403);
    const otherSlug = `other-${engine}-${Date.now().toString(36)}`;
    await t.addHotel(otherSlug);
    const otherAdmin = await DashboardClient.loggedIn(t, (await addStaffUser(db(), otherSlug, `admin-${engine}@other.example`, 'admin')).email);
    const foreign = await otherAdmin.post(`/displays/${first.id}/unpair`);
    expect([foreign.status, foreign.body.code]).toEqual([404, 'RECORD_NOT_FOUND']);
    expect(await listed(otherAdmin)).toEqual([]);
    expect((await first.client.get('/session')).status).toBe(200);

    const res = await admin.post(`/displays/${first.id}/unpair`);
    expect([res.status, res.body]).toEqual([200, { id: first.id, unpaired: true }]);
    for (const s of streams) await expect.poll(() => s.hasEnded).toBe(true);
    expect((await first.client.get('/session')).status).toBe(401);
    expect((await again.client.get('/guests')).status).toBe(401);
    expect((await person.get('/session')).status).toBe(200);
    expect((await listed()).map((d) => d.id)).not.toContain(first.id);
    expect((await admin.post(`/displays/${first.id}/unpair`)).status).toBe(404);

    // The device's next display sign-in needs the second factor again (or a new code).
    expect((await displaySignIn(user.email, first.device)).res.body.stage).toBe('second_factor');
    const entries = await db()
      .selectFrom('security_events')
      .select(['actor_type', 'actor_id', 'detail'])
      .where('hotel_id', '=', await hotelIdOf(db(), t.slug))
      .where('kind', '=', 'display.unpaired')
      .execute();
    const adminId = (await db().selectFrom('staff_users').select('id').where('email', '=', adminEmail).executeTakeFirstOrThrow()).id;
    expect(entries).toEqual([{ actor_type: 'staff', actor_id: adminId, detail: JSON.stringify({ displayId: first.id, sessionsEnded: 2 }) }]);
  });

  it('a pairing unpaired between its check and the session’s insert: the device signs in as an unpaired one (the second factor), never a 500', async () => {
    const user = await deskUser(`race-${engine}@displays.example`);
    const { device } = await pair(user.email, 'Race');
    // The unpairing of another request lands at the worst moment: a trigger deletes the
    // pairing just before the display session that names it is inserted (the statement's
    // foreign key then fails, and the trigger's delete is undone with it).
    const trigger =
      engine === 'postgres'
        ? [
            sql`create function unpair_first() returns trigger language plpgsql as $$ begin delete from paired_displays where id = new.paired_display_id; return new; end $$`,
            sql`create trigger unpair_first before insert on staff_sessions for each row when (new.paired_display_id is not null) execute function unpair_first()`,
          ]
        : [
            sql`create trigger unpair_first before insert on staff_sessions when new.paired_display_id is not null begin delete from paired_displays where id = new.paired_display_id; end`,
          ];
    for (const statement of trigger) await statement.execute(db());
    try {
      const { res } = await displaySignIn(user.email, device);
      expect(res.body.stage).toBe('second_factor');
      const session = await db()
        .selectFrom('staff_sessions')
        .select('paired_display_id')
        .where('csrf_token', '=', res.body.csrfToken)
        .executeTakeFirstOrThrow();
      expect(session.paired_display_id).toBeNull();
    } finally {
      await sql`drop trigger unpair_first ${engine === 'postgres' ? sql`on staff_sessions` : sql``}`.execute(db());
      if (engine === 'postgres') await sql`drop function unpair_first()`.execute(db());
    }
  });

  it('with the hotel’s rule, an unpaired device’s display sign-in enrols: the pairing skips it until unpaired', async () => {
    const user = await addStaffUser(db(), t.slug, `enrol-${engine}@displays.example`, 'receptionist');
    expect((await admin.post('/hotel/second-factor', { required: true })).status).toBe(200);
    try {
      expect((await displaySignIn(user.email, null)).res.body.stage).toBe('enrol');
      const { device, id } = await pair(user.email);
      expect((await displaySignIn(user.email, device)).res.body.stage).toBeUndefined();
      expect((await admin.post(`/displays/${id}/unpair`)).status).toBe(200);
      expect((await displaySignIn(user.email, device)).res.body.stage).toBe('enrol');
    } finally {
      await admin.post('/hotel/second-factor', { required: false });
    }
  });

  it('a pairing belongs to the hotel: deactivating the admin who made its code keeps it, listed with their e-mail', async () => {
    const user = await deskUser(`kept-${engine}@displays.example`);
    const other = await addStaffUser(db(), t.slug, `leaving-${engine}@displays.example`, 'admin');
    const leaving = await DashboardClient.loggedIn(t, other.email);
    const made = await leaving.post('/displays/pairing-code', { label: 'Night desk' });
    const { res } = await displaySignIn(user.email, null, { pairingCode: made.body.code });
    const device = cookieValue(res, DISPLAY_COOKIE) ?? '';
    expect((await admin.post(`/users/${other.id}/deactivate`)).status).toBe(200);
    expect((await listed()).filter((d) => d.label === 'Night desk')).toEqual([expect.objectContaining({ pairedBy: other.email })]);
    expect((await displaySignIn(user.email, device)).res.body.stage).toBeUndefined();
  });

  it('a pairing unused for 90 days no longer skips the factor and is not listed; the retention job deletes it and the expired pairing codes', async () => {
    const user = await deskUser(`expiry-${engine}@displays.example`);
    const old = await pair(user.email, 'Back office');
    const kept = await pair(user.email, 'Front');
    await setLastUsed(old.id, new Date(Date.now() - 91 * DAY_MS).toISOString());
    expect((await displaySignIn(user.email, old.device)).res.body.stage).toBe('second_factor');
    expect((await listed()).map((d) => d.id)).not.toContain(old.id);

    const expired = await admin.post('/displays/pairing-code', { label: 'Never used' });
    const current = await admin.post('/displays/pairing-code');
    const hotelId = await hotelIdOf(db(), t.slug);
    await db()
      .updateTable('display_pairing_codes')
      .set({ expires_at: new Date(Date.now() - DAY_MS).toISOString() })
      .where('hotel_id', '=', hotelId)
      .where('label', '=', 'Never used')
      .execute();
    const refused = await send(t, 'POST', `${DASHBOARD_API}/login`, {
      body: { email: user.email, password: STAFF_PASSWORD, display: true, pairingCode: expired.body.code },
    });
    expect([refused.status, refused.body.code]).toEqual([401, 'PAIRING_CODE_INVALID']);

    const result = await runRetention(db(), null);
    expect([result.pairedDisplays, result.pairingCodes]).toEqual([1, 1]);
    const pairings = await db().selectFrom('paired_displays').select('id').where('hotel_id', '=', hotelId).execute();
    expect(pairings.map((p) => p.id)).not.toContain(old.id);
    expect(pairings.map((p) => p.id)).toContain(kept.id);
    const codes = await db().selectFrom('display_pairing_codes').select('label').where('hotel_id', '=', hotelId).execute();
    expect(codes).toEqual([{ label: null }]);
    // The code that is still current pairs as before.
    expect((await displaySignIn(user.email, null, { pairingCode: current.body.code })).res.body.stage).toBeUndefined();
  });
});

describe.each(testEngines())('migration 0027_display_pairings (%s)', (engine) => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a display paired before the upgrade gets an id and its pairing time as its last use, is listed, and its device still skips the factor', async () => {
    const storage = await createTestStorage(engine);
    dirs.push(storage.dataDir);
    const slug = 'upgraded-hotel';
    const token = 'a-device-token-of-the-previous-release';
    const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    let adminEmail: string;
    let deskEmail: string;
    const pairedAt = '2026-11-01T09:00:00.000Z';
    try {
      await migrateTo(handle.db, '0026_passkeys');
      const hotel = await createHotel(handle.db, slug, 'Upgraded Hotel');
      const admin = await addStaffUser(handle.db, slug, 'admin@upgraded.example', 'admin');
      adminEmail = admin.email;
      deskEmail = (await addStaffUser(handle.db, slug, 'desk@upgraded.example', 'receptionist')).email;
      const hash = createHash('sha256').update(token).digest('hex');
      await sql`insert into paired_displays (token_hash, hotel_id, paired_by, created_at) values (${hash}, ${hotel.id}, ${admin.id}, ${pairedAt})`.execute(
        handle.db,
      );
      await sql`update hotels set require_second_factor = 1 where id = ${hotel.id}`.execute(handle.db);
      await migrateToLatest(handle.db);
      const rows = await handle.db.selectFrom('paired_displays').select(['id', 'token_hash', 'label', 'created_at', 'last_used_at']).execute();
      expect(rows).toEqual([{ id: expect.stringMatching(/^disp_/), token_hash: hash, label: null, created_at: pairedAt, last_used_at: pairedAt }]);
    } finally {
      await handle.close();
    }

    const server = await startServer(testConfig(storage), pino({ level: 'silent' }));
    const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
    try {
      const target = { baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent };
      const signIn = (cookie: Record<string, string>) =>
        send(target, 'POST', `${DASHBOARD_API}/login`, { body: { email: deskEmail, password: STAFF_PASSWORD, display: true }, headers: cookie });
      expect((await signIn({})).body.stage).toBe('enrol');
      const paired = await signIn({ cookie: `${DISPLAY_COOKIE}=${token}` });
      expect([paired.status, paired.body.stage]).toEqual([200, undefined]);
      // The admin, who has no factor either, signs in fully once the hotel no longer requires one.
      await server.database.db.updateTable('hotels').set({ require_second_factor: 0 }).where('slug', '=', slug).execute();
      const admin = await DashboardClient.loggedIn(target, adminEmail);
      expect((await admin.get('/displays')).body.displays).toEqual([
        { id: expect.stringMatching(/^disp_/), pairedAt, pairedBy: adminEmail, lastUsedAt: expect.any(String), label: null },
      ]);
    } finally {
      await agent.close();
      await server.close();
    }
  });
});
