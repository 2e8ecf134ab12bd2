/**
 * Erasure and export at the scale of a fleet's request log: the time to erase one guest
 * and to export one guest, with a request log of BENCH_ERASURE_SMALL rows (1,000) and of
 * BENCH_ERASURE_LARGE rows (1,000,000), on SQLite and PostgreSQL, and the ratio large ÷
 * small (the target: about 1, erasure and export read only the rows that name the guest,
 * through the request log's guest index).
 *
 *   npm run bench:erasure
 *
 * For each size and engine: the real server (SQLite in a temporary DATA_DIR; PostgreSQL in
 * a throwaway cluster, a database per size) with one hotel of the targets; the target
 * guests are checked in and out through the HTTPS API (so their own rows are the
 * service's). Then the request log is filled to its size by prepared statements (SQLite:
 * better-sqlite3 on the database file; PostgreSQL: batched `insert … select from unnest`)
 * with bodies stored and indexed as the service stores them (addressed by bodyAddress,
 * brotli-compressed, at quality 2 for speed: BENCH_ERASURE_BROTLI; indexed by guestRefs and
 * guestKey, each engine with its own hotel ids),
 * written in the same pass to every engine: 10 % of the rows in the targets' hotel, the rest in hotels of 1,000
 * rows each; 60 % check-ins, updates and check-outs (a distinct request body naming one
 * guest, a distinct answer naming its ids), 40 % full syncs (a roster of 20 guests shared by
 * a run of 10 syncs, a distinct answer each); created_at within the last 3 days. In every
 * size each target is named by the same rows (its check-in and check-out, and the first
 * five rosters of its hotel). Then, timed one at a time: BENCH_ERASURE_REPS erasures and
 * exports of distinct targets through the dashboard's API (POST /dashboard/api/guests/:id/erase,
 * GET …/export, an admin's session), and BENCH_ERASURE_CLI_REPS of `innsync guest erase` and
 * `innsync guest export` (whole commands, Node.js start-up included; `innsync hotel list`
 * is timed beside them as the start-up's own cost). BENCH_ENGINES=sqlite,postgres.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { brotliCompressSync, constants as zlibConstants } from 'node:zlib';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { sqliteFile, type Engine } from '../src/db/database.js';
import { ensureDaysOf } from '../src/db/partitions.js';
import { createHotel, createStaffUser, issueKeyPair } from '../src/operations.js';
import { startSession, SESSION_COOKIE } from '../src/dashboard/session.js';
import { bodyAddress } from '../src/pms/request-log-body.js';
import { guestKey, guestRefs, type GuestRef } from '../src/pms/request-log-guests.js';
import { startServer, type RunningServer } from '../src/server.js';
import { startPostgresCluster, type PostgresCluster } from '../test/support/postgres-cluster.js';
import { innsync } from './lib/cli.js';
import { describe, intEnv } from './lib/stats.js';

const SIZES = [intEnv('BENCH_ERASURE_SMALL', 1_000), intEnv('BENCH_ERASURE_LARGE', 1_000_000)];
const REPS = intEnv('BENCH_ERASURE_REPS', 7);
const CLI_REPS = intEnv('BENCH_ERASURE_CLI_REPS', 3);
const ENGINES = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',').map((e) => e.trim()) as Engine[];
const HOTEL_ROWS = 1_000;
const ROSTER_GUESTS = 20;
const ROSTER_RUN = 10;
const TARGET_ROSTERS = 5;
const CHUNK = 5_000;
const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Brotli quality of the bodies the fill writes: the service writes 5 (pms/request-log-body.ts);
 * 2 compresses a check-in's body about 2.5x as fast (9 against 20-30 µs) into ~20 % more
 * bytes, and the service reads either.
 */
const FILL_QUALITY = intEnv('BENCH_ERASURE_BROTLI', 2);
const otherSlug = (i: number): string => `bench-h${i}`;
/** Rows of the targets' hotel: 10 %, and at least enough for its first rosters. */
const targetRows = (size: number): number => Math.min(size, Math.max(TARGET_ROSTERS * ROSTER_RUN * 3, Math.round(size * 0.1)));
const otherHotels = (size: number): number => Math.ceil((size - targetRows(size)) / HOTEL_ROWS);
const TARGET_SLUG = 'erasure-target';
const PASSWORD = 'bench-password-erasure';

interface Target {
  pmsGuestId: string;
  guestId: string;
  data: Record<string, unknown>;
}

