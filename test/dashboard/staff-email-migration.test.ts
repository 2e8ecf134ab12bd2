import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateTo } from '../../src/db/migrations.js';
import { hashPassword } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { DashboardClient, type Target } from '../support/dashboard-client.js';
import { createTestStorage, testEngines, databaseEnv } from '../support/harness.js';

// migration 0005 makes staff e-mails unique per hotel. A database left at the
// previous migration (made by the real migrations 0001-0004), with users and live
// sessions in it, is served by the new build: the users log in, the sessions made before
// the migration still work, and the same e-mail can now be added at another hotel.

const PREVIOUS = '0004_personal_data';
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

describe.each(testEngines())('migration 0005_staff_email_per_hotel (%s)', (engine) => {
  let storage: { dataDir: string; databaseUrl: string | null };
  let server: RunningServer;
  let target: Target;
  const token = randomBytes(32).toString('base64url');
  const now = new Date().toISOString();

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    // The database as the previous build left it.
    const old: DatabaseHandle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    try {
      expect((await migrateTo(old.db, PREVIOUS)).at(-1)).toBe(PREVIOUS);
      const db = old.db;
      await db
        .insertInto('hotels')
        .values([
          { id: 'hotel_old_a', slug: 'old-a', name: 'Old A', created_at: now },
          { id: 'hotel_old_b', slug: 'old-b', name: 'Old B', created_at: now },
        ])
        .execute();
      const hash = await hashPassword('old-password-1');
      await db
        .insertInto('staff_users')
        .values([
          {
            id: 'user_old_admin',
            hotel_id: 'hotel_old_a',
            email: 'admin@old.example',
            role: 'admin',
            password_hash: hash,
            created_at: now,
            deactivated_at: null,
          },
          {
            id: 'user_old_desk',
            hotel_id: 'hotel_old_b',
            email: 'desk@old.example',
            role: 'receptionist',
            password_hash: hash,
            created_at: now,
            deactivated_at: null,
          },
          {
            id: 'user_old_gone',
            hotel_id: 'hotel_old_b',
            email: 'gone@old.example',
            role: 'receptionist',
            password_hash: hash,
            created_at: now,
            deactivated_at: now,
          },
        ])
        .execute();
      // A live session made before the migration (the cookie holds `token`, the table its SHA-256).
      await db
        .insertInto('staff_sessions')
        .values({ id: sha256(token), user_id: 'user_old_admin', hotel_id: 'hotel_old_a', csrf_token: 'old-csrf', created_at: now, last_seen_at: now })
        .execute();
      // At the previous migration an e-mail was unique across hotels.
      await expect(
        db
          .insertInto('staff_users')
          .values({
            id: 'user_old_twin',
            hotel_id: 'hotel_old_b',
            email: 'admin@old.example',
            role: 'admin',
            password_hash: hash,
            created_at: now,
            deactivated_at: null,
          })
          .execute(),
      ).rejects.toThrow();
    } finally {
      await old.close();
    }

    // The new build starts on it and migrates.
    const config = loadConfig({
      PORT: '0',
      HTTP_PORT: 'off',
      HOST: '127.0.0.1',
      DATA_DIR: storage.dataDir,
      ...databaseEnv(storage),
      LOG_LEVEL: 'silent',
    });
    server = await startServer(config, pino({ level: 'silent' }));
    const cert = fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8');
    target = { baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent: new Agent({ connect: { ca: cert, servername: 'localhost' } }) };
  });
  afterAll(async () => {
    await target?.agent.close();
    await server?.close();
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  const db = () => server.database.db;

  it('the migration is applied and every user is carried over, field for field', async () => {
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db());
    const names = applied.rows.map((r) => r.name);
    // Applied right after the one before it (later migrations follow).
    expect(names.slice(names.indexOf(PREVIOUS), names.indexOf(PREVIOUS) + 2)).toEqual([PREVIOUS, '0005_staff_email_per_hotel']);
    const users = await db().selectFrom('staff_users').selectAll().orderBy('id').execute();
    expect(users.map((u) => [u.id, u.hotel_id, u.email, u.role, u.created_at, u.deactivated_at])).toEqual([
      ['user_old_admin', 'hotel_old_a', 'admin@old.example', 'admin', now, null],
      ['user_old_desk', 'hotel_old_b', 'desk@old.example', 'receptionist', now, null],
      ['user_old_gone', 'hotel_old_b', 'gone@old.example', 'receptionist', now, now],
    ]);
  });

  it('a session made before the migration still works (GET /session, a write with its CSRF token), and ends on logout', async () => {
    const client = new DashboardClient(target);
    client.cookie = token;
    client.csrfToken = 'old-csrf';
    const s = await client.get('/session');
    expect(s.status, s.text).toBe(200);
    expect(s.body).toEqual({
      user: { id: 'user_old_admin', email: 'admin@old.example', role: 'admin' },
      hotel: { slug: 'old-a', name: 'Old A', timeZone: 'UTC' },
      display: false,
      csrfToken: 'old-csrf',
    });
    const keys = await client.post('/keys');
    expect(keys.status, keys.text).toBe(201);
    expect((await client.post('/logout')).status).toBe(200);
    expect((await client.get('/session')).status).toBe(401);
  });

  it('the users log in with their passwords; the deactivated one still cannot', async () => {
    const admin = await new DashboardClient(target).login('admin@old.example', 'old-password-1');
    expect(admin.status, admin.text).toBe(200);
    expect(admin.body.hotel).toEqual({ slug: 'old-a', name: 'Old A', timeZone: 'UTC' });
    const desk = await new DashboardClient(target).login('desk@old.example', 'old-password-1');
    expect(desk.body.hotel).toEqual({ slug: 'old-b', name: 'Old B', timeZone: 'UTC' });
    expect((await new DashboardClient(target).login('gone@old.example', 'old-password-1')).status).toBe(401);
  });

  it('after it, an e-mail is unique per hotel: the same e-mail at another hotel is accepted (on the dashboard), within a hotel refused (by the database)', async () => {
    // Hotel B's only user is a receptionist: it gets an admin, who adds users through the API.
    const hash = await hashPassword('old-b-admin-password');
    await db()
      .insertInto('staff_users')
      .values({
        id: 'user_new_admin_b',
        hotel_id: 'hotel_old_b',
        email: 'boss@old.example',
        role: 'admin',
        password_hash: hash,
        created_at: now,
        deactivated_at: null,
      })
      .execute();
    const boss = await DashboardClient.loggedIn(target, 'boss@old.example', 'old-b-admin-password');
    const twin = await boss.post('/users', { email: 'admin@old.example', role: 'receptionist', password: 'twin-password-1' });
    expect(twin.status, twin.text).toBe(201);
    const dup = await boss.post('/users', { email: 'desk@old.example', role: 'receptionist', password: 'twin-password-1' });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe('EMAIL_TAKEN');
    await expect(
      db()
        .insertInto('staff_users')
        .values({
          id: 'user_dup',
          hotel_id: 'hotel_old_a',
          email: 'admin@old.example',
          role: 'admin',
          password_hash: hash,
          created_at: now,
          deactivated_at: null,
        })
        .execute(),
    ).rejects.toThrow();
    // The two accounts of admin@ have different passwords: each logs in to its own hotel.
    expect((await new DashboardClient(target).login('admin@old.example', 'twin-password-1')).body.hotel.slug).toBe('old-b');
    expect((await new DashboardClient(target).login('admin@old.example', 'old-password-1')).body.hotel.slug).toBe('old-a');
  });

  it('foreign keys are intact: every reference is valid and still enforced (a session of no user, a user of no hotel, deleting a user with sessions)', async () => {
    if (engine === 'sqlite') {
      expect((await sql`pragma foreign_key_check`.execute(db())).rows).toEqual([]);
      const schema = await sql<{ sql: string }>`select sql from sqlite_master where name = 'staff_sessions'`.execute(db());
      expect(schema.rows[0]?.sql).toMatch(/references "staff_users"/);
      const tables = await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name like 'staff_users%'`.execute(db());
      expect(tables.rows.map((r) => r.name)).toEqual(['staff_users']);
    } else {
      const constraints = await sql<{ conname: string }>`select conname from pg_constraint where conrelid = 'staff_users'::regclass and contype = 'u'`.execute(
        db(),
      );
      expect(constraints.rows).toEqual([]);
    }
    await expect(
      db()
        .insertInto('staff_sessions')
        .values({ id: 'orphan', user_id: 'user_nobody', hotel_id: 'hotel_old_a', csrf_token: 'x', created_at: now, last_seen_at: now })
        .execute(),
    ).rejects.toThrow();
    await expect(
      db()
        .insertInto('staff_users')
        .values({
          id: 'user_homeless',
          hotel_id: 'hotel_nowhere',
          email: 'x@old.example',
          role: 'admin',
          password_hash: 'x',
          created_at: now,
          deactivated_at: null,
        })
        .execute(),
    ).rejects.toThrow();
    await DashboardClient.loggedIn(target, 'desk@old.example', 'old-password-1');
    await expect(db().deleteFrom('staff_users').where('id', '=', 'user_old_desk').execute()).rejects.toThrow();
  });
});
