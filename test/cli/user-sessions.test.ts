import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { startSession } from '../../src/dashboard/session.js';
import { createHotel, createStaffUser } from '../../src/operations.js';
import { createTestStorage, testEngines } from '../support/harness.js';
import { lines, parseJsonOutput, runCli, storageEnv, type Storage } from './cli-helpers.js';

// README.md, "Operating it": `innsync user sessions <slug> <email>` lists a user's dashboard
// sessions (id prefix, device, IP, started, last seen, display), as a table and with --json;
// `user create` and `user set-password` refuse a password easy to guess with its own code
// (docs/dashboard.md, "Passwords"), worded in English.

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';

describe.each(testEngines())('innsync user sessions and password strength (%s)', (engine) => {
  let storage: Storage;
  let env: Record<string, string>;
  let handle: DatabaseHandle;
  const slug = `sess-${engine}`;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    env = storageEnv(storage);
    handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    await migrateToLatest(handle.db);
    await createHotel(handle.db, slug, 'Harbour View Inn');
  });
  afterAll(async () => {
    await handle.close();
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  const cli = (args: string[], input?: string) => runCli(args, { env, input });

  it('user sessions: the live sessions of the user, the most recently seen first, as a table and as JSON; none, said so', async () => {
    const user = await createStaffUser(handle.db, slug, 'night.porter@sessions.example', 'receptionist', 'lantern-quartz-meadow-7');
    const none = await cli(['user', 'sessions', slug, 'night.porter@sessions.example']);
    expect([none.code, none.stdout]).toEqual([0, 'night.porter@sessions.example has no live dashboard sessions\n']);

    const owner = { id: user.userId, hotelId: (await handle.db.selectFrom('hotels').select('id').where('slug', '=', slug).executeTakeFirstOrThrow()).id };
    await startSession(handle.db, owner, { userAgent: CHROME, clientIp: '203.0.113.7' });
    await startSession(handle.db, owner, { display: true, clientIp: '2001:db8:1:2::/64' });
    // A session past its idle expiry is not listed.
    await startSession(handle.db, owner, { userAgent: CHROME, clientIp: '198.51.100.1' });
    await handle.db
      .updateTable('staff_sessions')
      .set({ last_seen_at: new Date(Date.now() - 31 * 60_000).toISOString() })
      .where('client_ip', '=', '198.51.100.1')
      .execute();

    const json = parseJsonOutput(await cli(['user', 'sessions', slug, 'Night.Porter@sessions.example', '--json']));
    expect(json.email).toBe('night.porter@sessions.example');
    expect(json.sessions).toHaveLength(2);
    expect(json.sessions).toContainEqual({
      id: expect.stringMatching(/^[0-9a-f]{12}$/),
      device: 'Chrome 120 on Linux',
      ip: '203.0.113.7',
      createdAt: expect.any(String),
      lastSeenAt: expect.any(String),
      display: false,
    });
    expect(json.sessions).toContainEqual(expect.objectContaining({ device: 'unknown', ip: '2001:db8:1:2::/64', display: true }));
    // No session's row id (the SHA-256 of its cookie) is printed.
    const rowIds = (await handle.db.selectFrom('staff_sessions').select('id').execute()).map((r) => r.id);
    for (const s of json.sessions) expect(rowIds.some((id) => id.startsWith(s.id))).toBe(false);

    const text = await cli(['user', 'sessions', slug, 'night.porter@sessions.example']);
    expect(text.code).toBe(0);
    const [header, ...rows] = lines(text.stdout);
    expect(header).toMatch(/^ID\s+DEVICE\s+IP\s+STARTED\s+LAST SEEN\s+DISPLAY$/);
    expect(rows).toHaveLength(2);
    expect(rows.find((r) => r.includes('203.0.113.7'))).toMatch(
      /^[0-9a-f]{12}\s+Chrome 120 on Linux\s+203\.0\.113\.7\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+no$/,
    );
    expect(rows.find((r) => r.includes('2001:db8'))).toMatch(/\s+yes$/);

    const unknown = await cli(['user', 'sessions', slug, 'nobody@sessions.example', '--json']);
    expect([unknown.code, JSON.parse(unknown.stderr).code]).toEqual([1, 'USER_NOT_FOUND']);
  });

  it('user create and user set-password refuse a password easy to guess, each reason with its own code and sentence; nothing is stored', async () => {
    const cases: Array<[string, string, string]> = [
      ['password1234', 'PASSWORD_TOO_COMMON', 'one of the most common passwords'],
      ['marguerite-2024!', 'PASSWORD_LIKE_EMAIL', 'resembles the e-mail address'],
      ['harbourviewinn-2024', 'PASSWORD_LIKE_HOTEL', "resembles the hotel's name"],
      ['sommerferien2024', 'PASSWORD_TOO_WEAK', 'too easy to guess'],
    ];
    for (const [password, code, words] of cases) {
      const r = await cli(['user', 'create', slug, '--email', 'marguerite@strength.example', '--role', 'receptionist', '--json'], `${password}\n`);
      expect([r.code, r.stdout], password).toEqual([1, '']);
      expect(JSON.parse(r.stderr), password).toEqual({ status: 'error', code, message: expect.stringContaining(words) });
      const text = await cli(['user', 'create', slug, '--email', 'marguerite@strength.example', '--role', 'receptionist'], `${password}\n`);
      // One English sentence that names the fix.
      expect(text.stderr, password).toBe(`innsync: ${JSON.parse(r.stderr).message}\n`);
      expect(JSON.parse(r.stderr).message, password).toMatch(/^The password .*: (choose|make) .*\.$/);
    }
    expect(await handle.db.selectFrom('staff_users').select('id').where('email', '=', 'marguerite@strength.example').execute()).toEqual([]);

    const created = await cli(
      ['user', 'create', slug, '--email', 'marguerite@strength.example', '--role', 'receptionist', '--json'],
      'ochre-pelican-harbour-31\n',
    );
    expect(parseJsonOutput(created)).toMatchObject({ email: 'marguerite@strength.example' });
    const weak = await cli(['user', 'set-password', slug, 'marguerite@strength.example', '--json'], 'Margu3rite!2024\n');
    expect([weak.code, JSON.parse(weak.stderr).code]).toEqual([1, 'PASSWORD_LIKE_EMAIL']);
    const strong = await cli(['user', 'set-password', slug, 'marguerite@strength.example', '--json'], 'violet-anchor-tundra-58\n');
    expect(parseJsonOutput(strong)).toMatchObject({ passwordChanged: true });
    // The operator's change is a security entry of the user.
    const entries = await handle.db
      .selectFrom('security_events')
      .select(['kind', 'actor_type'])
      .where('subject_user_id', '=', parseJsonOutput(created).userId)
      .orderBy('created_at')
      .execute();
    expect(entries).toEqual([
      { kind: 'staff.added', actor_type: 'operator' },
      { kind: 'password.changed', actor_type: 'operator' },
    ]);
  });
});
