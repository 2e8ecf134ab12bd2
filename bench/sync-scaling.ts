/**
 * Sync scaling benchmark: LIVE full-list syncs (POST /guests/sync) of 1,000 to 20,000
 * guests with 10 % of the list changed, on SQLite and PostgreSQL, beside the floor: a
 * plain bulk insert of the same number of guest rows into the same database.
 *
 *   npm run bench:sync                               # SQLite, and PostgreSQL when a
 *                                                    # throwaway cluster can be started
 *   DATABASE_URL=postgres://… npm run bench:sync     # PostgreSQL at that URL instead
 *
 * Knobs (environment): BENCH_ENGINES (sqlite,postgres), BENCH_SIZES
 * (1000,2000,5000,20000), BENCH_ROUNDS measured syncs per size (5), BENCH_WARMUP
 * unmeasured syncs before them (1), BENCH_SEED (1), BENCH_JSON=<file> writes the results
 * as JSON, BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each server process, PG_BIN
 * (/usr/lib/postgresql/15/bin).
 *
 * Per engine and size: a fresh server (startServer in a child process, so client and
 * server do not share one event loop; they do share the machine's CPUs) on a fresh
 * DATA_DIR or a fresh PostgreSQL database, one hotel. An initial sync loads the roster
 * of N guests. Then, after BENCH_WARMUP unmeasured rounds, each measured round sends the
 * current list with 10 % of it changed: 2.5 % departures (dropped from the list), 2.5 %
 * arrivals (new pmsGuestIds, in rooms freed by departures and moves, then empty ones),
 * 2.5 % room moves (about 40 % of them as swapped pairs, some into rooms freed by
 * departures in the same sync, the rest into empty rooms) and 2.5 % field updates (1-3
 * fields each, explicit nulls included). Every sync uses a fresh key pair (the sync limit
 * is 10/hour per key) and its own Idempotency-Key.
 *
 * Server time is `duration_ms` of the request's row in `request_log` (Fastify's
 * reply.elapsedTime: from the request's arrival through body receipt, parsing,
 * validation, the transaction and sending the response); the client round trip is
 * printed beside it. The floor is a Kysely multi-row insert of N rows with the guests
 * table's columns, in chunks of 1,500 rows (as the sync inserts guests), in one
 * transaction, into a scratch table made from the guests table's own columns
 * (`create table … as select * from guests where 1 = 0`: no index at all), with rows built
 * by the repository's own mapping, timed around the transaction in the server process. A floor
 * round follows every measured sync, so both see the same machine load.
 *
 * Each round is verified: the summary counts and the details lists are exactly the
 * changes made, and afterwards the hotel's active roster equals the list sent (every
 * field of every guest; one active room assignment per guest).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import type { Db } from '../src/db/database.js';
import { sql, type Insertable } from 'kysely';
import type { GuestTable } from '../src/db/schema.js';
import { newGuestRow, toGuestData } from '../src/db/repositories/guest.repository.js';
import type { GuestData } from '../src/domain/guest.js';
import { canonicalJson } from '../src/pms/idempotency.js';
import { newId, randomId } from '../src/domain/ids.js';
import { createHotel, issueKeyPair } from '../src/operations.js';
import { startServer } from '../src/server.js';
import { createDatabase, startPostgresCluster } from '../test/support/postgres-cluster.js';

// ---------------------------------------------------------------- settings

type EngineName = 'sqlite' | 'postgres';

function intEnv(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer ${min}-${max}, got "${raw}"`);
  return n;
}

function listEnv(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Share of the list changed in each measured sync. */
const CHANGE_FRACTION = 0.1;
/** Targets (the issue): 20,000 guests per sync, and growth 20,000 / 2,000. */
const TARGET_MS: Record<EngineName, number> = { sqlite: 500, postgres: 1000 };
const TARGET_SIZE = 20_000;
const GROWTH_FROM = 2_000;
const GROWTH_LIMIT = 12;
/** As insertManyPmsGuests (roster-batch.repository.ts): 1,500 rows per statement. */
const FLOOR_ROWS_PER_STATEMENT = 1500;
const FLOOR_TABLE = 'bench_floor_guests';

// ---------------------------------------------------------------- the guest list

/** A listed guest with all 12 fields of the check-in set (a full PMS export). */
type BenchGuest = GuestData & { pmsGuestId: string };