interface Store {
  engine: Engine;
  dataDir: string;
  databaseUrl: string | null;
  server: RunningServer;
  agent: Agent;
  base: string;
  session: { token: string; csrfToken: string };
  targets: Target[];
  write: (chunk: Chunk) => Promise<void>;
  finish: () => Promise<void>;
  close: () => Promise<void>;
}

/** A batch of the log, its hotels by number (0: the targets' hotel; i + 1: the i-th other), which each store maps to its own ids. */
interface Chunk {
  /** id, created_at, hotel, slug, method, status_code, request_sha256, response_sha256, request_bytes, response_bytes, duration_ms, idempotency_key, path */
  rows: Array<[string, string, number, string, string, number, string | null, string | null, number | null, number | null, number, string | null, string]>;
  bodies: Array<{ hotel: number; sha256: string; bytes: number; data: Buffer; at: string }>;
  refs: Array<{ hotel: number; ref: GuestRef; sha256: string }>;
}

// ---------------------------------------------------------------- the data

/** A small deterministic generator (the same log in every run and on both engines). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const NAMES = ['Müller', 'Lovelace', 'Øster', 'Ñúñez', 'Smith', 'Papadopoulos', 'Żółć', 'Okafor', 'Nakamura', 'Dubois'];
const FIRST = ['Ada', 'Zoë', 'Jean', 'Kwame', 'Yuki', 'María', 'Lars', 'Priya'];

function guestData(hotel: string, n: number): Record<string, unknown> {
  return {
    pmsGuestId: `PMS-${hotel}-${n}`,
    lastName: `${NAMES[n % NAMES.length]}-${hotel}-${n}`,
    firstName: FIRST[n % FIRST.length],
    roomNumber: String(100 + (n % 700)),
    checkInDate: '2026-11-23',
    checkOutDate: '2026-11-26',
    email: `guest${n}.${hotel}@mail.example`,
    phone: `+4930${String(1_000_000 + n)}`,
    language: 'de',
    nationality: 'DE',
    adults: 2,
  };
}

/** Rows of one hotel's log, in order, `count` of them. */
function* hotelRows(
  slug: string,
  key: string,
  count: number,
  rand: () => number,
  targets: Target[],
): Generator<{
  method: string;
  path: string;
  request: string;
  response: string;
}> {
  let guest = 0;
  let roster = '';
  let rosterLeft = 0;
  let rosters = 0;
  for (let i = 0; i < count; i++) {
    const requestId = `req_b${key}${i.toString(36)}`;
    if (rand() < 0.6) {
      const n = Math.floor(guest / 3);
      const step = guest % 3;
      guest++;
      const g = guestData(slug, n);
      const guestId = `guest_${slug}_${n}`;
      if (step === 0)
        yield {
          method: 'POST',
          path: `/api/pms/v1/${slug}/guests/checkin`,
          request: JSON.stringify(g),
          response: JSON.stringify({ status: 'created', guestId, pmsGuestId: g.pmsGuestId, roomNumber: g.roomNumber, requestId }),
        };
      else if (step === 1)
        yield {
          method: 'POST',
          path: `/api/pms/v1/${slug}/guests/update`,
          request: JSON.stringify({ pmsGuestId: g.pmsGuestId, phone: `+4940${String(2_000_000 + n)}` }),
          response: JSON.stringify({
            status: 'updated',
            guestId,
            pmsGuestId: g.pmsGuestId,
            changes: { phone: { from: g.phone, to: `+4940${String(2_000_000 + n)}` } },
            requestId,
          }),
        };
      else
        yield {
          method: 'POST',
          path: `/api/pms/v1/${slug}/guests/checkout`,
          request: JSON.stringify({ pmsGuestId: g.pmsGuestId }),
          response: JSON.stringify({ status: 'checked_out', guestId, pmsGuestId: g.pmsGuestId, roomNumber: g.roomNumber, requestId }),
        };
    } else {
      if (rosterLeft === 0) {
        const latest = Math.floor(guest / 3);
        const list = Array.from({ length: ROSTER_GUESTS }, (_, k) => guestData(slug, latest + k));
        // The targets' hotel: its first rosters name every target too.
        const named = rosters < TARGET_ROSTERS ? [...targets.map((t) => t.data), ...list] : list;
        roster = JSON.stringify({ syncMode: 'full', guests: named });
        rosterLeft = ROSTER_RUN;
        rosters++;
      }
      rosterLeft--;
      yield {
        method: 'POST',
        path: `/api/pms/v1/${slug}/guests/sync`,
        request: roster,
        response: JSON.stringify({
          status: 'synced',
          summary: { received: ROSTER_GUESTS, checkedIn: 0, updated: 0, checkedOut: 0, unchanged: ROSTER_GUESTS, manualSkipped: 0 },
          details: { checkedIn: [], checkedOut: [], updated: [] },
          requestId,
        }),
      };
    }
  }
}

