import fs from 'node:fs';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import pino from 'pino';
import { sql, type Kysely } from 'kysely';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { knownMigrations, migrateTo, migrateToLatest } from '../../src/db/migrations.js';
import { issueKeyPair } from '../../src/operations.js';
import { capBody, packBody } from '../../src/pms/request-log-body.js';
import { guestKey, guestRefs, holderRef } from '../../src/pms/request-log-guests.js';
import { startServer } from '../../src/server.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { createTestStorage, testConfig, testEngines, pmsBase } from '../support/harness.js';
import { loggedRows } from '../support/request-log.js';

// Migration 0020: a database of the previous release (migrated to 0019, the guest index in
// request_log_guests by hotel, kind, reference and body address) is upgraded: every entry
// becomes its 64-bit key (PostgreSQL: in the body's guest_keys; SQLite: in
// request_log_guest_keys), the old table goes, and the export and erasure of a guest named
// in bodies written before the upgrade still find and clean every one of them.

describe.each(testEngines())('migration 0020_compact_guest_index (%s)', (engine) => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('every old index entry becomes its key, and the export and erasure of a guest named in bodies stored before the upgrade find and clean them all', async () => {
    const storage = await createTestStorage(engine);
    dirs.push(storage.dataDir);
    const slug = 'keys-hotel';
    const hotelId = 'hotel_keys';
    const gone = { pmsGuestId: 'PMS-KEY-GONE', firstName: 'Ilse', lastName: 'Vandermeer', phone: '+4930111222333', email: 'ilse.vdm@example.org' };
    const kept = { pmsGuestId: 'PMS-KEY-KEPT', firstName: 'Bruno', lastName: 'Castellani', phone: '+4930444555666', email: 'bruno.c@example.org' };
    const stay = { roomNumber: '301', checkInDate: '2026-11-20', checkOutDate: '2026-11-28' };
    const roster = JSON.stringify({
      syncMode: 'full',
      guests: [
        { ...kept, ...stay, roomNumber: '302' },
        { ...gone, ...stay },
      ],
    });
    // Cut rosters (64 KiB) of many guests, the first with the gone guest first.
    const cutRosters = [0, 1, 2].map((k) =>
      capBody(
        JSON.stringify({
          syncMode: 'full',
          guests: [
            ...(k === 0 ? [{ ...gone, ...stay }] : []),
            ...Array.from({ length: 2500 }, (_, i) => ({ pmsGuestId: `PMS-KEY-OTHER-${k}-${i}`, lastName: `Other${i}`, roomNumber: `${i}` })),
          ],
        }),
      ),
    );
    for (const c of cutRosters) expect(() => JSON.parse(c) as unknown).toThrow();
    const checkin = JSON.stringify({ ...gone, ...stay });
    const occupied = JSON.stringify({
      code: 'ROOM_OCCUPIED',
      message: 'Room 7 is held by another active guest.',
      currentGuest: { pmsGuestId: null, lastName: 'Walk-In', checkInDate: '2026-11-22' },
    });
    const now = new Date().toISOString();
    const old = [
      { id: 'req_keys_sync', body: roster },
      ...cutRosters.map((body, k) => ({ id: `req_keys_cut${k}`, body })),
      { id: 'req_keys_checkin', body: checkin },
      { id: 'req_keys_409', body: occupied },
    ];
    let entries = 0;
    const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    try {
      const db = handle.db as unknown as Kysely<unknown>;
      expect((await migrateTo(handle.db, '0019_webhook_events_by_time')).at(-1)).toBe('0019_webhook_events_by_time');
      await sql`insert into hotels (id, slug, name, created_at) values (${hotelId}, ${slug}, 'Keys', '2026-11-01T00:00:00.000Z')`.execute(db);
      // The bodies, their index entries and the rows, as the previous release's writer stored them.
      for (const r of old) {
        const packed = packBody(r.body);
        await sql`insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at)
          values (${hotelId}, ${packed.sha256}, ${packed.bytes}, ${packed.data}, ${now})`.execute(db);
        for (const g of guestRefs([r.body])) {
          await sql`insert into request_log_guests (hotel_id, kind, ref, sha256) values (${hotelId}, ${g.kind}, ${g.ref}, ${packed.sha256})`.execute(db);
          entries++;
        }
        await sql`insert into request_log (id, created_at, hotel_id, slug, api_key_id, key_mode, method, path, status_code, client_ip, duration_ms, request_sha256, request_bytes)
          values (${r.id}, ${now}, ${hotelId}, ${slug}, 'key_old', 'live', 'POST', ${`${pmsBase(slug)}/guests/sync`}, 200, '127.0.0.1', 1.5, ${packed.sha256}, ${packed.bytes})`.execute(
          db,
        );
      }
      // More bodies and entries than one conversion batch (PostgreSQL: 500 bodies; SQLite:
      // 2,000 entries), so the batches' seams are crossed: 600 check-ins of other guests.
      for (let i = 0; i < 600; i++) {
        const text = JSON.stringify({ pmsGuestId: `PMS-KEY-FILL-${i}`, lastName: `Fill${i}`, roomNumber: `F${i}` });
        const packed = packBody(text);
        await sql`insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at) values (${hotelId}, ${packed.sha256}, ${packed.bytes}, ${packed.data}, ${now})`.execute(
          db,
        );
        await sql`insert into request_log_guests (hotel_id, kind, ref, sha256) values (${hotelId}, 'pms', ${`PMS-KEY-FILL-${i}`}, ${packed.sha256})`.execute(
          db,
        );
        entries++;
      }
      expect(entries).toBeGreaterThan(2_000);

      expect(await migrateToLatest(handle.db)).toEqual(knownMigrations().filter((name) => name >= '0020_compact_guest_index'));
      const tables = (await handle.db.introspection.getTables()).map((t) => t.name);
      expect(tables).not.toContain('request_log_guests');
      // Every old entry is its key now, each for its own body.
      const { rows: indexed } =
        engine === 'postgres'
          ? await sql<{
              sha256: string;
              key: string;
            }>`select sha256, unnest(guest_keys)::text as key from request_log_bodies where hotel_id = ${hotelId}`.execute(db)
          : await sql<{ sha256: string; key: string }>`select sha256, cast(key as text) as key from request_log_guest_keys where hotel_id = ${hotelId}`.execute(
              db,
            );
      expect(indexed).toHaveLength(entries);
      const have = new Set(indexed.map((r) => `${r.sha256} ${r.key}`));
      for (const r of old) {
        const sha = packBody(r.body).sha256;
        for (const g of guestRefs([r.body])) expect(have.has(`${sha} ${String(guestKey(hotelId, g))}`)).toBe(true);
      }
      expect(have.has(`${packBody(occupied).sha256} ${String(guestKey(hotelId, { kind: 'holder', ref: holderRef('Walk-In', '2026-11-22') }))}`)).toBe(true);
    } finally {
      await handle.close();
    }

    // The new release: the guest stays and leaves through the API, then is exported and erased.
    const server = await startServer(testConfig(storage), pino({ level: 'silent' }));
    const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
    try {
      const db = server.database.db;
      const target = { baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent };
      const keys = await issueKeyPair(db, slug);
      const own: string[] = [];
      for (const [i, [route, body]] of (
        [
          ['checkin', { ...gone, ...stay }],
          ['checkout', { pmsGuestId: gone.pmsGuestId }],
        ] as const
      ).entries()) {
        const res = await request(`${target.baseUrl}/api/pms/v1/${slug}/guests/${route}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${keys.live}`, 'content-type': 'application/json', 'idempotency-key': `keys-migration-${i}` },
          body: JSON.stringify(body),
          dispatcher: agent,
        });
        const answer = (await res.body.json()) as { requestId: string };
        expect(res.statusCode).toBe(200);
        own.push(answer.requestId);
      }
      await loggedRows(db, own);
      const stayRow = await db.selectFrom('guests').select('id').where('pms_guest_id', '=', gone.pmsGuestId).executeTakeFirstOrThrow();
      const user = await addStaffUser(db, slug, `keys-${engine}@example.org`, 'admin');
      const admin = await DashboardClient.loggedIn(target, user.email);

      const exported = await admin.get(`/guests/${stayRow.id}/export`);
      expect(exported.status).toBe(200);
      const listed = (exported.body.requestLog as Array<{ id: string }>).map((r) => r.id);
      for (const id of ['req_keys_sync', 'req_keys_cut0', 'req_keys_checkin', ...own]) expect(listed).toContain(id);
      for (const id of ['req_keys_cut1', 'req_keys_cut2', 'req_keys_409']) expect(listed).not.toContain(id);

      expect((await admin.post(`/guests/${stayRow.id}/erase`, {})).status).toBe(200);
      const { rows } = await sql<{ body: Uint8Array }>`select body from request_log_bodies where hotel_id = ${hotelId}`.execute(db);
      const texts = rows.map((r) => brotliDecompressSync(r.body).toString('utf8'));
      for (const text of texts) for (const v of [gone.firstName, gone.lastName, gone.phone, gone.email]) expect(text).not.toContain(v);
      // The other guest of the shared roster keeps its data; the old rows still read their (redacted) bodies.
      for (const v of [kept.firstName, kept.lastName, kept.phone, kept.email]) expect(texts.some((t) => t.includes(v))).toBe(true);
      const after = await loggedRows(db, ['req_keys_sync', 'req_keys_cut0', 'req_keys_checkin']);
      expect(JSON.parse(after.get('req_keys_sync')?.request_body ?? '{}').guests[0]).toMatchObject(kept);
      expect(after.get('req_keys_cut0')?.request_body).toContain('"PMS-KEY-OTHER-0-1"');
    } finally {
      await agent.close();
      await server.close();
    }
  }, 120_000);
});