/** mulberry32: a small seeded PRNG, so every run sends the same lists. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LAST_NAMES = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Noether',
  'Curie',
  'Meitner',
  'Hamilton',
  'Liskov',
  'Knuth',
  'Dijkstra',
  'Goldberg',
  'Shannon',
  'Babbage',
  'Franklin',
  'Johnson',
  'Berners-Lee',
];
const FIRST_NAMES = [
  'Ada',
  'Grace',
  'Alan',
  'Emmy',
  'Marie',
  'Lise',
  'Margaret',
  'Barbara',
  'Donald',
  'Edsger',
  'Adele',
  'Claude',
  'Charles',
  'Rosalind',
  'Katherine',
  'Tim',
];
const LANGUAGES = ['en', 'de', 'fr', 'it', 'es', 'nl', 'pt', 'ja'];
const COUNTRIES = ['DE', 'US', 'FR', 'IT', 'ES', 'NL', 'GB', 'CH', 'AT', 'JP'];

function pick<T>(rng: () => number, items: readonly T[]): T {
  const v = items[Math.floor(rng() * items.length)];
  if (v === undefined) throw new Error('pick from an empty list');
  return v;
}

function addDays(iso: string, days: number): string {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** The PMS side: the current list and the counters for new guests and rooms. */
class Pms {
  list: BenchGuest[] = [];
  private nextGuest = 1;
  private nextRoom = 1;
  private nextContact = 1;
  private round = 0;

  constructor(private readonly rng: () => number) {}

  newRoom(): string {
    return String(100_000 + this.nextRoom++);
  }

  newGuest(room: string): BenchGuest {
    const rng = this.rng;
    const n = this.nextGuest++;
    const first = pick(rng, FIRST_NAMES);
    const last = pick(rng, LAST_NAMES);
    const checkIn = addDays('2026-11-10', Math.floor(rng() * 14));
    return {
      pmsGuestId: `PMS-${String(n).padStart(7, '0')}`,
      lastName: last,
      firstName: rng() < 0.9 ? first : null,
      roomNumber: room,
      checkInDate: checkIn,
      checkOutDate: addDays(checkIn, 1 + Math.floor(rng() * 14)),
      phone: rng() < 0.7 ? `+4930${String(1_000_000 + n)}` : null,
      email: rng() < 0.6 ? `${first}.${last}.${n}@example.com`.toLowerCase() : null,
      language: pick(rng, LANGUAGES),
      nationality: pick(rng, COUNTRIES),
      adults: 1 + Math.floor(rng() * 3),
      children: rng() < 0.8 ? 0 : 1 + Math.floor(rng() * 2),
    };
  }

  initial(size: number): void {
    this.list = Array.from({ length: size }, () => this.newGuest(this.newRoom()));
  }

  /** Random distinct indices of the current list, via a partial Fisher-Yates shuffle. */
  private sample(count: number): number[] {
    const idx = this.list.map((_, i) => i);
    for (let i = 0; i < count; i++) {
      const j = i + Math.floor(this.rng() * (idx.length - i));
      const a = idx[i] ?? 0;
      idx[i] = idx[j] ?? 0;
      idx[j] = a;
    }
    return idx.slice(0, count);
  }

  private updateFields(g: BenchGuest): BenchGuest {
    const rng = this.rng;
    const next = { ...g };
    const fields = ['lastName', 'firstName', 'email', 'phone', 'checkOutDate', 'adults', 'language', 'nationality'] as const;
    const count = 1 + Math.floor(rng() * 3);
    const chosen = new Set<(typeof fields)[number]>();
    while (chosen.size < count) chosen.add(pick(rng, fields));
    for (const f of chosen) {
      switch (f) {
        case 'lastName':
          next.lastName = `${g.lastName}-${this.round}`;
          break;
        case 'firstName':
          next.firstName = g.firstName === null ? pick(rng, FIRST_NAMES) : null; // explicit null clears
          break;
        case 'email':
          next.email = `changed.${this.nextContact++}@example.org`;
          break;
        case 'phone':
          next.phone = `+4940${String(2_000_000 + this.nextContact++)}`;
          break;
        case 'checkOutDate':
          next.checkOutDate = addDays(g.checkOutDate, 1);
          break;
        case 'adults':
          next.adults = ((g.adults ?? 1) % 4) + 1;
          break;
        case 'language':
          next.language = LANGUAGES.find((l) => l !== g.language) ?? 'en';
          break;
        case 'nationality':
          next.nationality = COUNTRIES.find((c) => c !== g.nationality) ?? 'DE';
          break;
      }
    }
    return next;
  }

