import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteFile } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { parseJsonOutput, runCli, storageEnv } from '../cli/cli-helpers.js';
import { addStaffUser, DashboardClient, eventually } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer, directDatabaseUrl, pmsBase } from '../support/harness.js';
import { scaled } from '../support/test-run.js';

// README.md, "Personal data": a guest's personal data is anonymised after
// GUEST_RETENTION_DAYS, erased on request (Art. 17) and exported on request (Art. 15),
// through the CLI and the dashboard.

const PG_DUMP = '/usr/lib/postgresql/15/bin/pg_dump';
const run = promisify(execFile);

/** A guest whose every personal value is unique to this test run, so a grep finds only it. */
function person(tag: string) {
  const id = randomId(10);
  return {
    pmsGuestId: `PMS-${tag}-${id}`,
    firstName: `Zenobia${id}`,
    lastName: `Quixote${id}`,
    phone: `+4930${Math.floor(Math.random() * 9e8 + 1e8)}`,
    email: `z.${id.toLowerCase()}@example.org`,
    language: 'de',
    nationality: 'DE',
  };
}

/** Every byte the service keeps: SQLite's database and WAL files, or a pg_dump of the database. */
async function storedText(t: TestServer): Promise<string> {
  if (t.engine === 'postgres') {
    const { stdout } = await run(PG_DUMP, ['--data-only', directDatabaseUrl(t.config)], { maxBuffer: 512 * 1024 * 1024 });
    return stdout;
  }
  const file = sqliteFile(t.config.dataDir);
  return [file, `${file}-wal`]
    .filter((f) => fs.existsSync(f))
    .map((f) => fs.readFileSync(f).toString('latin1'))
    .join('\n');
}

function personalValues(p: ReturnType<typeof person>): string[] {
  return [p.firstName, p.lastName, p.phone, p.email];
}

