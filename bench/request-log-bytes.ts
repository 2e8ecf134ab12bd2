/**
 * Request-log bytes per hotel-day: the bodies kept once per hotel, compressed
 * with the keys of the guests they name (PostgreSQL: request_log_bodies.guest_keys, a GIN
 * index; SQLite: request_log_guest_keys) against every row holding its bodies as text
 * (the layout before migration 0016), for the same model traffic, measured in the same run.
 *
 *   npm run bench:request-log                        # SQLite, and PostgreSQL in a
 *                                                    # throwaway cluster when one can be started
 *   DATABASE_URL=postgres://… npm run bench:request-log   # PostgreSQL at that URL instead
 *
 * Knobs (environment): BENCH_ROOMS (120), BENCH_DAYS (2), BENCH_SEED (1).
 *
 * Model traffic of a hotel of BENCH_ROOMS rooms, about 90 % occupied, stays of 1-5 nights:
 * a full sync (POST /guests/sync with the whole in-house roster, each guest with name,
 * phone, e-mail, language, nationality, counts, room and dates) every 5 minutes, 288 a
 * day, answered with its summary and request id; each arrival a check-in (14:00-22:00)
 * and each departure a check-out (07:00-11:00), with their JSON answers; the roster a sync
 * sends changes with them. Each request is written as the request-log writer writes it
 * (capped at 64 KiB as the hook does), one write per request (no batching helps the new
 * layout). Both layouts live in a fresh database each, migrated to the latest schema; the
 * old one gets the two text columns back and its rows carry their bodies in them.
 * Printed: bytes per hotel-day of each (SQLite: pages in use; PostgreSQL: total relation
 * sizes of the request log's tables with their indexes and TOAST), rows, distinct bodies,
 * and the ratio new / old.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../src/db/database.js';
import { ensureDaysOf } from '../src/db/partitions.js';
import { migrateToLatest } from '../src/db/migrations.js';
import { insertLoggedRequests, type LoggedRequest } from '../src/db/repositories/request-log.repository.js';
import { capBody } from '../src/pms/request-log-body.js';
import { createDatabase, startPostgresCluster } from '../test/support/postgres-cluster.js';

/** PostgreSQL: DATABASE_URL (a server where databases may be created), else a throwaway cluster (test/support/postgres-cluster.ts). */
let pgAdminUrl = '';

const ROOMS = Number(process.env.BENCH_ROOMS ?? 120);
const DAYS = Number(process.env.BENCH_DAYS ?? 2);
let seed = Number(process.env.BENCH_SEED ?? 1);
const random = (): number => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
const FIRST = [
  'Ada',
  'Grace',
  'Jean',
  'Marie',
  'Lena',
  'Paul',
  'Jonas',
  'Sofia',
  'Mateo',
  'Chloé',
  'Hanna',
  'Luca',
  'Emma',
  'Noah',
  'Mia',
  'Yuki',
  'Aarav',
  'Olga',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Müller',
  'Schmidt',
  'García',
  'Rossi',
  'Dubois',
  'Novak',
  'Kowalski',
  'Jensen',
  'Weber',
  'Fischer',
  'Tanaka',
  'Okafor',
  'Silva',
];
const LANG = ['de', 'en', 'fr', 'es', 'it', 'nl'];

interface Stay {
  pmsGuestId: string;
  firstName: string;
  lastName: string;
  phone: string;
  email: string;
  language: string;
  nationality: string;
  adults: number;
  children: number;
  roomNumber: string;
  checkInDate: string;
  checkOutDate: string;
}