  /**
   * The next list: 10 % of the current one changed, as departures, arrivals, room moves
   * (about 40 % of them as swaps, then moves into rooms freed by departures, the rest
   * into empty rooms) and field updates. Returns what the sync must report.
   */
  change(): Expected {
    this.round++;
    const n = this.list.length;
    const changes = Math.round(n * CHANGE_FRACTION);
    const departures = Math.round(changes / 4);
    const arrivals = departures;
    const moves = Math.round(changes / 4);
    const updates = changes - departures - arrivals - moves;
    const chosen = this.sample(departures + moves + updates);
    const departIdx = chosen.slice(0, departures);
    const moveIdx = chosen.slice(departures, departures + moves);
    const updateIdx = chosen.slice(departures + moves);

    const next = [...this.list];
    const freed: string[] = departIdx.map((i) => this.list[i]?.roomNumber ?? '');
    const expected: Expected = { checkedIn: new Set(), checkedOut: new Set(), updated: new Set(), roomOf: new Map(), swaps: 0, intoFreedRooms: 0 };
    for (const i of departIdx) expected.checkedOut.add(this.list[i]?.pmsGuestId ?? '');

    // Swaps: pairs of movers exchange rooms.
    const swapPairs = Math.floor((moves * 0.4) / 2);
    for (let p = 0; p < swapPairs; p++) {
      const i = moveIdx[2 * p] ?? 0;
      const j = moveIdx[2 * p + 1] ?? 0;
      const a = next[i];
      const b = next[j];
      if (!a || !b) continue;
      next[i] = { ...a, roomNumber: b.roomNumber };
      next[j] = { ...b, roomNumber: a.roomNumber };
      expected.swaps++;
    }
    // Other moves: first into rooms freed by departures, then into empty rooms. Their
    // old rooms go to arrivals.
    const vacated: string[] = [];
    for (const i of moveIdx.slice(2 * swapPairs)) {
      const g = next[i];
      if (!g) continue;
      const room =
        freed.length > 0 && expected.intoFreedRooms < Math.ceil(moves / 4) ? (expected.intoFreedRooms++, freed.shift() ?? this.newRoom()) : this.newRoom();
      vacated.push(g.roomNumber);
      next[i] = { ...g, roomNumber: room };
    }
    for (const i of moveIdx) expected.updated.add(next[i]?.pmsGuestId ?? '');
    for (const i of updateIdx) {
      const g = next[i];
      if (!g) continue;
      next[i] = this.updateFields(g);
      expected.updated.add(g.pmsGuestId);
    }
    const departing = new Set(departIdx);
    const kept = next.filter((_, i) => !departing.has(i));
    const spare = [...freed, ...vacated];
    for (let a = 0; a < arrivals; a++) {
      const g = this.newGuest(spare.shift() ?? this.newRoom());
      expected.checkedIn.add(g.pmsGuestId);
      kept.push(g);
    }
    this.list = kept;
    for (const g of kept) expected.roomOf.set(g.pmsGuestId, g.roomNumber);
    return expected;
  }
}

interface Expected {
  checkedIn: Set<string>;
  checkedOut: Set<string>;
  updated: Set<string>;
  /** pmsGuestId → room, for the whole new list. */
  roomOf: Map<string, string>;
  swaps: number;
  intoFreedRooms: number;
}

// ---------------------------------------------------------------- IPC

type ToChild =
  | { type: 'issueKey' }
  | { type: 'cpu' }
  | { type: 'serverTime'; requestId: string }
  | { type: 'roster' }
  | { type: 'floorRows'; guests: BenchGuest[] }
  | { type: 'floor' }
  | { type: 'stop' };

interface RosterSnapshot {
  /** Every active PMS guest, as the list shows it. */
  guests: BenchGuest[];
  receptionist: number;
  activeAssignments: number;
}

type FromChild =
  | { type: 'ready'; port: number; slug: string; engine: string }
  | { type: 'key'; live: string }
  | { type: 'cpu'; ms: number }
  | { type: 'serverTime'; ms: number }
  | { type: 'roster'; roster: RosterSnapshot }
  | { type: 'floorRows' }
  | { type: 'floor'; ms: number }
  | { type: 'stopped' }
  | { type: 'error'; message: string };

function send(msg: FromChild): void {
  process.send?.(msg);
}