describe.each(testEngines())('guest personal data (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  let receptionist: DashboardClient;
  let base: string;
  const env = (): Record<string, string> => storageEnv(t.config);

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    await addStaffUser(t.server.database.db, t.slug, `admin-${engine}@example.org`, 'admin');
    await addStaffUser(t.server.database.db, t.slug, `desk-${engine}@example.org`, 'receptionist');
    admin = await DashboardClient.loggedIn(t, `admin-${engine}@example.org`);
    receptionist = await DashboardClient.loggedIn(t, `desk-${engine}@example.org`);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Waits until the batched request log holds the row of this answer. */
  const logged = (requestId: string) =>
    eventually(async () => (await t.server.database.db.selectFrom('request_log').select('id').where('id', '=', requestId).executeTakeFirst()) ?? undefined);

  /**
   * Two stays of one PMS guest (checked in, phone and e-mail changed, moved, checked out,
   * back again, checked out), plus a sync and an update retried with its key later.
   */
  async function twoStays(p: ReturnType<typeof person>, other: ReturnType<typeof person>) {
    const rooms = [`E${randomId(5)}`, `F${randomId(5)}`, `G${randomId(5)}`];
    const first = await t.post(`${base}/guests/checkin`, guest({ ...p, phone: '+15550100', email: null, roomNumber: rooms[0] }));
    expect(first.status).toBe(200);
    // The roster read while the guest is in house: logged as its count and guest ids.
    expect((await t.api('GET', `${base}/guests`)).status).toBe(200);
    const updateKey = uniqueKey('upd');
    const update = { pmsGuestId: p.pmsGuestId, phone: p.phone, email: p.email, roomNumber: rooms[1] };
    const updated = await t.post(`${base}/guests/update`, update, { idempotencyKey: updateKey });
    expect(updated.body.changes.phone).toEqual({ from: '+15550100', to: p.phone });
    // A sync naming this guest and another one, which stays in house.
    const synced = await t.post(`${base}/guests/sync`, {
      syncMode: 'full',
      guests: [guest({ ...p, roomNumber: rooms[1] }), guest({ ...other, roomNumber: `H${randomId(5)}` })],
    });
    expect(synced.status).toBe(200);
    const out = await t.post(`${base}/guests/checkout`, { pmsGuestId: p.pmsGuestId });
    expect(out.status).toBe(200);
    const again = await t.post(`${base}/guests/checkin`, guest({ ...p, roomNumber: rooms[2] }));
    const outAgain = await t.post(`${base}/guests/checkout`, { pmsGuestId: p.pmsGuestId });
    expect(outAgain.status).toBe(200);
    await logged(outAgain.body.requestId as string);
    return { firstId: first.body.guestId as string, secondId: again.body.guestId as string, update, updateKey, rooms };
  }

  it('innsync guest export prints every stay (fields, room history, activity) and the request-log rows that name the guest, and nothing of another guest', async () => {
    const p = person('exp');
    const other = person('oth');
    const { firstId, secondId, rooms } = await twoStays(p, other);

    const r = await runCli(['guest', 'export', t.slug, '--pms-guest-id', p.pmsGuestId, '--json'], { env: env() });
    const doc = parseJsonOutput(r);
    expect(doc.hotel).toEqual({ slug: t.slug, name: 'Test Hotel' });
    expect(doc.stays.map((s: { guestId: string }) => s.guestId)).toEqual([firstId, secondId]);
    const [s1, s2] = doc.stays;
    expect(s1).toMatchObject({
      pmsGuestId: p.pmsGuestId,
      status: 'checked_out',
      firstName: p.firstName,
      lastName: p.lastName,
      phone: p.phone,
      email: p.email,
      language: 'de',
      nationality: 'DE',
      roomNumber: rooms[1],
      anonymisedAt: null,
    });
    expect(s1.roomHistory.map((h: { roomNumber: string }) => h.roomNumber)).toEqual([rooms[0], rooms[1]]);
    expect(s1.activity.map((a: { action: string }) => a.action).sort()).toEqual(['guest.checked_in', 'guest.checked_out', 'guest.room_moved', 'guest.updated']);
    expect(s1.activity.find((a: { action: string }) => a.action === 'guest.updated').changes.email).toEqual({ from: null, to: p.email });
    expect(s2.roomHistory.map((h: { roomNumber: string }) => h.roomNumber)).toEqual([rooms[2]]);
    // The request log: the check-ins, update, sync and check-outs of this guest.
    const paths = doc.requestLog.map((x: { path: string }) => x.path.replace(base, ''));
    expect(paths).toEqual(expect.arrayContaining(['/guests/checkin', '/guests/update', '/guests/sync', '/guests/checkout']));
    const roster = doc.requestLog.find((x: { method: string }) => x.method === 'GET');
    expect(roster.responseBody).toEqual({ count: expect.any(Number), ids: [firstId] });
    const sync = doc.requestLog.find((x: { path: string }) => x.path.endsWith('/guests/sync'));
    expect(sync.requestBody.guests.map((g: { pmsGuestId: string }) => g.pmsGuestId)).toEqual([p.pmsGuestId]);
    // Nothing of the other guest anywhere in the document.
    for (const v of [...personalValues(other), other.pmsGuestId]) expect(r.stdout).not.toContain(v);

    // The same as a download on the guest's page, for admins only.
    const download = await admin.get(`/guests/${secondId}/export`);
    expect(download.status).toBe(200);
    expect(download.headers['content-disposition']).toMatch(/^attachment; filename="guest-.+\.json"$/);
    expect(download.body.stays.map((s: { guestId: string }) => s.guestId)).toEqual([firstId, secondId]);
    expect((await receptionist.get(`/guests/${secondId}/export`)).status).toBe(403);
  });

  it('innsync guest erase removes the personal data from every place (raw storage grep), keeps the timeline readable, writes guest.erased, and leaves another guest alone', async () => {
    const p = person('era');
    const other = person('keep');
    const { firstId, secondId, update, updateKey, rooms } = await twoStays(p, other);
    const before = await storedText(t);
    for (const v of personalValues(p)) expect(before).toContain(v);

    // Refused for a guest in house, by the CLI and the dashboard.
    const active = await runCli(['guest', 'erase', t.slug, '--pms-guest-id', other.pmsGuestId, '--json'], { env: env() });
    expect(active.code).toBe(1);
    expect(active.stderr).toMatch(/still checked in: check the guest out first/);
    const otherRow = await t.server.database.db.selectFrom('guests').select('id').where('pms_guest_id', '=', other.pmsGuestId).executeTakeFirstOrThrow();
    const refused = await admin.post(`/guests/${otherRow.id}/erase`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('GUEST_ACTIVE');

    // The command names its guest exactly once, in a hotel that exists.
    const neither = await runCli(['guest', 'erase', t.slug], { env: env() });
    expect([neither.code, neither.stderr]).toEqual([1, 'innsync: name the guest with exactly one of --pms-guest-id <id> or --guest-id <id>\n']);
    const both = await runCli(['guest', 'export', t.slug, '--pms-guest-id', p.pmsGuestId, '--guest-id', firstId], { env: env() });
    expect(both.code).toBe(1);
    const unknown = await runCli(['guest', 'erase', t.slug, '--pms-guest-id', 'PMS-nobody'], { env: env() });
    expect([unknown.code, unknown.stderr]).toEqual([1, 'innsync: No guest with this id in this hotel.\n']);
    expect((await runCli(['guest', 'erase', 'no-such-hotel', '--guest-id', firstId], { env: env() })).stderr).toBe(
      'innsync: no hotel with slug "no-such-hotel": innsync hotel list shows every hotel\'s slug\n',
    );
    expect(await storedText(t)).toContain(p.email);

    const r = await runCli(['guest', 'erase', t.slug, '--pms-guest-id', p.pmsGuestId, '--json'], { env: env() });
    const result = parseJsonOutput(r);
    expect(result.pmsGuestId).toBe(p.pmsGuestId);
    expect(result.erased.guests).toBe(2);
    // Entries with personal values: both check-ins and the update; the stored update answer.
    expect(result.erased.activity).toBe(3);
    expect(result.erased.idempotency).toBe(1);
    // Both check-ins and check-outs, the update and the sync.
    expect(result.erased.requestLog).toBe(6);

    // Not a byte of it left: SQLite's files (secure_delete, WAL truncated) or a pg_dump.
    const after = await storedText(t);
    for (const v of personalValues(p)) expect(after).not.toContain(v);
    // The other guest of the same hotel is untouched.
    for (const v of personalValues(other)) expect(after).toContain(v);
    expect((await t.api('GET', `${base}/guests?pmsGuestId=${other.pmsGuestId}`)).body.guests[0]).toMatchObject({
      firstName: other.firstName,
      phone: other.phone,
      email: other.email,
    });

    // Occupancy history and the timeline still read; one guest.erased entry, no personal data in it.
    const page = await admin.get(`/guests/${firstId}`);
    expect(page.body.guest).toMatchObject({
      firstName: null,
      lastName: '',
      phone: null,
      email: null,
      language: null,
      nationality: null,
      roomNumber: rooms[1],
      checkInDate: '2026-11-23',
      status: 'checked_out',
    });
    expect(page.body.guest.anonymisedAt).toEqual(expect.any(String));
    expect(page.body.rooms.map((x: { roomNumber: string }) => x.roomNumber)).toEqual([rooms[0], rooms[1]]);
    const activity = await admin.get(`/activity?guest=${encodeURIComponent(p.pmsGuestId)}`);
    const actions = activity.body.entries.map((e: { action: string }) => e.action);
    expect(actions[0]).toBe('guest.erased');
    expect(actions).toEqual(expect.arrayContaining(['guest.checked_in', 'guest.updated', 'guest.room_moved', 'guest.checked_out']));
    const erasedEntry = activity.body.entries[0];
    expect(erasedEntry).toMatchObject({ actorType: 'system', guestId: secondId, pmsGuestId: p.pmsGuestId, guestAnonymised: true, changes: result.erased });
    const moved = activity.body.entries.find((e: { action: string }) => e.action === 'guest.room_moved');
    expect(moved.changes.roomNumber).toEqual({ from: rooms[0], to: rooms[1] });
    const updated = activity.body.entries.find((e: { action: string }) => e.action === 'guest.updated');
    expect(updated.changes).toEqual({ phone: { from: null, to: null, anonymised: true }, email: { from: null, to: null, anonymised: true } });
    expect(activity.text).not.toContain(p.lastName);

    // A retry of the update with its key is still answered from the record, without the values.
    const replay = await t.post(`${base}/guests/update`, update, { idempotencyKey: updateKey });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.changes.phone).toEqual({ from: null, to: null, anonymised: true });
    expect(replay.text).not.toContain(p.phone);

    // The request log keeps every row and its metadata; the bodies that named the guest are gone.
    const rows = await admin.get('/requests?endpoint=checkin&limit=200');
    expect(rows.status).toBe(200);
    expect(JSON.stringify(rows.body)).not.toContain(p.lastName);
  });

  it('the dashboard\'s "Erase personal data" erases a checked-out walk-in guest for admins only', async () => {
    const p = person('walk');
    const room = `W${randomId(5)}`;
    const created = await admin.post('/guests', {
      firstName: p.firstName,
      lastName: p.lastName,
      phone: p.phone,
      email: p.email,
      language: 'fr',
      nationality: 'FR',
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-25',
      roomNumber: room,
    });
    expect(created.status).toBe(201);
    const id = created.body.guest.id as string;
    expect((await admin.post(`/guests/${id}/erase`, {})).body.code).toBe('GUEST_ACTIVE');
    expect((await admin.post(`/guests/${id}/checkout`, {})).status).toBe(200);

    expect((await receptionist.post(`/guests/${id}/erase`, {})).status).toBe(403);
    expect((await admin.post(`/guests/${id}/erase`, {}, { csrf: null })).status).toBe(403);
    const erased = await admin.post(`/guests/${id}/erase`, {});
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({ guestId: id, pmsGuestId: null, erased: { guests: 1, activity: 1, idempotency: 0, requestLog: 0 } });

    const after = await storedText(t);
    for (const v of personalValues(p)) expect(after).not.toContain(v);
    const entries = (await admin.get(`/activity?guest=${id}`)).body.entries;
    expect(entries[0]).toMatchObject({ action: 'guest.erased', actorType: 'staff', actor: { email: `admin-${engine}@example.org` }, guestAnonymised: true });
    // The activity page's action filter offers guest.erased: the API accepts it.
    const erasures = await admin.get('/activity?action=guest.erased');
    expect(erasures.status).toBe(200);
    expect(erasures.body.entries.map((e: { guestId: string }) => e.guestId)).toContain(id);
    expect(erasures.body.entries.every((e: { action: string }) => e.action === 'guest.erased')).toBe(true);
    expect((await admin.get(`/guests/${id}`)).body.guest).toMatchObject({ lastName: '', roomNumber: room, checkOutDate: '2026-11-25' });
    // A PMS guest erased the moment after its check-out: the request-log rows still queued
    // in memory are written first and erased with the rest.
    const q = person('quick');
    const quick = await t.post(`${t.pmsBase}/guests/checkin`, guest(q));
    await t.post(`${t.pmsBase}/guests/checkout`, { pmsGuestId: q.pmsGuestId });
    const quickErased = await admin.post(`/guests/${quick.body.guestId as string}/erase`, {});
    expect(quickErased.body.erased).toMatchObject({ guests: 1, requestLog: 2 });
    const stored = await storedText(t);
    for (const v of personalValues(q)) expect(stored).not.toContain(v);
    // Unknown ids answer as for any other record.
    expect((await admin.post('/guests/guest_nope/erase', {})).status).toBe(404);
  });
});

