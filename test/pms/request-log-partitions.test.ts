import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.js';
import { knownMigrations, migrateTo, migrateToLatest } from '../../src/db/migrations.js';
import { dayOf, listDayPartitions, PARTITION_DAYS_AHEAD } from '../../src/db/partitions.js';
import { insertLoggedRequests, type LoggedRequest } from '../../src/db/repositories/request-log.repository.js';
import { REQUEST_LOG_RETENTION_MS, runRetention } from '../../src/jobs/retention.js';
import { createHotel, issueKeyPair } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { createTestStorage, testConfig, testEngines, pmsBase } from '../support/harness.js';
import { awaitLoggedForPair, insertRowsBeforeGuestKeys } from '../support/request-log.js';

// The request log by the day (docs/architecture.md, "Request log storage": retention by
// the day). PostgreSQL keeps one partition per UTC day and drops whole days; SQLite keeps
// one table. Migration 0018 converts a previous release's table without losing a row.

const DAY = 24 * 60 * 60 * 1000;

function loggedRow(id: string, at: string, hotelId: string, slug: string, body: string | null): LoggedRequest {
  return {
    id,
    at,
    hotelId,
    slug,
    keyId: 'key_part',
    mode: 'live',
    method: 'POST',
    path: `${pmsBase(slug)}/guests/sync`,
    statusCode: 200,
    requestBody: body,
    responseBody: `{"requestId":"${id}"}`,
    requestBytes: body === null ? null : Buffer.byteLength(body),
    responseBytes: null,
    clientIp: '127.0.0.1',
    userAgent: 'part-test',
    durationMs: 2.5,
    idempotencyKey: `idem-${id}`,
    pathBytes: null,
    userAgentBytes: null,
    idempotencyKeyBytes: null,
  };
}

/** Each row's partition (PostgreSQL): id → table name. */
async function partitionOfRows(db: Db): Promise<Map<string, string>> {
  const { rows } = await sql<{ id: string; part: string }>`select id, tableoid::regclass::text as part from request_log`.execute(db);
  return new Map(rows.map((r) => [r.id, r.part]));
}

const partitionName = (day: string): string => `request_log_${day.replaceAll('-', '')}`;

