import fs from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { createHotel, createStaffUser, deactivateStaff } from '../../src/operations.js';
import { createTestStorage, testEngines } from '../support/harness.js';
import { parseJsonOutput, runCli, storageEnv, type Storage } from './cli-helpers.js';

// README.md, "Operating it": `innsync user role <slug> <email> admin|receptionist` changes a
// user's role with a `staff.role_changed` security entry (actor: operator, `{ from, to }`);
// the hotel's last active admin is never made a receptionist, not even by two changes at
// once (docs/dashboard.md, "Changing a role").

const PASSWORD = 'lantern-quartz-meadow-7';

/** The JSON failure of a command run with --json: exit 1, nothing on stdout, one object on stderr. */
function failure(r: { code: number | null; stdout: string; stderr: string }): { status: string; code: string; message: string } {
  expect([r.code, r.stdout]).toEqual([1, '']);
  return JSON.parse(r.stderr) as { status: string; code: string; message: string };
}

describe.each(testEngines())('innsync user role (%s)', (engine) => {
  let storage: Storage;
  let env: Record<string, string>;
  let handle: DatabaseHandle;
  let seq = 0;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    env = storageEnv(storage);
    handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    await migrateToLatest(handle.db);
  });
  afterAll(async () => {
    await handle.close();
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  const cli = (args: string[]) => runCli(args, { env });

  /** A hotel of its own for each test, with these users (e-mail → role). */
  async function hotelWith(users: Record<string, 'admin' | 'receptionist'>): Promise<string> {
    const slug = `role-${engine}-${++seq}`;
    await createHotel(handle.db, slug, `Role Hotel ${seq}`);
    for (const [email, role] of Object.entries(users)) await createStaffUser(handle.db, slug, email, role, PASSWORD);
    return slug;
  }

  const roles = async (slug: string): Promise<Record<string, string>> =>
    Object.fromEntries(
      (
        await handle.db
          .selectFrom('staff_users')
          .innerJoin('hotels', 'hotels.id', 'staff_users.hotel_id')
          .select(['email', 'role'])
          .where('slug', '=', slug)
          .execute()
      ).map((r) => [r.email, r.role]),
    );

  const roleEvents = (slug: string) =>
    handle.db
      .selectFrom('security_events')
      .innerJoin('hotels', 'hotels.id', 'security_events.hotel_id')
      .innerJoin('staff_users', 'staff_users.id', 'security_events.subject_user_id')
      .select(['staff_users.email', 'security_events.actor_type', 'security_events.actor_id', 'security_events.client_ip', 'security_events.detail'])
      .where('hotels.slug', '=', slug)
      .where('security_events.kind', '=', 'staff.role_changed')
      .orderBy('security_events.created_at')
      .orderBy('security_events.id')
      .execute();

  it('changes the role both ways (text and --json), each change a staff.role_changed entry of the operator; the same role again writes nothing', async () => {
    const slug = await hotelWith({ 'ada@role.example': 'admin', 'bea@role.example': 'receptionist' });

    const promoted = parseJsonOutput(await cli(['user', 'role', slug, 'Bea@Role.example', 'admin', '--json']));
    expect(promoted).toEqual({ userId: expect.stringMatching(/^user_/), email: 'bea@role.example', role: 'admin', changed: true });
    expect(await roles(slug)).toEqual({ 'ada@role.example': 'admin', 'bea@role.example': 'admin' });

    const again = await cli(['user', 'role', slug, 'bea@role.example', 'admin']);
    expect([again.code, again.stdout]).toEqual([0, 'bea@role.example is admin already: nothing changed\n']);
    expect(parseJsonOutput(await cli(['user', 'role', slug, 'bea@role.example', 'admin', '--json'])).changed).toBe(false);

    const demoted = await cli(['user', 'role', slug, 'ada@role.example', 'receptionist']);
    expect([demoted.code, demoted.stdout]).toEqual([0, 'ada@role.example is now receptionist\n']);
    expect(await roles(slug)).toEqual({ 'ada@role.example': 'receptionist', 'bea@role.example': 'admin' });

    const events = await roleEvents(slug);
    expect(events.map((e) => ({ ...e, detail: JSON.parse(e.detail ?? 'null') as unknown }))).toEqual([
      { email: 'bea@role.example', actor_type: 'operator', actor_id: null, client_ip: null, detail: { from: 'receptionist', to: 'admin' } },
      { email: 'ada@role.example', actor_type: 'operator', actor_id: null, client_ip: null, detail: { from: 'admin', to: 'receptionist' } },
    ]);
    expect(await cli(['user', 'list', slug])).toMatchObject({ code: 0, stdout: expect.stringContaining('ada@role.example  receptionist  active') });
  }, 120_000);

  it("refuses to make the hotel's last active admin a receptionist (a deactivated admin does not count), and a role that is neither", async () => {
    const slug = await hotelWith({ 'solo@role.example': 'admin', 'gone@role.example': 'admin', 'desk@role.example': 'receptionist' });
    await deactivateStaff(handle.db, slug, 'gone@role.example');

    const last = failure(await cli(['user', 'role', slug, 'solo@role.example', 'receptionist', '--json']));
    expect(last).toEqual({
      status: 'error',
      code: 'LAST_ADMIN',
      message: "This is the hotel's last active admin: make another user admin first, then change this user's role.",
    });
    const text = await cli(['user', 'role', slug, 'solo@role.example', 'receptionist']);
    expect([text.code, text.stderr]).toEqual([
      1,
      "innsync: This is the hotel's last active admin: make another user admin first, then change this user's role.\n",
    ]);
    expect(failure(await cli(['user', 'role', slug, 'gone@role.example', 'receptionist', '--json'])).code).toBe('USER_DEACTIVATED');
    expect(failure(await cli(['user', 'role', slug, 'desk@role.example', 'manager', '--json']))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: '"manager" is neither admin nor receptionist: innsync user role <slug> <email> admin|receptionist',
    });
    expect(failure(await cli(['user', 'role', slug, 'nobody@role.example', 'admin', '--json'])).code).toBe('USER_NOT_FOUND');
    expect(await roles(slug)).toEqual({ 'solo@role.example': 'admin', 'gone@role.example': 'admin', 'desk@role.example': 'receptionist' });
    expect(await roleEvents(slug)).toEqual([]);

    // Another admin first; then the first may go.
    parseJsonOutput(await cli(['user', 'role', slug, 'desk@role.example', 'admin', '--json']));
    parseJsonOutput(await cli(['user', 'role', slug, 'solo@role.example', 'receptionist', '--json']));
    expect(failure(await cli(['user', 'role', slug, 'desk@role.example', 'receptionist', '--json'])).code).toBe('LAST_ADMIN');
    expect(await roles(slug)).toEqual({ 'solo@role.example': 'receptionist', 'gone@role.example': 'admin', 'desk@role.example': 'admin' });
  }, 120_000);

  it("the hotel's last active admin is not deactivated either (409 LAST_ADMIN, nothing written); another admin first, then it may go", async () => {
    const slug = await hotelWith({ 'boss@role.example': 'admin', 'clerk@role.example': 'receptionist' });
    const last = failure(await cli(['user', 'deactivate', slug, 'boss@role.example', '--json']));
    expect(last).toEqual({
      status: 'error',
      code: 'LAST_ADMIN',
      message: "This is the hotel's last active admin: make another user admin first, then deactivate this one.",
    });
    const active = async () =>
      (
        await handle.db
          .selectFrom('staff_users')
          .innerJoin('hotels', 'hotels.id', 'staff_users.hotel_id')
          .select(['email', 'deactivated_at'])
          .where('hotels.slug', '=', slug)
          .execute()
      )
        .filter((u) => u.deactivated_at === null)
        .map((u) => u.email)
        .sort();
    expect(await active()).toEqual(['boss@role.example', 'clerk@role.example']);
    // A receptionist goes as before; once the clerk is an admin, the first admin may go too.
    parseJsonOutput(await cli(['user', 'role', slug, 'clerk@role.example', 'admin', '--json']));
    expect((await cli(['user', 'deactivate', slug, 'boss@role.example', '--json'])).code).toBe(0);
    expect(await active()).toEqual(['clerk@role.example']);
    expect(failure(await cli(['user', 'deactivate', slug, 'clerk@role.example', '--json'])).code).toBe('LAST_ADMIN');
  }, 120_000);

  it('two admins made receptionists at once: one change succeeds, the other is LAST_ADMIN, and the hotel keeps an admin', async () => {
    const slug = await hotelWith({ 'one@role.example': 'admin', 'two@role.example': 'admin' });
    const [a, b] = await Promise.all([
      cli(['user', 'role', slug, 'one@role.example', 'receptionist', '--json']),
      cli(['user', 'role', slug, 'two@role.example', 'receptionist', '--json']),
    ]);
    const outcomes = [a, b].map((r) => (r.code === 0 ? 'changed' : (JSON.parse(r.stderr) as { code: string }).code)).sort();
    expect(outcomes).toEqual(['LAST_ADMIN', 'changed']);
    expect(Object.values(await roles(slug)).sort()).toEqual(['admin', 'receptionist']);
    expect(await roleEvents(slug)).toHaveLength(1);
  }, 120_000);

  // On PostgreSQL the second demotion must wait for the first's commit, then see it: a plain
  // conditional UPDATE would still see the first admin active in its snapshot (docs/dashboard.md,
  // "Changing a role"). The first is held open here, so the wait is seen, not timed.
  it.runIf(engine === 'postgres')(
    'a demotion waits for another one not yet committed, then is LAST_ADMIN',
    async () => {
      const slug = await hotelWith({ 'first@role.example': 'admin', 'second@role.example': 'admin' });
      const holder = new pg.Client({ connectionString: storage.databaseUrl ?? '' });
      const watcher = new pg.Client({ connectionString: storage.databaseUrl ?? '' });
      onTestFinished(async () => {
        await holder.end();
        await watcher.end();
      });
      await holder.connect();
      await watcher.connect();
      await holder.query('begin');
      await holder.query(
        "update staff_users set role = 'receptionist' where email = 'first@role.example' and hotel_id = (select id from hotels where slug = $1)",
        [slug],
      );
      let settled = false;
      const second = cli(['user', 'role', slug, 'second@role.example', 'receptionist', '--json']).finally(() => {
        settled = true;
      });
      const waiting = async (): Promise<boolean> =>
        settled ||
        Number(
          (await watcher.query("select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike '%for no key update%'")).rows[0].n,
        ) > 0;
      await expect.poll(waiting, { timeout: 30_000 }).toBe(true);
      // The command did not finish while the first demotion was open: it waits for its lock.
      expect(settled).toBe(false);
      await holder.query('commit');
      expect(failure(await second).code).toBe('LAST_ADMIN');
      expect(await roles(slug)).toEqual({ 'first@role.example': 'receptionist', 'second@role.example': 'admin' });
    },
    120_000,
  );
});