const day = (d: number): string => new Date(Date.UTC(2026, 10, 1 + d)).toISOString().slice(0, 10);
let serial = 0;
function newStay(room: string, d: number): Stay {
  const first = pick(FIRST);
  const last = pick(LAST);
  const nights = 1 + Math.floor(random() * 5);
  serial++;
  return {
    pmsGuestId: `PMS-${100000 + serial}`,
    firstName: first,
    lastName: last,
    phone: `+49${Math.floor(1e9 + random() * 9e9)}`,
    email: `${first.toLowerCase()}.${last.toLowerCase()}${serial}@example.org`.normalize('NFKD').replace(/[^\x20-\x7e]/g, ''),
    language: pick(LANG),
    nationality: pick(LANG).toUpperCase(),
    adults: 1 + Math.floor(random() * 2),
    children: random() < 0.2 ? 1 : 0,
    roomNumber: room,
    checkInDate: day(d),
    checkOutDate: day(d + nights),
  };
}

/** Every request of the model days, in time order. */
function traffic(): LoggedRequest[] {
  const rooms = Array.from({ length: ROOMS }, (_, i) => `${1 + Math.floor(i / 30)}${String(i % 30).padStart(2, '0')}`);
  const inHouse = new Map<string, Stay>();
  for (const r of rooms) if (random() < 0.9) inHouse.set(r, { ...newStay(r, -Math.floor(random() * 3)), checkOutDate: day(1 + Math.floor(random() * 3)) });
  const out: LoggedRequest[] = [];
  const row = (at: number, p: string, requestBody: string, responseBody: string): LoggedRequest => {
    const id = `req_${(out.length + 1).toString(36).padStart(8, '0')}${Math.floor(random() * 1e8).toString(36)}`;
    const req = capBody(requestBody);
    const res = capBody(responseBody.replace('"__ID__"', JSON.stringify(id)));
    return {
      id,
      at: new Date(Date.UTC(2026, 10, 1) + at).toISOString(),
      hotelId: 'hotel_bench',
      slug: 'bench',
      keyId: 'key_bench',
      mode: 'live',
      method: 'POST',
      path: `/api/pms/v1/bench/guests${p}`,
      statusCode: 200,
      requestBody: req,
      responseBody: res,
      requestBytes: Buffer.byteLength(requestBody),
      responseBytes: Buffer.byteLength(res),
      clientIp: '203.0.113.10',
      userAgent: 'OperaCloud-Connector/4.2',
      durationMs: 12.5,
      idempotencyKey: `idem-${id}`,
      pathBytes: null,
      userAgentBytes: null,
      idempotencyKeyBytes: null,
    };
  };
  const MIN = 60_000;
  for (let d = 0; d < DAYS; d++) {
    // Departures 07:00-11:00, arrivals 14:00-22:00, into the rooms left free.
    const events: Array<{ at: number; kind: 'in' | 'out'; room: string }> = [];
    for (const [room, s] of inHouse) if (s.checkOutDate <= day(d)) events.push({ at: d * 1440 * MIN + (420 + random() * 240) * MIN, kind: 'out', room });
    const leaving = new Set(events.map((e) => e.room));
    for (const room of rooms)
      if ((!inHouse.has(room) || leaving.has(room)) && random() < 0.9) events.push({ at: d * 1440 * MIN + (840 + random() * 480) * MIN, kind: 'in', room });
    events.sort((a, b) => a.at - b.at);
    let next = 0;
    for (let m = 0; m < 1440; m += 5) {
      const at = d * 1440 * MIN + m * MIN;
      for (; next < events.length && (events[next]?.at ?? Infinity) < at; next++) {
        const e = events[next];
        if (!e) continue;
        if (e.kind === 'out') {
          const s = inHouse.get(e.room);
          if (!s) continue;
          inHouse.delete(e.room);
          out.push(
            row(
              e.at,
              '/checkout',
              JSON.stringify({ pmsGuestId: s.pmsGuestId }),
              JSON.stringify({ guestId: `guest_${s.pmsGuestId}`, status: 'checked_out', requestId: '__ID__' }),
            ),
          );
        } else if (!inHouse.has(e.room)) {
          const s = newStay(e.room, d);
          inHouse.set(e.room, s);
          out.push(row(e.at, '/checkin', JSON.stringify(s), JSON.stringify({ guestId: `guest_${s.pmsGuestId}`, ...s, status: 'active', requestId: '__ID__' })));
        }
      }
      const roster = [...inHouse.values()].sort((a, b) => a.roomNumber.localeCompare(b.roomNumber));
      out.push(
        row(
          at,
          '/sync',
          JSON.stringify({ syncMode: 'full', guests: roster }),
          JSON.stringify({ created: 0, updated: 0, checkedOut: 0, unchanged: roster.length, requestId: '__ID__' }),
        ),
      );
    }
  }
  return out;
}

