import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { sql } from 'kysely';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { knownMigrations, migrateTo, migrateToLatest } from '../../src/db/migrations.js';
import { capBody } from '../../src/pms/request-log-body.js';
import { guestKey, holderRef, type GuestRef } from '../../src/pms/request-log-guests.js';
import { startServer } from '../../src/server.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { createTestStorage, testConfig, testEngines, pmsBase } from '../support/harness.js';

// Migration 0016: a database of the previous release (migrated to 0015, request-log rows
// holding their bodies as text) is upgraded: every body moves to request_log_bodies, each
// row names its own, the guests they name are indexed, and the request explorer shows each
// old body exactly as it was stored.

describe.each(testEngines())('migration 0016_request_log_bodies (%s)', (engine) => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('every old row keeps its bodies (the explorer shows each exactly), identical bodies are stored once, and the guests they name are indexed', async () => {
    const storage = await createTestStorage(engine);
    dirs.push(storage.dataDir);
    const slug = 'migrated-hotel';
    const sync = JSON.stringify({
      syncMode: 'full',
      guests: [
        { pmsGuestId: 'PMS-OLD-1', firstName: 'Zoë', lastName: 'Müller', roomNumber: '101', checkInDate: '2026-11-20', checkOutDate: '2026-11-28' },
        { pmsGuestId: 'PMS-OLD-2', lastName: 'Okafor', roomNumber: '102', checkInDate: '2026-11-21', checkOutDate: '2026-11-27' },
      ],
    });
    const bigSync = capBody(
      JSON.stringify({
        guests: Array.from({ length: 1500 }, (_, i) => ({ pmsGuestId: `PMS-BIG-${i}`, lastName: `Name${i}`, roomNumber: `${i}`, checkInDate: '2026-11-20' })),
      }),
    );
    const occupied = JSON.stringify({
      code: 'ROOM_OCCUPIED',
      message: 'Room 7 is held by another active guest.',
      currentGuest: { pmsGuestId: null, lastName: 'Walk-In', checkInDate: '2026-11-22' },
    });
    const old = [
      { id: 'req_old_sync_a', created_at: '2026-11-20T10:00:00.000Z', request_body: sync, response_body: '{"created":2,"requestId":"req_old_sync_a"}' },
      { id: 'req_old_sync_b', created_at: '2026-11-20T10:05:00.000Z', request_body: sync, response_body: '{"unchanged":2,"requestId":"req_old_sync_b"}' },
      { id: 'req_old_big', created_at: '2026-11-20T10:10:00.000Z', request_body: bigSync, response_body: null },
      { id: 'req_old_digest', created_at: '2026-11-20T10:15:00.000Z', request_body: null, response_body: '{"count":1,"ids":["guest_abc"]}' },
      { id: 'req_old_409', created_at: '2026-11-20T10:20:00.000Z', request_body: '{"pmsGuestId":"PMS-OLD-3","roomNumber":"7"}', response_body: occupied },
      { id: 'req_old_nul', created_at: '2026-11-20T10:25:00.000Z', request_body: '{"pmsGuestId":"a\\u0000b"}', response_body: '{}' },
    ];
    const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    try {
      expect((await migrateTo(handle.db, '0015_request_log_replays')).at(-1)).toBe('0015_request_log_replays');
      await sql`insert into hotels (id, slug, name, created_at) values ('hotel_old', ${slug}, 'Old', '2026-11-01T00:00:00.000Z')`.execute(handle.db);
      for (const r of old) {
        await sql`insert into request_log (id, created_at, hotel_id, slug, api_key_id, key_mode, method, path, status_code, request_body, response_body, client_ip, duration_ms, request_bytes, response_bytes)
          values (${r.id}, ${r.created_at}, 'hotel_old', ${slug}, 'key_old', 'live', ${r.request_body === null ? 'GET' : 'POST'}, ${`${pmsBase(slug)}/guests${r.request_body === null ? '' : '/sync'}`},
            200, ${r.request_body}, ${r.response_body}, '127.0.0.1', 1.5, ${r.request_body === null ? null : Buffer.byteLength(r.request_body)}, ${r.response_body === null ? null : Buffer.byteLength(r.response_body)})`.execute(
          handle.db,
        );
      }
      // A row no key sent: no body, only sizes.
      await sql`insert into request_log (id, created_at, hotel_id, slug, method, path, status_code, client_ip, duration_ms, request_bytes)
        values ('req_old_401', '2026-11-20T10:30:00.000Z', null, ${slug}, 'POST', ${`${pmsBase(slug)}/guests/checkin`}, 401, '127.0.0.1', 1, 80)`.execute(
        handle.db,
      );

      expect(await migrateToLatest(handle.db)).toEqual(knownMigrations().filter((name) => name > '0015_request_log_replays'));
      const columns = await sql<Record<string, unknown>>`select * from request_log where id = 'req_old_sync_a'`.execute(handle.db);
      expect(columns.rows[0]).not.toHaveProperty('request_body');
      expect((await sql<{ id: string }>`select id from request_log order by id`.execute(handle.db)).rows.map((r) => r.id)).toEqual(
        [...old.map((r) => r.id), 'req_old_401'].sort(),
      );
      // The two syncs share one stored body.
      const syncRows = await sql<{
        request_sha256: string;
      }>`select distinct request_sha256 from request_log where id in ('req_old_sync_a', 'req_old_sync_b')`.execute(handle.db);
      expect(syncRows.rows).toHaveLength(1);
      const { rows: bodies } = await sql<{ n: number | string }>`select count(*) as n from request_log_bodies`.execute(handle.db);
      // sync, its two answers, big sync, digest, 409 request and answer, NUL request, '{}'.
      expect(Number(bodies[0]?.n)).toBe(9);
      // The guests the old bodies name are indexed (by their keys since 0020): a cut body's too, and a walk-in holder by its hash.
      const { rows: keyRows } =
        engine === 'postgres'
          ? await sql<{ key: string }>`select unnest(guest_keys)::text as key from request_log_bodies`.execute(handle.db)
          : await sql<{ key: string }>`select cast(key as text) as key from request_log_guest_keys`.execute(handle.db);
      const keySet = new Set(keyRows.map((r) => r.key));
      const refs: GuestRef[] = [
        { kind: 'pms', ref: 'PMS-OLD-1' },
        { kind: 'pms', ref: 'PMS-OLD-2' },
        { kind: 'pms', ref: 'PMS-OLD-3' },
        { kind: 'pms', ref: 'PMS-BIG-0' },
        { kind: 'pms', ref: 'PMS-BIG-600' },
        { kind: 'guest', ref: 'guest_abc' },
        { kind: 'holder', ref: holderRef('Walk-In', '2026-11-22') },
      ];
      for (const r of refs) expect(keySet.has(String(guestKey('hotel_old', r))), `${r.kind}:${r.ref}`).toBe(true);
    } finally {
      await handle.close();
    }

    // The new release on the upgraded database: the explorer shows every old body as it was.
    const server = await startServer(testConfig(storage), pino({ level: 'silent' }));
    const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
    try {
      const target = { baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent };
      const user = await addStaffUser(server.database.db, slug, `migrated-${engine}@example.org`, 'admin');
      const admin = await DashboardClient.loggedIn(target, user.email);
      for (const r of old) {
        const res = await admin.get(`/requests/${r.id}`);
        expect(res.status).toBe(200);
        expect({ id: r.id, requestBody: res.body.request.requestBody, responseBody: res.body.request.responseBody }).toEqual({
          id: r.id,
          requestBody: r.request_body,
          responseBody: r.response_body,
        });
      }
      const big = await admin.get('/requests/req_old_big');
      expect(big.body.request.requestCut).toBe(true);
      const denied = await admin.get('/requests/req_old_401');
      expect(denied.body.request).toMatchObject({ requestBody: null, responseBody: null, requestBytes: 80 });
    } finally {
      await agent.close();
      await server.close();
    }
  }, 120_000);
});