// ---------------------------------------------------------------- child: the real server

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A new, empty table with the guests table's columns and no index: the floor's target (not timed). */
async function createFloorTable(db: Db): Promise<void> {
  await db.schema.dropTable(FLOOR_TABLE).ifExists().execute();
  await sql`create table ${sql.table(FLOOR_TABLE)} as select * from guests where 1 = 0`.execute(db);
}

async function runServer(dataDir: string, databaseUrl: string): Promise<void> {
  const config = loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  const server = await startServer(config, pino({ level: 'silent' }));
  const db = server.database.db;
  const floorDb = db.withTables<{ [FLOOR_TABLE]: GuestTable }>();
  const slug = `bench-${randomId(10)}`;
  const hotel = await createHotel(db, slug, 'Sync Benchmark Hotel');
  let floorRows: Insertable<GuestTable>[] = [];

  const handle = async (msg: ToChild): Promise<FromChild | null> => {
    switch (msg.type) {
      case 'issueKey':
        return { type: 'key', live: (await issueKeyPair(db, slug)).live };
      case 'cpu': {
        const u = process.cpuUsage();
        return { type: 'cpu', ms: (u.user + u.system) / 1000 };
      }
      case 'serverTime': {
        // The request log is written in batches (every 200 ms): wait for the row.
        const deadline = Date.now() + 30_000;
        for (;;) {
          const row = await db.selectFrom('request_log').select('duration_ms').where('id', '=', msg.requestId).executeTakeFirst();
          if (row) return { type: 'serverTime', ms: Number(row.duration_ms) };
          if (Date.now() > deadline) throw new Error(`request ${msg.requestId} never reached the request log`);
          await pause(25);
        }
      }
      case 'roster': {
        const rows = await db.selectFrom('guests').selectAll().where('hotel_id', '=', hotel.id).where('status', '=', 'active').execute();
        const assignments = await db
          .selectFrom('room_assignments')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('hotel_id', '=', hotel.id)
          .where('released_at', 'is', null)
          .executeTakeFirstOrThrow();
        return {
          type: 'roster',
          roster: {
            guests: rows.filter((r) => r.source === 'pms').map((r) => ({ pmsGuestId: r.pms_guest_id ?? '', ...toGuestData(r) })),
            receptionist: rows.filter((r) => r.source === 'receptionist').length,
            activeAssignments: Number(assignments.n),
          },
        };
      }
      case 'floorRows': {
        const now = new Date().toISOString();
        floorRows = msg.guests.map((g) => {
          const { pmsGuestId, ...data } = g;
          return newGuestRow({ id: newId('guest'), hotelId: hotel.id, source: 'pms', pmsGuestId, data, now });
        });
        return { type: 'floorRows' };
      }
      case 'floor': {
        await createFloorTable(db); // a new, empty table each round (not timed)
        const started = performance.now();
        await floorDb.transaction().execute(async (trx) => {
          for (let i = 0; i < floorRows.length; i += FLOOR_ROWS_PER_STATEMENT) {
            await trx
              .insertInto(FLOOR_TABLE)
              .values(floorRows.slice(i, i + FLOOR_ROWS_PER_STATEMENT))
              .execute();
          }
        });
        const ms = performance.now() - started;
        const count = await floorDb
          .selectFrom(FLOOR_TABLE)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow();
        if (Number(count.n) !== floorRows.length) throw new Error(`floor table holds ${String(count.n)} rows, expected ${floorRows.length}`);
        return { type: 'floor', ms };
      }
      case 'stop':
        await server.close();
        process.send?.({ type: 'stopped' } satisfies FromChild, undefined, {}, () => process.disconnect());
        return null;
    }
  };

  process.on('message', (raw) => {
    handle(raw as ToChild)
      .then((reply) => {
        if (reply) send(reply);
      })
      .catch((err: unknown) => send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }));
  });
  send({ type: 'ready', port: server.httpsPort, slug, engine: server.database.engine });
}

// ---------------------------------------------------------------- parent: storage

interface PgServer {
  adminUrl: string;
  origin: string;
  stop(): void;
}

/** A throwaway cluster (test/support/postgres-cluster.ts). */
async function startPgCluster(): Promise<PgServer> {
  const cluster = await startPostgresCluster();
  return { adminUrl: cluster.adminUrl, origin: `throwaway cluster (${cluster.description})`, stop: () => cluster.stop() };
}

interface Storage {
  dataDir: string;
  databaseUrl: string;
  note: string;
  drop(): Promise<void>;
}