describe.each(testEngines())('GUEST_RETENTION_DAYS and innsync purge (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  beforeAll(async () => {
    t = await startTestServer(engine);
    await addStaffUser(t.server.database.db, t.slug, `admin-r-${engine}@example.org`, 'admin');
    admin = await DashboardClient.loggedIn(t, `admin-r-${engine}@example.org`);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a guest checked out a moment ago is kept under the default 90 days and off, and anonymised with 0; its timeline still reads', async () => {
    const base = `${t.pmsBase}`;
    const env = storageEnv(t.config);
    const gone = person('ret');
    const stays = person('stay');
    const room = `R${randomId(5)}`;
    const checkedIn = await t.post(`${base}/guests/checkin`, guest({ ...gone, roomNumber: room }));
    await t.post(`${base}/guests/update`, { pmsGuestId: gone.pmsGuestId, email: `new-${gone.email}` });
    await t.post(`${base}/guests/checkout`, { pmsGuestId: gone.pmsGuestId });
    await t.post(`${base}/guests/checkin`, guest({ ...stays }));
    const id = checkedIn.body.guestId as string;

    expect(parseJsonOutput(await runCli(['purge', '--json'], { env }))).toMatchObject({ guests: 0 });
    expect(parseJsonOutput(await runCli(['purge', '--json'], { env: { ...env, GUEST_RETENTION_DAYS: 'off' } }))).toMatchObject({ guests: 0 });
    expect((await admin.get(`/guests/${id}`)).body.guest).toMatchObject({ lastName: gone.lastName, anonymisedAt: null });

    const r = await runCli(['purge', '--json'], { env: { ...env, GUEST_RETENTION_DAYS: '0' } });
    const result = parseJsonOutput(r);
    expect(result).toEqual({
      requestLog: expect.any(Number),
      idempotency: expect.any(Number),
      guests: 1,
      webhookEvents: 0,
      sessions: expect.any(Number),
      accessLog: 0,
      securityEvents: 0,
      pairedDisplays: 0,
      pairingCodes: 0,
      operatorRequestLog: 0,
    });
    const page = (await admin.get(`/guests/${id}`)).body;
    expect(page.guest).toMatchObject({
      firstName: null,
      lastName: '',
      phone: null,
      email: null,
      language: null,
      nationality: null,
      roomNumber: room,
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-26',
    });
    expect(page.rooms).toHaveLength(1);
    const entries = (await admin.get(`/activity?guest=${id}`)).body.entries;
    expect(entries.map((e: { action: string }) => e.action)).toEqual(['guest.checked_out', 'guest.updated', 'guest.checked_in']);
    expect(entries.every((e: { guestAnonymised: boolean }) => e.guestAnonymised)).toBe(true);
    expect(entries[1].changes).toEqual({ email: { from: null, to: null, anonymised: true } });
    expect(entries[2].changes.roomNumber).toEqual({ from: null, to: room });
    expect(JSON.stringify(entries)).not.toContain(gone.lastName);
    // The guest in house keeps everything; a second run finds nothing more to do.
    expect((await t.api('GET', `${base}/guests?pmsGuestId=${stays.pmsGuestId}`)).body.guests[0]).toMatchObject({
      lastName: stays.lastName,
      email: stays.email,
    });
    expect(parseJsonOutput(await runCli(['purge', '--json'], { env: { ...env, GUEST_RETENTION_DAYS: '0' } })).guests).toBe(0);
    // Text output says what it did; a bad value is refused naming the variable.
    expect((await runCli(['purge'], { env: { ...env, GUEST_RETENTION_DAYS: '0' } })).stdout).toMatch(/anonymised 0 guest stays/);
    const bad = await runCli(['purge'], { env: { ...env, GUEST_RETENTION_DAYS: '-1' } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/GUEST_RETENTION_DAYS must be a whole number/);
  });

  it('the periodic job anonymises too (a server started with GUEST_RETENTION_DAYS=0)', async () => {
    const other = await startTestServer(engine, { GUEST_RETENTION_DAYS: '0' });
    try {
      const base = `${pmsBase(other.slug)}`;
      const p = person('job');
      await other.post(`${base}/guests/checkin`, guest(p));
      await other.post(`${base}/guests/checkout`, { pmsGuestId: p.pmsGuestId });
      // The first run is 5 s after start.
      await expect
        .poll(
          async () =>
            (
              await other.server.database.db
                .selectFrom('guests')
                .select(['last_name', 'anonymised_at'])
                .where('pms_guest_id', '=', p.pmsGuestId)
                .executeTakeFirst()
            )?.last_name,
          { timeout: scaled(20_000) },
        )
        .toBe('');
    } finally {
      await other.close();
    }
  });
});