interface Storage {
  handle: DatabaseHandle;
  bytes(): Promise<number>;
  cleanup(): Promise<void>;
}

async function openStorage(engine: 'sqlite' | 'postgres', name: string): Promise<Storage> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `innsync-bench-${name}-`));
  if (engine === 'sqlite') {
    const handle = openDatabase({ databaseUrl: null, dataDir });
    await migrateToLatest(handle.db);
    return {
      handle,
      async bytes() {
        await sql`pragma wal_checkpoint(TRUNCATE)`.execute(handle.db);
        const [pages, free, size] = await Promise.all(
          ['page_count', 'freelist_count', 'page_size'].map(async (p) =>
            Number(Object.values((await sql.raw(`pragma ${p}`).execute(handle.db)).rows[0] ?? {})[0]),
          ),
        );
        return ((pages ?? 0) - (free ?? 0)) * (size ?? 0);
      },
      async cleanup() {
        await handle.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const url = await createDatabase(pgAdminUrl, `bench_${name}`);
  const handle = openDatabase({ databaseUrl: url, dataDir });
  await migrateToLatest(handle.db);
  return {
    handle,
    async bytes() {
      await sql`vacuum analyze`.execute(handle.db);
      const { rows } = await sql<{ n: string }>`select coalesce(sum(pg_total_relation_size(c.oid)), 0) as n from pg_class c
        where c.relkind = 'r' and (c.relname in ('request_log', 'request_log_bodies') or c.relname ~ '^request_log_[0-9]{8}$')`.execute(handle.db);
      return Number(rows[0]?.n ?? 0);
    },
    async cleanup() {
      await handle.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function insertOldForm(handle: DatabaseHandle, rows: LoggedRequest[]): Promise<void> {
  // PostgreSQL keeps the log by the day: the days of the model's traffic (src/db/partitions.ts).
  await ensureDaysOf(
    handle.db,
    'request_log',
    rows.map((r) => r.at),
  );
  for (const r of rows) {
    await sql`insert into request_log (id, created_at, hotel_id, slug, api_key_id, key_mode, method, path, status_code, request_body, response_body,
      request_bytes, response_bytes, client_ip, user_agent, duration_ms, idempotency_key)
      values (${r.id}, ${r.at}, ${r.hotelId}, ${r.slug}, ${r.keyId}, ${r.mode}, ${r.method}, ${r.path}, ${r.statusCode}, ${r.requestBody}, ${r.responseBody},
      ${r.requestBytes}, ${r.responseBytes}, ${r.clientIp}, ${r.userAgent}, ${r.durationMs}, ${r.idempotencyKey})`.execute(handle.db);
  }
}

async function measure(engine: 'sqlite' | 'postgres', rows: LoggedRequest[]): Promise<void> {
  const old = await openStorage(engine, 'old');
  const neu = await openStorage(engine, 'new');
  try {
    // The layout before 0016: the bodies as text in each row.
    await sql`alter table request_log add column request_body text`.execute(old.handle.db);
    await sql`alter table request_log add column response_body text`.execute(old.handle.db);
    const [old0, new0] = [await old.bytes(), await neu.bytes()];
    const t0 = performance.now();
    await insertOldForm(old.handle, rows);
    const t1 = performance.now();
    for (const r of rows) await insertLoggedRequests(neu.handle.db, [r]);
    const t2 = performance.now();
    const oldBytes = (await old.bytes()) - old0;
    const newBytes = (await neu.bytes()) - new0;
    const { rows: counts } =
      engine === 'postgres'
        ? await sql<{
            bodies: string;
            guests: string;
          }>`select count(*) as bodies, coalesce(sum(cardinality(guest_keys)), 0) as guests from request_log_bodies`.execute(neu.handle.db)
        : await sql<{
            bodies: string;
            guests: string;
          }>`select (select count(*) from request_log_bodies) as bodies, (select count(*) from request_log_guest_keys) as guests`.execute(neu.handle.db);
    const perDay = (n: number): string => `${(n / DAYS / 1024 / 1024).toFixed(2)} MiB`;
    if (engine === 'postgres') {
      // Each table with its TOAST (no indexes), each index alone: the parts add up to the total.
      // The day partitions of request_log and their indexes are summed.
      const parts = await sql<{ relname: string; n: string }>`select
          regexp_replace(c.relname, '^request_log_[0-9]{8}', 'request_log (days)') as relname,
          sum(case when c.relkind = 'i' then pg_relation_size(c.oid) else pg_table_size(c.oid) end) as n
        from pg_class c
        where c.relkind in ('r', 'i') and (c.relname like 'request_log%')
        group by 1 order by 2 desc`.execute(neu.handle.db);
      console.log(
        `  new, by relation (MiB per hotel-day): ${parts.rows.map((r) => `${r.relname} ${(Number(r.n) / DAYS / 1024 / 1024).toFixed(3)}`).join(', ')}`,
      );
      const { rows: keyBytes } = await sql<{ n: string }>`select coalesce(sum(pg_column_size(guest_keys)), 0) as n from request_log_bodies`.execute(
        neu.handle.db,
      );
      console.log(`  of request_log_bodies, the guest_keys column: ${(Number(keyBytes[0]?.n ?? 0) / DAYS / 1024 / 1024).toFixed(3)} MiB per hotel-day`);
    } else {
      const parts = await sql<{
        name: string;
        n: number;
      }>`select name, sum(pgsize) as n from dbstat where name like 'request_log%' group by name order by 2 desc`.execute(neu.handle.db);
      console.log(
        `  new, by table and index (MiB per hotel-day): ${parts.rows.map((r) => `${r.name} ${(Number(r.n) / DAYS / 1024 / 1024).toFixed(3)}`).join(', ')}`,
      );
    }
    console.log(`[${engine}] ${ROOMS} rooms, ${DAYS} days: ${rows.length} rows (${(rows.length / DAYS).toFixed(0)} a day)`);
    console.log(`  old (bodies as text in each row): ${perDay(oldBytes)} per hotel-day; written in ${((t1 - t0) / 1000).toFixed(1)} s`);
    console.log(
      `  new (bodies once per hotel, brotli; guest keys): ${perDay(newBytes)} per hotel-day; ${counts[0]?.bodies} bodies, ${counts[0]?.guests} guest keys; written in ${((t2 - t1) / 1000).toFixed(1)} s`,
    );
    console.log(`  new / old: ${(newBytes / oldBytes).toFixed(3)} (1/${(oldBytes / newBytes).toFixed(1)})`);
  } finally {
    await old.cleanup();
    await neu.cleanup();
  }
}

const rows = traffic();
const bodyBytes = rows.reduce((n, r) => n + Buffer.byteLength(r.requestBody ?? '') + Buffer.byteLength(r.responseBody ?? ''), 0);
console.log(`model: ${ROOMS} rooms, ${DAYS} days, ${rows.length} requests; body text ${(bodyBytes / DAYS / 1024 / 1024).toFixed(2)} MiB per hotel-day`);
await measure('sqlite', rows);
let stopCluster = (): void => undefined;
try {
  if (process.env.DATABASE_URL) pgAdminUrl = process.env.DATABASE_URL;
  else {
    const cluster = await startPostgresCluster();
    pgAdminUrl = cluster.adminUrl;
    stopCluster = () => cluster.stop();
  }
} catch (err) {
  console.log(`postgres: skipped (no DATABASE_URL, and no throwaway cluster could be started: ${err instanceof Error ? err.message : String(err)})`);
}
try {
  if (pgAdminUrl) await measure('postgres', rows);
} finally {
  stopCluster();
}