/** A fresh DATA_DIR, and for PostgreSQL a fresh database (or the given one if creating fails). */
async function freshStorage(engine: EngineName, pgAdminUrl: string | null): Promise<Storage> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-bench-'));
  const rmDir = () => fs.rmSync(dataDir, { recursive: true, force: true });
  if (engine === 'sqlite' || pgAdminUrl === null) return { dataDir, databaseUrl: '', note: 'fresh DATA_DIR', drop: async () => rmDir() };
  let databaseUrl: string;
  try {
    databaseUrl = await createDatabase(pgAdminUrl, 'innsync_bench');
  } catch (err) {
    console.log(`  (could not create a database, using DATABASE_URL as is: ${err instanceof Error ? err.message : String(err)})`);
    return { dataDir, databaseUrl: pgAdminUrl, note: 'the given database', drop: async () => rmDir() };
  }
  const name = new URL(databaseUrl).pathname.slice(1);
  return {
    dataDir,
    databaseUrl,
    note: 'fresh database',
    drop: async () => {
      rmDir();
      const c = new pg.Client({ connectionString: pgAdminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

// ---------------------------------------------------------------- parent: the driver

class Child {
  private readonly waiting: Array<{ resolve: (msg: FromChild) => void; reject: (err: Error) => void }> = [];

  constructor(readonly proc: ChildProcess) {
    proc.on('message', (raw) => {
      const msg = raw as FromChild;
      const w = this.waiting.shift();
      if (msg.type === 'error') w?.reject(new Error(`server process: ${msg.message}`));
      else w?.resolve(msg);
    });
    proc.on('exit', (code) => {
      for (const w of this.waiting.splice(0)) w.reject(new Error(`server process exited with code ${String(code)}`));
    });
  }

  next(): Promise<FromChild> {
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  async request<T extends FromChild['type']>(msg: ToChild, expect: T): Promise<Extract<FromChild, { type: T }>> {
    const reply = this.next();
    this.proc.send(msg);
    const r = await reply;
    if (r.type !== expect) throw new Error(`expected ${expect} from the server process, got ${r.type}`);
    return r as Extract<FromChild, { type: T }>;
  }
}

interface Target {
  child: Child;
  port: number;
  slug: string;
  engine: string;
  agent: https.Agent;
  ca: string;
}

async function startTarget(storage: Storage, cpuProfDir: string | null): Promise<Target> {
  const execArgv = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : [];
  const proc = fork(fileURLToPath(import.meta.url), ['--server', storage.dataDir, storage.databaseUrl], {
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const child = new Child(proc);
  const ready = await child.next();
  if (ready.type !== 'ready') throw new Error('the server process did not start');
  const ca = fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8');
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  return { child, port: ready.port, slug: ready.slug, engine: ready.engine, agent, ca };
}

interface SyncAnswer {
  status: number;
  text: string;
  clientMs: number;
}

function postSync(t: Target, key: string, idempotencyKey: string, body: string): Promise<SyncAnswer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = https.request(
      {
        host: '127.0.0.1',
        port: t.port,
        path: `/api/pms/v1/${t.slug}/guests/sync`,
        method: 'POST',
        agent: t.agent,
        ca: t.ca,
        servername: 'localhost',
        minVersion: 'TLSv1.2',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), clientMs: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface SyncBody {
  status: string;
  summary: Record<string, number>;
  details: {
    checkedIn: Array<{ pmsGuestId: string; roomNumber: string }>;
    checkedOut: Array<{ pmsGuestId: string; roomNumber: string }>;
    updated: Array<{ pmsGuestId: string; roomNumber: string; changes: Record<string, { from: unknown; to: unknown }> }>;
  };
  requestId: string;
}

interface Timed {
  serverMs: number;
  clientMs: number;
  /** CPU time (user + system) the server process spent while the request was in flight. */
  serverCpuMs: number;
  requestBytes: number;
  responseBytes: number;
}

/** One sync of the PMS's current list with a fresh key; verified against `expected`. */
async function sync(t: Target, pms: Pms, expected: Expected, received: number, label: string): Promise<Timed> {
  const { live } = await t.child.request({ type: 'issueKey' }, 'key');
  const body = JSON.stringify({ syncMode: 'full', guests: pms.list });
  const cpuBefore = await t.child.request({ type: 'cpu' }, 'cpu');
  const answer = await postSync(t, live, `bench-sync-${label}-${randomId(8)}`, body);
  const cpuAfter = await t.child.request({ type: 'cpu' }, 'cpu');
  if (answer.status !== 200) throw new Error(`${label}: sync answered ${answer.status}: ${answer.text.slice(0, 500)}`);
  const res = JSON.parse(answer.text) as SyncBody;
  const problems: string[] = [];
  const unchanged = received - expected.checkedIn.size - expected.updated.size;
  const wantSummary = {
    received,
    checkedIn: expected.checkedIn.size,
    updated: expected.updated.size,
    checkedOut: expected.checkedOut.size,
    unchanged,
    manualSkipped: 0,
  };
  for (const [k, v] of Object.entries(wantSummary)) if (res.summary[k] !== v) problems.push(`summary.${k} ${String(res.summary[k])}, expected ${v}`);
  const sameSet = (name: string, got: string[], want: Set<string>) => {
    if (got.length !== want.size || got.some((id) => !want.has(id)))
      problems.push(`details.${name} lists ${got.length} guests, expected exactly the ${want.size} changed`);
  };
  sameSet(
    'checkedIn',
    res.details.checkedIn.map((g) => g.pmsGuestId),
    expected.checkedIn,
  );
  sameSet(
    'checkedOut',
    res.details.checkedOut.map((g) => g.pmsGuestId),
    expected.checkedOut,
  );
  sameSet(
    'updated',
    res.details.updated.map((g) => g.pmsGuestId),
    expected.updated,
  );
  for (const u of res.details.updated)
    if (u.roomNumber !== expected.roomOf.get(u.pmsGuestId)) problems.push(`details.updated ${u.pmsGuestId} in room ${u.roomNumber}`);

  // The roster afterwards is exactly the list sent, every field.
  const { roster } = await t.child.request({ type: 'roster' }, 'roster');
  const sent = new Map(pms.list.map((g) => [g.pmsGuestId, canonicalJson(g)]));
  if (roster.guests.length !== pms.list.length) problems.push(`${roster.guests.length} active guests, expected ${pms.list.length}`);
  if (roster.activeAssignments !== pms.list.length) problems.push(`${roster.activeAssignments} active room assignments, expected ${pms.list.length}`);
  let wrong = 0;
  for (const g of roster.guests) if (sent.get(g.pmsGuestId) !== canonicalJson(g) || expected.roomOf.get(g.pmsGuestId) !== g.roomNumber) wrong++;
  if (wrong > 0) problems.push(`${wrong} active guests differ from the list`);
  if (problems.length > 0) throw new Error(`${label}: INVALID: ${problems.join('; ')}`);

  const { ms } = await t.child.request({ type: 'serverTime', requestId: res.requestId }, 'serverTime');
  return {
    serverMs: ms,
    clientMs: answer.clientMs,
    serverCpuMs: cpuAfter.ms - cpuBefore.ms,
    requestBytes: Buffer.byteLength(body),
    responseBytes: Buffer.byteLength(answer.text),
  };
}

interface SizeResult {
  engine: EngineName;
  size: number;
  storage: string;
  initial: Timed;
  syncServerMs: number[];
  syncClientMs: number[];
  syncCpuMs: number[];
  floorMs: number[];
  requestBytes: number;
  responseBytes: number;
  changesPerSync: { checkedIn: number; checkedOut: number; updated: number; swaps: number; intoFreedRooms: number };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] ?? NaN) : ((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2;
};
const fmt = (n: number, digits = 0): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const spread = (xs: number[]): string => `${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}`;

async function benchSize(
  engine: EngineName,
  size: number,
  rounds: number,
  warmup: number,
  seed: number,
  pgAdminUrl: string | null,
  cpuProfDir: string | null,
): Promise<SizeResult> {
  const storage = await freshStorage(engine, pgAdminUrl);
  const t = await startTarget(storage, cpuProfDir);
  try {
    const pms = new Pms(prng(seed * 1_000_003 + size));
    pms.initial(size);
    const all = new Set(pms.list.map((g) => g.pmsGuestId));
    const initialExpected: Expected = {
      checkedIn: all,
      checkedOut: new Set(),
      updated: new Set(),
      roomOf: new Map(pms.list.map((g) => [g.pmsGuestId, g.roomNumber])),
      swaps: 0,
      intoFreedRooms: 0,
    };
    const initial = await sync(t, pms, initialExpected, size, `${engine}-${size}-initial`);
    await t.child.request({ type: 'floorRows', guests: pms.list }, 'floorRows');

    const result: SizeResult = {
      engine,
      size,
      storage: storage.note,
      initial,
      syncServerMs: [],
      syncClientMs: [],
      syncCpuMs: [],
      floorMs: [],
      requestBytes: 0,
      responseBytes: 0,
      changesPerSync: { checkedIn: 0, checkedOut: 0, updated: 0, swaps: 0, intoFreedRooms: 0 },
    };
    // Warm-up: syncs like the measured ones (verified, not counted), so the update,
    // move and check-out paths are compiled by V8 before the first measured round.
    for (let w = 1; w <= warmup; w++) {
      await sync(t, pms, pms.change(), pms.list.length, `${engine}-${size}-warmup${w}`);
      await t.child.request({ type: 'floor' }, 'floor');
    }
    for (let r = 1; r <= rounds; r++) {
      const expected = pms.change();
      const m = await sync(t, pms, expected, pms.list.length, `${engine}-${size}-round${r}`);
      const floor = await t.child.request({ type: 'floor' }, 'floor');
      result.syncServerMs.push(m.serverMs);
      result.syncClientMs.push(m.clientMs);
      result.syncCpuMs.push(m.serverCpuMs);
      result.floorMs.push(floor.ms);
      result.requestBytes = m.requestBytes;
      result.responseBytes = m.responseBytes;
      result.changesPerSync = {
        checkedIn: expected.checkedIn.size,
        checkedOut: expected.checkedOut.size,
        updated: expected.updated.size,
        swaps: expected.swaps,
        intoFreedRooms: expected.intoFreedRooms,
      };
      console.log(
        `  ${engine} ${fmt(size)} round ${r}: sync ${fmt(m.serverMs, 1)} ms server (${fmt(m.serverCpuMs, 0)} ms CPU), ${fmt(m.clientMs, 1)} ms client; floor ${fmt(floor.ms, 1)} ms ` +
          `(in ${expected.checkedIn.size}, out ${expected.checkedOut.size}, updated ${expected.updated.size} incl. ${expected.swaps} swapped pairs and ${expected.intoFreedRooms} moves into freed rooms; verified)`,
      );
    }
    return result;
  } finally {
    await t.child.request({ type: 'stop' }, 'stopped').catch(() => undefined);
    t.agent.destroy();
    await storage.drop();
  }
}

function row(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
}

function report(results: SizeResult[], engine: EngineName, rounds: number): { lines: string[]; targets: Array<{ name: string; met: boolean }> } {
  const mine = results.filter((r) => r.engine === engine);
  const lines: string[] = [];
  const widths = [8, 17, 13, 10, 14, 10, 13, 13, 8];
  lines.push(row(['guests', 'sync ms (server)', 'range', 'client ms', 'server CPU ms', 'floor ms', 'range', 'sync ÷ floor', 'initial'], widths));
  for (const r of mine) {
    const s = median(r.syncServerMs);
    const f = median(r.floorMs);
    lines.push(
      row(
        [
          fmt(r.size),
          fmt(s, 1),
          spread(r.syncServerMs),
          fmt(median(r.syncClientMs), 1),
          fmt(median(r.syncCpuMs), 0),
          fmt(f, 1),
          spread(r.floorMs),
          `${fmt(s / f, 2)}x`,
          fmt(r.initial.serverMs, 0),
        ],
        widths,
      ),
    );
  }
  lines.push(
    `(medians of ${rounds} measured syncs per size; range = min-max. server CPU: user + system time of the server process while the`,
    ' sync was in flight, its own work independent of machine load (PostgreSQL works in other processes). initial: the first',
    ' sync, which loads the whole roster, server ms)',
  );
  const targets: Array<{ name: string; met: boolean }> = [];
  const big = mine.find((r) => r.size === TARGET_SIZE);
  const small = mine.find((r) => r.size === GROWTH_FROM);
  if (big) {
    const s = median(big.syncServerMs);
    const met = s < TARGET_MS[engine];
    targets.push({ name: `${engine}: ${fmt(TARGET_SIZE)} guests in ${fmt(s, 1)} ms (target < ${fmt(TARGET_MS[engine])} ms)`, met });
  }
  if (big && small) {
    const g = median(big.syncServerMs) / median(small.syncServerMs);
    targets.push({
      name: `${engine}: growth ${fmt(TARGET_SIZE)} / ${fmt(GROWTH_FROM)} = ${fmt(g, 2)}x (target <= ${GROWTH_LIMIT}x; the list is ${TARGET_SIZE / GROWTH_FROM}x longer)`,
      met: g <= GROWTH_LIMIT,
    });
  }
  const notes: string[] = [];
  if (big && small) {
    const cpu = median(big.syncCpuMs) / median(small.syncCpuMs);
    const best = Math.min(...big.syncServerMs) / Math.min(...small.syncServerMs);
    notes.push(`         (the same growth by fastest sync: ${fmt(best, 2)}x; by server CPU: ${fmt(cpu, 2)}x)`);
  }
  for (const t of targets) lines.push(`${t.met ? 'MET    ' : 'NOT MET'}  ${t.name}`);
  lines.push(...notes);
  return { lines, targets };
}

async function main(): Promise<void> {
  const engines = listEnv('BENCH_ENGINES', 'sqlite,postgres');
  for (const e of engines) if (e !== 'sqlite' && e !== 'postgres') throw new Error(`BENCH_ENGINES: unknown engine ${e}`);
  const sizes = listEnv('BENCH_SIZES', '1000,2000,5000,20000').map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 10 || n > 20_000) throw new Error(`BENCH_SIZES: ${s} is not an integer 10-20000`);
    return n;
  });
  const rounds = intEnv('BENCH_ROUNDS', 5, 1, 50);
  const warmup = intEnv('BENCH_WARMUP', 1, 0, 10);
  const seed = intEnv('BENCH_SEED', 1, 0);
  const cpuProfDir = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;
  const jsonOut = process.env.BENCH_JSON ? path.resolve(process.env.BENCH_JSON) : null;

  console.log(`innsync sync scaling benchmark, ${new Date().toISOString()}`);
  console.log(
    `node ${process.version}, ${os.cpus().length} CPUs (client and server share them), load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(
        ' ',
      )}; sizes ${sizes.map((s) => fmt(s)).join(', ')}; ${warmup} warm-up and ${rounds} measured syncs per size, ${CHANGE_FRACTION * 100} % of the list changed in each`,
  );

  const results: SizeResult[] = [];
  const summary: string[] = [];
  const allTargets: Array<{ name: string; met: boolean }> = [];
  for (const engine of engines as EngineName[]) {
    let pgServer: PgServer | null = null;
    let adminUrl: string | null = null;
    if (engine === 'postgres') {
      if (process.env.DATABASE_URL) {
        adminUrl = process.env.DATABASE_URL;
        pgServer = { adminUrl, origin: 'DATABASE_URL', stop: () => undefined };
      } else {
        try {
          pgServer = await startPgCluster();
          adminUrl = pgServer.adminUrl;
        } catch (err) {
          const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
          console.log(`\npostgres: skipped (no DATABASE_URL, and no throwaway cluster could be started: ${why})`);
          summary.push('', 'postgres: skipped (no cluster)');
          continue;
        }
      }
    }
    console.log(`\n${engine}${pgServer ? `: ${pgServer.origin}` : ': SQLite (WAL, synchronous=NORMAL)'}`);
    try {
      for (const size of sizes) results.push(await benchSize(engine, size, rounds, warmup, seed, adminUrl, cpuProfDir));
    } finally {
      pgServer?.stop();
    }
    const r = report(results, engine, rounds);
    const first = results.find((x) => x.engine === engine);
    summary.push('', `${engine} (server time per sync; floor = bulk insert of the same number of guest rows)`, ...r.lines);
    if (first) summary.push(`request body per guest about ${fmt(first.requestBytes / first.size)} bytes`);
    allTargets.push(...r.targets);
  }

  console.log(summary.join('\n'));
  if (jsonOut) {
    fs.writeFileSync(
      jsonOut,
      JSON.stringify({ at: new Date().toISOString(), node: process.version, cpus: os.cpus().length, rounds, results, targets: allTargets }, null, 2),
    );
    console.log(`\nresults written to ${jsonOut}`);
  }
  if (cpuProfDir) console.log(`CPU profiles of the server processes written to ${cpuProfDir}`);
  const missed = allTargets.filter((t) => !t.met);
  if (allTargets.length === 0) console.log(`\nno target evaluated (they need the sizes ${fmt(GROWTH_FROM)} and ${fmt(TARGET_SIZE)})`);
  else
    console.log(missed.length === 0 ? `\nevery target evaluated was met (${allTargets.length})` : `\n${missed.length} of ${allTargets.length} targets not met`);
}

const role = process.argv[2];
const entry = role === '--server' ? runServer(process.argv[3] ?? '', process.argv[4] ?? '') : main();
entry.catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