describe.each(testEngines())('request log by the day (%s)', (engine) => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('migration 0018: the log, activity and webhook history of the previous release are all kept; each row lands in its own day (23:59:59.999 and 00:00:00.000 apart); the explorer shows every old body', async () => {
    const storage = await createTestStorage(engine);
    dirs.push(storage.dataDir);
    const slug = 'partitioned-hotel';
    const sync = JSON.stringify({ syncMode: 'full', guests: [{ pmsGuestId: 'PMS-P-1', lastName: 'Nakamura', roomNumber: '101' }] });
    const times = ['2026-11-20T10:00:00.000Z', '2026-11-21T23:59:59.999Z', '2026-11-22T00:00:00.000Z', '2026-11-22T00:00:00.001Z', '2026-11-23T12:00:00.000Z'];
    const old = times.map((at, i) => loggedRow(`req_part_${i}`, at, 'hotel_part', slug, i === 4 ? null : i % 2 === 0 ? sync : `{"n":${i}}`));
    const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    let before: unknown[];
    try {
      expect((await migrateTo(handle.db, '0017_room_assignments_by_hotel')).at(-1)).toBe('0017_room_assignments_by_hotel');
      await sql`insert into hotels (id, slug, name, created_at) values ('hotel_part', ${slug}, 'Partitioned', '2026-11-01T00:00:00.000Z')`.execute(handle.db);
      await insertRowsBeforeGuestKeys(handle.db, old);
      for (let i = 0; i < 3; i++) {
        await sql`insert into activity_log (id, hotel_id, created_at, actor_type, actor_id, action, pms_guest_id, changes)
          values (${`act_part_${i}`}, 'hotel_part', ${times[i]}, 'pms', 'key_part', 'guest.checked_in', 'PMS-P-1', '{}')`.execute(handle.db);
      }
      await sql`insert into webhook_endpoints (id, hotel_id, url, secret, created_at) values ('wh_part', 'hotel_part', 'https://example.org/hook', 'whsec_x', ${times[0]})`.execute(
        handle.db,
      );
      await sql`insert into webhook_events (id, hotel_id, seq, type, payload, created_at) values ('evt_part', 'hotel_part', 1, 'guest.checked_in', '{}', ${times[0]})`.execute(
        handle.db,
      );
      await sql`insert into webhook_deliveries (id, endpoint_id, event_id, seq, status, next_attempt_at, created_at)
        values ('dlv_part', 'wh_part', 'evt_part', 1, 'succeeded', ${times[0]}, ${times[0]})`.execute(handle.db);
      before = (await sql`select * from request_log order by id`.execute(handle.db)).rows;
      expect(before).toHaveLength(old.length);

      expect(await migrateToLatest(handle.db)).toEqual(knownMigrations().filter((name) => name > '0017_room_assignments_by_hotel'));
      // Every row, column for column.
      expect((await sql`select * from request_log order by id`.execute(handle.db)).rows).toEqual(before);
      const count = async (table: string) =>
        Number((await sql<{ n: string | number }>`select count(*) as n from ${sql.table(table)}`.execute(handle.db)).rows[0]?.n);
      expect([await count('activity_log'), await count('webhook_events'), await count('webhook_deliveries')]).toEqual([3, 1, 1]);
      if (engine === 'postgres') {
        const parts = await partitionOfRows(handle.db);
        expect(old.map((r) => parts.get(r.id))).toEqual([
          'request_log_20261120',
          'request_log_20261121',
          'request_log_20261122',
          'request_log_20261122',
          'request_log_20261123',
        ]);
        // The days ahead exist from the migration on.
        const days = (await listDayPartitions(handle.db, 'request_log')).map((p) => p.day);
        for (let i = 0; i <= PARTITION_DAYS_AHEAD; i++) expect(days).toContain(dayOf(Date.now() + i * DAY));
        // A row one millisecond before a day's end and one at its start, written now: each in its day.
        await insertLoggedRequests(handle.db, [
          loggedRow('req_part_late', '2026-11-23T23:59:59.999Z', 'hotel_part', slug, null),
          loggedRow('req_part_early', '2026-11-24T00:00:00.000Z', 'hotel_part', slug, null),
        ]);
        const after = await partitionOfRows(handle.db);
        expect([after.get('req_part_late'), after.get('req_part_early')]).toEqual(['request_log_20261123', 'request_log_20261124']);
      }
    } finally {
      await handle.close();
    }

    const server = await startServer(testConfig(storage), pino({ level: 'silent' }));
    const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
    try {
      const target = { baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent };
      const user = await addStaffUser(server.database.db, slug, `partitioned-${engine}@example.org`, 'admin');
      const admin = await DashboardClient.loggedIn(target, user.email);
      for (const r of old) {
        const res = await admin.get(`/requests/${r.id}`);
        expect(res.status).toBe(200);
        expect({ id: r.id, requestBody: res.body.request.requestBody, responseBody: res.body.request.responseBody }).toEqual({
          id: r.id,
          requestBody: r.requestBody,
          responseBody: r.responseBody,
        });
      }
    } finally {
      await agent.close();
      await server.close();
    }
  }, 120_000);

  it.runIf(engine === 'postgres')(
    'PostgreSQL: retention drops the days that ended before the cutoff, rows and all, and keeps the day of the cutoff and the next whole',
    async () => {
      const storage = await createTestStorage(engine);
      dirs.push(storage.dataDir);
      const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
      try {
        await migrateToLatest(handle.db);
        await sql`insert into hotels (id, slug, name, created_at) values ('hotel_ret', 'ret', 'Ret', '2026-11-01T00:00:00.000Z')`.execute(handle.db);
        const now = Date.now();
        const cutoffDay = dayOf(now - REQUEST_LOG_RETENTION_MS);
        const dayStart = (offset: number) => Date.parse(`${cutoffDay}T00:00:00.000Z`) + offset * DAY;
        const iso = (ms: number) => new Date(ms).toISOString();
        const rows = [
          loggedRow('req_ret_two_days_before', iso(dayStart(-2) + 12 * 3600_000), 'hotel_ret', 'ret', '{"a":1}'),
          loggedRow('req_ret_last_ms_before', iso(dayStart(0) - 1), 'hotel_ret', 'ret', '{"a":2}'),
          loggedRow('req_ret_cutoff_day_start', iso(dayStart(0)), 'hotel_ret', 'ret', '{"a":3}'),
          loggedRow('req_ret_next_day', iso(dayStart(1) + 3600_000), 'hotel_ret', 'ret', '{"a":4}'),
        ];
        // The writer creates the old days it is given (they are long past the days made ahead);
        // one batch each, so each body's last use is its own row's time.
        for (const r of rows) await insertLoggedRequests(handle.db, [r]);
        const parts = await partitionOfRows(handle.db);
        expect(rows.map((r) => parts.get(r.id))).toEqual([-2, -1, 0, 1].map((o) => partitionName(dayOf(dayStart(o)))));

        const result = await runRetention(handle.db, null, now);
        expect(result.requestLog).toBe(2);
        const days = (await listDayPartitions(handle.db, 'request_log')).map((p) => p.day);
        expect(days).not.toContain(dayOf(dayStart(-2)));
        expect(days).not.toContain(dayOf(dayStart(-1)));
        expect(days).toContain(cutoffDay);
        const left = (await sql<{ id: string }>`select id from request_log where id like 'req_ret_%' order by id`.execute(handle.db)).rows.map((r) => r.id);
        expect(left).toEqual(['req_ret_cutoff_day_start', 'req_ret_next_day']);
        // The bodies of the dropped rows went with them; the kept rows' stayed.
        const bodies = Number(
          (await sql<{ n: string }>`select count(*) as n from request_log_bodies where hotel_id = 'hotel_ret'`.execute(handle.db)).rows[0]?.n,
        );
        expect(bodies).toBe(4); // the request and the answer of each row kept
      } finally {
        await handle.close();
      }
    },
    120_000,
  );

  it.runIf(engine === 'postgres')(
    'PostgreSQL: the service creates the partitions of today and the next days at a start on a fresh database, again after a restart past the days it made, and a day it has not made when a row needs it',
    async () => {
      const storage = await createTestStorage(engine);
      dirs.push(storage.dataDir);
      const aheadDays = () => Array.from({ length: PARTITION_DAYS_AHEAD + 1 }, (_, i) => dayOf(Date.now() + i * DAY));
      const days = async (server: RunningServer) => (await listDayPartitions(server.database.db, 'request_log')).map((p) => p.day);

      let server = await startServer(testConfig(storage), pino({ level: 'silent' }));
      try {
        expect(await days(server)).toEqual(expect.arrayContaining(aheadDays()));
      } finally {
        await server.close();
      }

      // The last run was days ago: the days it made ahead are all in the past. Here: today's
      // and the later partitions are gone, as they would not exist yet.
      const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
      try {
        for (const p of await listDayPartitions(handle.db, 'request_log')) await sql`drop table ${sql.id(p.name)}`.execute(handle.db);
        expect(await listDayPartitions(handle.db, 'request_log')).toEqual([]);
      } finally {
        await handle.close();
      }

      server = await startServer(testConfig(storage), pino({ level: 'silent' }));
      const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
      try {
        expect(await days(server)).toEqual(expect.arrayContaining(aheadDays()));
        // Today's partition goes while the service runs: the next request's row creates it again.
        const today = dayOf(Date.now());
        await sql`drop table ${sql.id(partitionName(today))}`.execute(server.database.db);
        await createHotel(server.database.db, 'part-live', 'Part Live');
        const pair = await issueKeyPair(server.database.db, 'part-live');
        const res = await request(`https://127.0.0.1:${server.httpsPort}/api/pms/v1/part-live/guests`, {
          headers: { authorization: `Bearer ${pair.live}` },
          dispatcher: agent,
        });
        expect(res.statusCode).toBe(200);
        await res.body.text();
        await awaitLoggedForPair(server.database.db, pair.keyId, 1);
        expect(await days(server)).toContain(dayOf(Date.now()));
      } finally {
        await agent.close();
        await server.close();
      }
    },
    120_000,
  );
});