/** A body as request_log_bodies keeps it (pms/request-log-body.ts packBody), at the fill's brotli quality. */
function pack(text: string): { bytes: number; data: Buffer } {
  const raw = Buffer.from(text, 'utf8');
  const data = brotliCompressSync(raw, {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: FILL_QUALITY,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
    },
  });
  return { bytes: raw.length, data };
}

/** The whole log of `size` rows: 10 % in the targets' hotel, the rest in hotels of HOTEL_ROWS rows. */
function* logChunks(size: number, targets: Target[]): Generator<Chunk> {
  const rand = random(size);
  const start = Date.now() - 3 * DAY_MS;
  const step = (3 * DAY_MS - 60_000) / size;
  const plan: Array<{ hotel: number; slug: string; rows: number; targets: Target[] }> = [{ hotel: 0, slug: TARGET_SLUG, rows: targetRows(size), targets }];
  for (let left = size - (plan[0]?.rows ?? 0), i = 0; left > 0; left -= HOTEL_ROWS, i++)
    plan.push({ hotel: i + 1, slug: otherSlug(i), rows: Math.min(left, HOTEL_ROWS), targets: [] });
  let chunk: Chunk = { rows: [], bodies: [], refs: [] };
  const seen = new Set<string>();
  let r = 0;
  for (const h of plan) {
    for (const x of hotelRows(h.slug, `${size.toString(36)}_${h.slug}_`, h.rows, rand, h.targets)) {
      const at = new Date(start + r * step).toISOString();
      const shas: string[] = [];
      for (const text of [x.request, x.response]) {
        const sha256 = bodyAddress(text);
        shas.push(sha256);
        const key = `${h.hotel} ${sha256}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const packed = pack(text);
        chunk.bodies.push({ hotel: h.hotel, sha256, bytes: packed.bytes, data: packed.data, at });
        for (const g of guestRefs([text])) chunk.refs.push({ hotel: h.hotel, ref: g, sha256 });
      }
      chunk.rows.push([
        `req_bench_${size.toString(36)}_${r.toString(36)}`,
        at,
        h.hotel,
        h.slug,
        x.method,
        200,
        shas[0] ?? null,
        shas[1] ?? null,
        Buffer.byteLength(x.request),
        Buffer.byteLength(x.response),
        2 + (r % 40) / 10,
        `idem-${r}`,
        x.path,
      ]);
      r++;
      if (chunk.rows.length >= CHUNK) {
        yield chunk;
        chunk = { rows: [], bodies: [], refs: [] };
        // Roster bodies are shared by runs of rows within one hotel: forget the others' addresses.
        if (seen.size > 200_000) seen.clear();
      }
    }
  }
  if (chunk.rows.length > 0) yield chunk;
}

// ---------------------------------------------------------------- the stores

const ROW_COLUMNS =
  'id, created_at, hotel_id, slug, method, status_code, request_sha256, response_sha256, request_bytes, response_bytes, duration_ms, idempotency_key, path, client_ip, key_mode';

async function openStore(engine: Engine, size: number, cluster: PostgresCluster | null): Promise<Store> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `innsync-erasure-${engine}-`));
  let databaseUrl: string | null = null;
  if (engine === 'postgres') {
    if (!cluster) throw new Error('no PostgreSQL cluster');
    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    await admin.query(`create database erasure_${size}`);
    await admin.end();
    databaseUrl = cluster.adminUrl.replace(/\/postgres$/, `/erasure_${size}`);
  }
  const config = loadConfig({ PORT: '0', HTTP_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: databaseUrl ?? '', LOG_LEVEL: 'silent' });
  const server = await startServer(config, pino({ level: 'silent' }));
  const cert = fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
  const agent = new Agent({ connect: { ca: cert, servername: 'localhost' }, connections: 4 });
  const base = `https://127.0.0.1:${server.httpsPort}`;
  const db = server.database.db;
  const hotel = await createHotel(db, TARGET_SLUG, 'Erasure target');
  const user = await createStaffUser(db, TARGET_SLUG, 'admin@erasure.example', 'admin', PASSWORD);
  const session = await startSession(db, { id: user.userId, hotelId: hotel.id });
  // The other hotels of the fleet (1,000 rows each).
  const hotelIds = [hotel.id];
  for (let i = 0; i < otherHotels(size); i++) hotelIds.push((await createHotel(db, otherSlug(i), `Hotel ${i}`)).id);

  // The targets: checked in and out through the API (a fresh key pair every 25: 60 a minute per endpoint).
  const targets: Target[] = [];
  let key = '';
  for (let i = 0; i < 2 * (1 + REPS + CLI_REPS); i++) {
    if (i % 25 === 0) key = (await issueKeyPair(db, TARGET_SLUG, { maxActive: 1000 })).live;
    const data = { ...guestData('target', i), pmsGuestId: `TARGET-${i}`, roomNumber: `T${i}` };
    const post = async (p: string, body: unknown): Promise<Record<string, unknown>> => {
      const res = await request(`${base}/api/pms/v1/${TARGET_SLUG}/guests/${p}`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `${p}-${i}` },
        body: JSON.stringify(body),
      });
      const json = (await res.body.json()) as Record<string, unknown>;
      if (res.statusCode !== 200) throw new Error(`${p} answered ${res.statusCode}: ${JSON.stringify(json)}`);
      return json;
    };
    const inn = await post('checkin', data);
    await post('checkout', { pmsGuestId: data.pmsGuestId });
    targets.push({ pmsGuestId: data.pmsGuestId, guestId: String(inn.guestId), data });
  }

  let write: Store['write'];
  let finish: Store['finish'];
  if (engine === 'sqlite') {
    const sqlite = new SqliteDatabase(sqliteFile(dataDir));
    sqlite.pragma('busy_timeout = 30000');
    const row = sqlite.prepare(`insert into request_log (${ROW_COLUMNS}) values (${Array(15).fill('?').join(', ')})`);
    const body = sqlite.prepare('insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at) values (?, ?, ?, ?, ?) on conflict do nothing');
    const ref = sqlite.prepare('insert into request_log_guest_keys (key, hotel_id, sha256) values (?, ?, ?) on conflict do nothing');
    const tx = sqlite.transaction((c: Chunk) => {
      for (const b of c.bodies) body.run(hotelIds[b.hotel], b.sha256, b.bytes, b.data, b.at);
      for (const g of c.refs) {
        const hotelId = hotelIds[g.hotel] ?? '';
        ref.run(guestKey(hotelId, g.ref), hotelId, g.sha256);
      }
      for (const r of c.rows) row.run(r[0], r[1], hotelIds[r[2]], ...r.slice(3), '127.0.0.1', 'live');
    });
    write = (c) => {
      tx(c);
      return Promise.resolve();
    };
    finish = () => {
      sqlite.pragma('wal_checkpoint(TRUNCATE)');
      sqlite.close();
      return Promise.resolve();
    };
  } else {
    // The log is kept by the day (src/db/partitions.ts): the fill's days (the last 3) need their partitions.
    await ensureDaysOf(
      db,
      'request_log',
      Array.from({ length: 5 }, (_, i) => new Date(Date.now() - (4 - i) * DAY_MS).toISOString()),
    );
    const client = new pg.Client({ connectionString: databaseUrl ?? '' });
    await client.connect();
    write = async (c) => {
      await client.query('begin');
      // Each body with the keys of the guests it names (guest_keys), in one statement.
      await client.query(
        `insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at, guest_keys)
         select b.h, b.s, b.n, b.d, b.a, coalesce(k.keys, '{}')
         from unnest($1::text[], $2::text[], $3::int[], $4::bytea[], $5::text[]) as b(h, s, n, d, a)
         left join (select h, s, array_agg(distinct k) as keys from unnest($6::text[], $7::text[], $8::bigint[]) as t(h, s, k) group by h, s) as k
           on k.h = b.h and k.s = b.s
         on conflict do nothing`,
        [
          c.bodies.map((b) => hotelIds[b.hotel]),
          c.bodies.map((b) => b.sha256),
          c.bodies.map((b) => b.bytes),
          c.bodies.map((b) => b.data),
          c.bodies.map((b) => b.at),
          c.refs.map((g) => hotelIds[g.hotel]),
          c.refs.map((g) => g.sha256),
          c.refs.map((g) => String(guestKey(hotelIds[g.hotel] ?? '', g.ref))),
        ],
      );
      const col = (i: number) => c.rows.map((r) => (i === 2 ? hotelIds[r[2]] : r[i]));
      await client.query(
        `insert into request_log (${ROW_COLUMNS})
         select *, '127.0.0.1', 'live' from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::text[], $8::text[],
           $9::int[], $10::int[], $11::real[], $12::text[], $13::text[])`,
        Array.from({ length: 13 }, (_, i) => col(i)),
      );
      await client.query('commit');
    };
    finish = async () => {
      // Current statistics, as autovacuum's analyze keeps them on a live database.
      await client.query('analyze');
      await client.end();
    };
  }
  return {
    engine,
    dataDir,
    databaseUrl,
    server,
    agent,
    base,
    session,
    targets,
    write,
    finish,
    async close() {
      await agent.close();
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- the measurements

interface Figures {
  rows: number;
  bodies: number;
  guestEntries: number;
  fillSeconds: number;
  erase: number[];
  exportMs: number[];
  cliErase: number[];
  cliExport: number[];
  cliStart: number[];
  erasedRows: number[];
  exportedRows: number[];
}

async function dashboard(s: Store, method: 'GET' | 'POST', p: string): Promise<{ ms: number; body: Record<string, unknown> }> {
  const started = performance.now();
  const res = await request(`${s.base}/dashboard/api${p}`, {
    method,
    dispatcher: s.agent,
    headers: {
      cookie: `${SESSION_COOKIE}=${s.session.token}`,
      'x-csrf-token': s.session.csrfToken,
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    body: method === 'POST' ? '{}' : undefined,
  });
  const text = await res.body.text();
  const ms = performance.now() - started;
  if (res.statusCode !== 200) throw new Error(`${method} ${p} answered ${res.statusCode}: ${text.slice(0, 300)}`);
  return { ms, body: JSON.parse(text) as Record<string, unknown> };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

async function count(s: Store, table: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)}`.execute(s.server.database.db);
  return Number(rows[0]?.n);
}

/** The guest keys held (PostgreSQL: in the bodies' guest_keys; SQLite: request_log_guest_keys). */
async function guestKeyCount(s: Store): Promise<number> {
  if (s.engine === 'sqlite') return count(s, 'request_log_guest_keys');
  const { rows } = await sql<{ n: number | string }>`select coalesce(sum(cardinality(guest_keys)), 0) as n from request_log_bodies`.execute(
    s.server.database.db,
  );
  return Number(rows[0]?.n);
}

async function measure(s: Store, fillSeconds: number): Promise<Figures> {
  const f: Figures = {
    rows: await count(s, 'request_log'),
    bodies: await count(s, 'request_log_bodies'),
    guestEntries: await guestKeyCount(s),
    fillSeconds,
    erase: [],
    exportMs: [],
    cliErase: [],
    cliExport: [],
    cliStart: [],
    erasedRows: [],
    exportedRows: [],
  };
  const t = [...s.targets];
  const next = (): Target => {
    const x = t.shift();
    if (!x) throw new Error('out of targets');
    return x;
  };
  // One export and one erasure first, not counted: the server's first request of each kind (JIT, caches).
  await dashboard(s, 'GET', `/guests/${next().guestId}/export`);
  await dashboard(s, 'POST', `/guests/${next().guestId}/erase`);
  for (let i = 0; i < REPS; i++) {
    const e = await dashboard(s, 'GET', `/guests/${next().guestId}/export`);
    f.exportMs.push(e.ms);
    f.exportedRows.push((e.body.requestLog as unknown[]).length);
    const r = await dashboard(s, 'POST', `/guests/${next().guestId}/erase`);
    f.erase.push(r.ms);
    f.erasedRows.push(Number((r.body.erased as { requestLog: number }).requestLog));
  }
  const storage = { dataDir: s.dataDir, databaseUrl: s.databaseUrl };
  for (let i = 0; i < CLI_REPS; i++) {
    f.cliStart.push((await timed(() => innsync(storage, ['hotel', 'list']))).ms);
    const ex = next();
    f.cliExport.push((await timed(() => innsync(storage, ['guest', 'export', TARGET_SLUG, '--pms-guest-id', ex.pmsGuestId]))).ms);
    const er = next();
    f.cliErase.push((await timed(() => innsync(storage, ['guest', 'erase', TARGET_SLUG, '--pms-guest-id', er.pmsGuestId]))).ms);
  }
  return f;
}

/** One size on every engine: the log is made once and written to each engine's store in the same pass. */
async function runSize(size: number, cluster: PostgresCluster | null): Promise<Map<Engine, Figures>> {
  const stores: Store[] = [];
  const out = new Map<Engine, Figures>();
  try {
    for (const engine of ENGINES) stores.push(await openStore(engine, size, cluster));
    const started = performance.now();
    let written = 0;
    const spent = new Map<string, number>([['making the bodies', 0]]);
    const add = (what: string, since: number): number => {
      const t = performance.now();
      spent.set(what, (spent.get(what) ?? 0) + t - since);
      return t;
    };
    const chunks = logChunks(size, stores[0]?.targets ?? []);
    const pending = new Map<Engine, Promise<void>>();
    for (let t = performance.now(), next = chunks.next(); !next.done; next = chunks.next()) {
      const chunk = next.value;
      t = add('making the bodies', t);
      // PostgreSQL ingests a chunk in its own process while this one makes the next (and writes SQLite's).
      for (const s of stores) {
        await pending.get(s.engine);
        t = add(`waiting for ${s.engine}`, t);
        const w = s.write(chunk);
        if (s.engine === 'postgres') pending.set(s.engine, w);
        else await w;
        t = add(`writing ${s.engine}`, t);
      }
      written += chunk.rows.length;
      if (size >= 100_000 && written % 100_000 < CHUNK) process.stdout.write(`  ${size.toLocaleString('en')}: ${written.toLocaleString('en')} rows written\r`);
    }
    for (const w of pending.values()) await w;
    for (const s of stores) await s.finish();
    const fill = (performance.now() - started) / 1000;
    if (size >= 100_000) process.stdout.write('\n');
    console.log(`  fill of ${size.toLocaleString('en')} rows: ${[...spent].map(([what, t]) => `${what} ${(t / 1000).toFixed(1)} s`).join(', ')}`);
    for (const s of stores) out.set(s.engine, await measure(s, fill));
    return out;
  } finally {
    for (const s of stores) await s.close();
  }
}

const ms = (values: number[]): string => {
  const d = describe(values);
  return `median ${d.median.toFixed(1)} ms, max ${d.max.toFixed(1)} ms`;
};
const ratio = (a: number[], b: number[]): string => (describe(a).median / describe(b).median).toFixed(2);

async function main(): Promise<void> {
  console.log(`erasure at scale: sizes ${SIZES.map((s) => s.toLocaleString('en')).join(' and ')} rows; ${REPS} dashboard and ${CLI_REPS} CLI runs each`);
  console.log(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (${os.cpus().length} CPUs)`,
  );
  const cluster = ENGINES.includes('postgres') ? await startPostgresCluster() : null;
  try {
    if (cluster) console.log(`PostgreSQL: ${cluster.description}`);
    const bySize: Array<Map<Engine, Figures>> = [];
    for (const size of SIZES) {
      const results = await runSize(size, cluster);
      bySize.push(results);
      for (const [engine, f] of results) {
        console.log(
          `${engine}, ${f.rows.toLocaleString('en')} request-log rows (${f.bodies.toLocaleString('en')} bodies, ${f.guestEntries.toLocaleString('en')} guest keys; all engines filled in ${f.fillSeconds.toFixed(1)} s; load ${os
            .loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')})`,
        );
        console.log(`  erase (dashboard API):  ${ms(f.erase)}; rows named per erased guest: ${[...new Set(f.erasedRows)].join(', ')}`);
        console.log(`  export (dashboard API): ${ms(f.exportMs)}; rows per exported guest: ${[...new Set(f.exportedRows)].join(', ')}`);
        console.log(`  innsync guest erase:    ${ms(f.cliErase)}`);
        console.log(`  innsync guest export:   ${ms(f.cliExport)}`);
        console.log(`  innsync hotel list (start-up): ${ms(f.cliStart)}`);
      }
    }
    for (const engine of ENGINES) {
      const small = bySize[0]?.get(engine);
      const large = bySize[bySize.length - 1]?.get(engine);
      if (small && large && bySize.length > 1)
        console.log(
          `${engine}: ratio ${large.rows.toLocaleString('en')} ÷ ${small.rows.toLocaleString('en')} rows (medians): erase ×${ratio(large.erase, small.erase)}, export ×${ratio(
            large.exportMs,
            small.exportMs,
          )}; innsync guest erase ×${ratio(large.cliErase, small.cliErase)}, export ×${ratio(large.cliExport, small.cliExport)}`,
        );
    }
  } finally {
    cluster?.stop();
  }
  console.log(
    `load average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`,
  );
}

await main();
