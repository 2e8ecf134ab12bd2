/**
 * The fleet benchmark: docs/scale.md's load model (N hotels of 40-800 rooms, their PMS
 * check-ins, updates, check-outs and 5-minutely full-list syncs, open dashboards, webhook
 * receivers) played against real servers, in compressed time, with the request log on and
 * then off in the same run; extrapolated to 10,000 and 50,000 hotels for 90 days.
 *
 *   npm run bench:fleet                              # PostgreSQL, 2 instances, 500 hotels
 *   FLEET_ENGINE=sqlite npm run bench:fleet          # SQLite, 1 instance
 *   FLEET_HOTELS=300 FLEET_SPEEDUP=10 FLEET_DURATION=90 npm run bench:fleet
 *
 * Knobs (environment): FLEET_ENGINE postgres|sqlite (postgres), FLEET_HOTELS (500),
 * FLEET_SPEEDUP model seconds per wall second (4), FLEET_DURATION wall seconds per phase
 * (60), FLEET_WARMUP wall seconds at the start of each phase not counted in the latencies
 * (5), FLEET_PHASES the request-log settings played one after another (on,off),
 * FLEET_SYNC_MINUTES (5), FLEET_SEED (1), FLEET_INSTANCES (2 on PostgreSQL, 1 on SQLite).
 *
 * Processes: the servers (`node bin/innsync.js serve`, HTTPS with the certificate the
 * service generated in its DATA_DIR, which this client trusts), a throwaway PostgreSQL
 * cluster (test/support/postgres-cluster.ts), and this one: every hotel's PMS (one ordered
 * queue per hotel, as a PMS's outbound queue is), the staff's dashboards (logged in, reading
 * /dashboard/api/events) and one webhook receiver (plain HTTP on loopback, so the servers
 * run with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true). The first hotel is set up with the
 * `innsync` command; the rest with the same functions the command calls (src/operations.ts,
 * src/webhooks/endpoints.ts), as a command per hotel takes ~1 s on this machine.
 *
 * Exit 1 when any request failed other than the model's own 409s, or a sync found the
 * roster other than the PMS's list.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import type { Engine } from '../src/db/database.js';
import { createHotel, createStaffUser, issueKeyPair } from '../src/operations.js';
import { startSession } from '../src/dashboard/session.js';
import { addEndpoint } from '../src/webhooks/endpoints.js';
import { startPostgresCluster, type PostgresCluster } from '../test/support/postgres-cluster.js';
import { SseParser } from '../test/support/sse.js';
import { Instance, sleep } from '../test/support/drill-instance.js';
import { createStorage, type DrillStorage } from '../test/support/drill-storage.js';
import { innsync } from './lib/cli.js';
import { addDays } from './lib/full-house.js';
import { DEFAULT_MODEL, hotelDay, hotelSizes, keyPairsNeeded, KEY_LIMITS, seeded, type FleetModel } from './lib/fleet-model.js';
import { cpuSeconds } from './lib/proc.js';
import { intEnv, quantile } from './lib/stats.js';

// ---------------------------------------------------------------- settings

const ENGINE: Engine = (process.env.FLEET_ENGINE ?? 'postgres') === 'sqlite' ? 'sqlite' : 'postgres';
if (process.env.FLEET_ENGINE && !['sqlite', 'postgres'].includes(process.env.FLEET_ENGINE)) throw new Error('FLEET_ENGINE must be "postgres" or "sqlite"');
const HOTELS = intEnv('FLEET_HOTELS', 500);
const SPEEDUP = intEnv('FLEET_SPEEDUP', 4);
const DURATION_S = intEnv('FLEET_DURATION', 60);
const WARMUP_S = Number(process.env.FLEET_WARMUP ?? 5);
const INSTANCES = intEnv('FLEET_INSTANCES', ENGINE === 'postgres' ? 2 : 1);
const SEED = intEnv('FLEET_SEED', 1);
const PHASES = (process.env.FLEET_PHASES ?? 'on,off').split(',').map((s) => s.trim().toLowerCase());
if (PHASES.some((p) => p !== 'on' && p !== 'off')) throw new Error('FLEET_PHASES must list "on" and "off", e.g. on,off');
const MODEL: FleetModel = { ...DEFAULT_MODEL, syncEveryMinutes: intEnv('FLEET_SYNC_MINUTES', DEFAULT_MODEL.syncEveryMinutes) };

/** Targets (docs/scale.md). */
const TARGET = { eventP99Ms: 50, medianSyncP99Ms: 250, liveLagP99Ms: 1000, pgCores: 16, diskBytes: 2e12 };
/** Days each table's rows are kept (README.md: retention; guests and activity beyond 90 days are at most anonymised). */
const RETENTION_DAYS: Record<string, number> = { idempotency_records: 1, webhook_events: 30, webhook_deliveries: 30, dashboard_sessions: 1 };
const HORIZON_DAYS = 90;
/** Dashboards that log in over HTTPS; the rest get their sessions in the database. */
const HTTP_LOGINS = 20;

// ---------------------------------------------------------------- the fleet (the PMS's side)

interface Stay {
  pmsGuestId: string;
  firstName: string;
  lastName: string;
  roomNumber: string;
  checkInDate: string;
  checkOutDate: string;
  adults: number;
  children: number;
  language: string;
}

interface Hotel {
  index: number;
  slug: string;
  id: string;
  rooms: string[];
  keys: string[];
  keyTurn: Record<string, number>;
  /** In house, by room, as the PMS knows it (changed only on a 200). */
  inHouse: Map<string, Stay>;
  /** The PMS's ordered outbound queue: one request at a time. */
  queue: Promise<void>;
  made: number;
  dashboard: DashboardStream | null;
  webhook: boolean;
}

const TODAY = new Date().toISOString().slice(0, 10);
const NAMES = ['Berg', 'Costa', 'Dubois', 'Eriksen', 'Fischer', 'García', 'Hansen', 'Ito', 'Jensen', 'Kowalski', 'Müller', 'Novak', 'Okafor', 'Petrov'];

function newStay(h: Hotel, room: string, random: () => number): Stay {
  const n = h.made++;
  const nights = 1 + Math.floor(random() * 4);
  return {
    pmsGuestId: `G-${h.index}-${n}`,
    firstName: 'Guest',
    lastName: `${NAMES[n % NAMES.length] ?? 'Berg'} ${n}`,
    roomNumber: room,
    checkInDate: TODAY,
    checkOutDate: addDays(TODAY, nights),
    adults: 1 + (n % 2),
    children: n % 5 === 0 ? 1 : 0,
    language: n % 3 === 0 ? 'de' : 'en',
  };
}

function roomNumbers(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${Math.floor(i / 50) + 1}${String((i % 50) + 1).padStart(2, '0')}`);
}

// ---------------------------------------------------------------- measurements

type EndpointName = 'checkin' | 'update' | 'checkout' | 'sync';

interface PhaseStats {
  setting: string;
  requests: Record<EndpointName, number>;
  latencies: Record<EndpointName, number[]>;
  /** Sync latencies of hotels within ±20 % of the model's median size. */
  medianSync: number[];
  largeSync: number[];
  expected409: number;
  errors: Map<string, number>;
  liveLags: number[];
  liveMissed: number;
  /** Roster events without a list of changes ("re-read the roster"). */
  rereads: number;
  webhookLags: number[];
  webhookMissed: number;
  serverCpuS: number;
  pgCpuS: number;
  walBytes: number;
  tableBytes: Map<string, number>;
  wallS: number;
  loadAvg: number[];
}

function emptyPhase(setting: string): PhaseStats {
  return {
    setting,
    requests: { checkin: 0, update: 0, checkout: 0, sync: 0 },
    latencies: { checkin: [], update: [], checkout: [], sync: [] },
    medianSync: [],
    largeSync: [],
    expected409: 0,
    errors: new Map(),
    liveLags: [],
    liveMissed: 0,
    rereads: 0,
    webhookLags: [],
    webhookMissed: 0,
    serverCpuS: 0,
    pgCpuS: 0,
    walBytes: 0,
    tableBytes: new Map(),
    wallS: 0,
    loadAvg: [],
  };
}

let phase: PhaseStats = emptyPhase('setup');
/** The first sync summary that disagreed with the PMS's list, printed with the errors. */
let driftSample = '';
let measureFrom = Number.POSITIVE_INFINITY;
/** Answers of changes the dashboards and webhooks should show: guestId / hotel+pmsGuestId → answered at (ms). */
const awaitingLive = new Map<string, number>();
const awaitingHook = new Map<string, number>();

function countError(what: string): void {
  phase.errors.set(what, (phase.errors.get(what) ?? 0) + 1);
}

// ---------------------------------------------------------------- HTTPS client of the PMS

let certificate = '';
let agent: Agent;
let instances: Instance[] = [];
let turn = 0;

/** A load balancer's round robin over the instances. */
function baseUrl(): string {
  const i = instances[turn++ % instances.length];
  if (!i) throw new Error('no instance');
  return i.baseUrl;
}

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read by member
  body: any;
  ms: number;
  at: number;
}

async function post(h: Hotel, endpoint: EndpointName, body: unknown, idempotencyKey: string = randomUUID()): Promise<Answer> {
  const i = h.keyTurn[endpoint] ?? 0;
  h.keyTurn[endpoint] = i + 1;
  const key = h.keys[i % h.keys.length] ?? '';
  const started = performance.now();
  try {
    const res = await request(`${baseUrl()}/api/pms/v1/${h.slug}/guests/${endpoint}`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify(body),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    const ms = performance.now() - started;
    return { status: res.statusCode, body: text ? (JSON.parse(text) as unknown) : null, ms, at: Date.now() };
  } catch (err) {
    return { status: 0, body: { code: (err as { code?: string }).code ?? String(err) }, ms: performance.now() - started, at: Date.now() };
  }
}

function record(h: Hotel, endpoint: EndpointName, a: Answer, sentAt: number): void {
  phase.requests[endpoint] += 1;
  if (sentAt < measureFrom) return;
  phase.latencies[endpoint].push(a.ms);
  if (endpoint === 'sync') {
    const rooms = h.rooms.length;
    if (Math.abs(rooms - MODEL.medianRooms) <= MODEL.medianRooms * 0.2) phase.medianSync.push(a.ms);
    if (rooms >= 400) phase.largeSync.push(a.ms);
  }
}

function enqueue(h: Hotel, job: () => Promise<void>): void {
  h.queue = h.queue.then(job).catch((err: unknown) => countError(`driver: ${String(err)}`));
}

const random = seeded(SEED * 7919);

function pick<T>(items: T[]): T | undefined {
  return items[Math.floor(random() * items.length)];
}

/** Roster events seen at the dashboards: hotel/guestId → when (an event may come before the driver has read the 200). */
const seenLive = new Map<string, number>();

function expectLive(h: Hotel, guestId: unknown, at: number, sentAt: number): void {
  if (!h.dashboard || typeof guestId !== 'string') return;
  const k = `${h.index}/${guestId}`;
  const seen = seenLive.get(k);
  if (seen !== undefined && seen >= sentAt) {
    // The event came before this process had read the answer: no lag to speak of.
    if (at >= measureFrom) phase.liveLags.push(0);
    seenLive.delete(k);
  } else awaitingLive.set(k, at);
}

async function checkIn(h: Hotel): Promise<void> {
  const vacant = h.rooms.filter((r) => !h.inHouse.has(r));
  const room = pick(vacant);
  if (!room) return;
  const stay = newStay(h, room, random);
  const sentAt = Date.now();
  const a = await post(h, 'checkin', stay);
  record(h, 'checkin', a, sentAt);
  if (a.status !== 200) return countError(`checkin ${a.status} ${String(a.body?.code ?? '')}`);
  h.inHouse.set(room, stay);
  expectLive(h, a.body.guestId, a.at, sentAt);
  if (h.webhook) awaitingHook.set(`${h.slug}/${stay.pmsGuestId}`, a.at);
  if (random() < MODEL.duplicateCheckInShare) {
    // The PMS sends it again with a new Idempotency-Key (its answer was lost on its side).
    const again = await post(h, 'checkin', stay);
    record(h, 'checkin', again, Date.now());
    if (again.status === 409 && again.body?.code === 'GUEST_ALREADY_CHECKED_IN') phase.expected409 += 1;
    else countError(`duplicate checkin ${again.status} ${String(again.body?.code ?? '')}`);
  }
}

async function update(h: Hotel): Promise<void> {
  const stay = pick([...h.inHouse.values()]);
  if (!stay) return;
  const changed = { ...stay, children: stay.children === 0 ? 1 : 0 };
  const sentAt = Date.now();
  const a = await post(h, 'update', { pmsGuestId: stay.pmsGuestId, children: changed.children });
  record(h, 'update', a, sentAt);
  if (a.status !== 200) return countError(`update ${a.status} ${String(a.body?.code ?? '')}`);
  h.inHouse.set(stay.roomNumber, changed);
  expectLive(h, a.body.guestId, a.at, sentAt);
}

async function checkOut(h: Hotel): Promise<void> {
  const stay = pick([...h.inHouse.values()]);
  if (!stay) return;
  const sentAt = Date.now();
  const a = await post(h, 'checkout', { pmsGuestId: stay.pmsGuestId });
  record(h, 'checkout', a, sentAt);
  if (a.status !== 200) return countError(`checkout ${a.status} ${String(a.body?.code ?? '')}`);
  h.inHouse.delete(stay.roomNumber);
  expectLive(h, a.body.guestId, a.at, sentAt);
}

/** The full list; the service must find nothing to change (the PMS's queue is ordered, so its list is the roster). */
async function sync(h: Hotel, initial = false): Promise<void> {
  const guests = [...h.inHouse.values()];
  const sentAt = Date.now();
  let a = await post(h, 'sync', { syncMode: 'full', guests });
  // The go-live syncs come all at once (set-up, not the model): a 503 is sent again with its key, as its message asks.
  const key = randomUUID();
  for (let tries = 0; initial && a.status === 503 && tries < 10; tries++) {
    await sleep(1000 + random() * 2000);
    a = await post(h, 'sync', { syncMode: 'full', guests }, key);
  }
  if (!initial) record(h, 'sync', a, sentAt);
  if (a.status !== 200) return countError(`sync ${a.status} ${String(a.body?.code ?? '')}`);
  const s = a.body.summary as { checkedIn: number; updated: number; checkedOut: number };
  const expected = initial ? { checkedIn: guests.length, updated: 0, checkedOut: 0 } : { checkedIn: 0, updated: 0, checkedOut: 0 };
  if (s.checkedIn !== expected.checkedIn || s.updated !== expected.updated || s.checkedOut !== expected.checkedOut) {
    countError('sync found a roster other than the PMS list');
    if (!driftSample) driftSample = JSON.stringify(s);
  }
}

// ---------------------------------------------------------------- dashboards and webhooks

/** A staff member's open dashboard: the live event stream, read as the browser does (reconnects like EventSource). */
class DashboardStream {
  private req: http.ClientRequest | null = null;
  private closed = false;
  ready = 0;

  constructor(
    private readonly hotel: Hotel,
    private readonly cookie: string,
  ) {
    this.open();
  }

  private open(): void {
    if (this.closed) return;
    let retried = false;
    let responded = false;
    // However the stream ends (the server's end, a reset, a restart), once.
    const retry = (): void => {
      if (retried) return;
      retried = true;
      this.req = null;
      if (!this.closed) setTimeout(() => this.open(), 300);
    };
    const req = https.get(
      `${baseUrl()}/dashboard/api/events`,
      { ca: certificate, servername: 'localhost', headers: { cookie: `__Host-innsync_session=${this.cookie}` } },
      (res) => {
        responded = true;
        if (res.statusCode !== 200) {
          res.resume();
          countError(`dashboard events ${String(res.statusCode)}`);
          return retry();
        }
        const parser = new SseParser();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = Date.now();
          for (const m of parser.push(chunk)) {
            if (m.event === 'ready') this.ready += 1;
            if (m.event !== 'roster') continue;
            const changes = (JSON.parse(m.data) as { changes: Array<{ guestId: string }> }).changes;
            // No changes listed: "re-read the roster" (too many, or some missed); the board
            // re-reads and so shows every change answered before it.
            const keys =
              changes.length > 0
                ? changes.map((c) => `${this.hotel.index}/${c.guestId}`)
                : [...awaitingLive.entries()].filter(([k, t]) => k.startsWith(`${this.hotel.index}/`) && t <= at).map(([k]) => k);
            if (changes.length === 0) phase.rereads += 1;
            for (const k of keys) {
              const answered = awaitingLive.get(k);
              if (answered === undefined) {
                seenLive.set(k, at);
                continue;
              }
              awaitingLive.delete(k);
              if (answered >= measureFrom) phase.liveLags.push(at - answered);
            }
          }
        });
        res.on('end', retry);
        res.on('close', retry);
        res.on('error', retry);
      },
    );
    req.on('error', retry);
    req.on('close', () => {
      if (!responded) retry();
    });
    this.req = req;
  }

  close(): void {
    this.closed = true;
    this.req?.destroy();
  }
}

async function logIn(email: string, password: string): Promise<string> {
  const res = await request(`${baseUrl()}/dashboard/api/login`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`login of ${email}: ${res.statusCode} ${text}`);
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  for (const line of lines) {
    const m = /^__Host-innsync_session=([^;]+)/.exec(line);
    if (m?.[1]) return m[1];
  }
  throw new Error(`login of ${email}: no session cookie`);
}

function webhookReceiver(): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      try {
        const e = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type: string; hotel: { slug: string }; data: { guest?: { pmsGuestId?: string } } };
        const k = `${e.hotel.slug}/${e.data.guest?.pmsGuestId ?? ''}`;
        const answered = e.type === 'guest.checked_in' ? awaitingHook.get(k) : undefined;
        if (answered !== undefined) {
          awaitingHook.delete(k);
          if (answered >= measureFrom) phase.webhookLags.push(at - answered);
        }
      } catch {
        countError('webhook body not JSON');
      }
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` })),
  );
}

// ---------------------------------------------------------------- CPU and storage readings

/** CPU seconds of the cluster: the postmaster with its reaped children (cutime, cstime) and its live ones. */
function postgresCpuSeconds(postmasterPid: number): number {
  const fields = (pid: number): string[] | null => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    } catch {
      return null;
    }
  };
  const own = fields(postmasterPid);
  if (!own) return Number.NaN;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = fields(Number(entry));
    if (f && Number(f[1]) === postmasterPid) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks / 100;
}

async function tableBytes(storage: DrillStorage): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (storage.engine === 'postgres') {
    const r = await sql<{ name: string; bytes: string }>`
      select coalesce(p.relname, c.relname) as name, sum(pg_total_relation_size(c.oid)) as bytes from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      left join pg_inherits i on i.inhrelid = c.oid left join pg_class p on p.oid = i.inhparent
      where n.nspname = current_schema() and c.relkind = 'r' group by 1`.execute(storage.db);
    // A partitioned table (the request log by the day) counts as the sum of its days.
    for (const row of r.rows) out.set(row.name, Number(row.bytes));
  } else {
    const r = await sql<{ name: string; bytes: number }>`
      select coalesce(m.tbl_name, d.name) as name, sum(d.pgsize) as bytes from dbstat d
      left join sqlite_master m on m.name = d.name group by 1`.execute(storage.db);
    for (const row of r.rows) out.set(row.name, Number(row.bytes));
  }
  return out;
}

async function walPosition(storage: DrillStorage): Promise<string | null> {
  if (storage.engine !== 'postgres') return null;
  return (await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(storage.db)).rows[0]?.lsn ?? null;
}

async function walBytesSince(storage: DrillStorage, from: string | null): Promise<number> {
  if (!from) return Number.NaN;
  const r = await sql<{ bytes: string }>`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${from}::pg_lsn)::text as bytes`.execute(storage.db);
  return Number(r.rows[0]?.bytes ?? Number.NaN);
}

// ---------------------------------------------------------------- cleanup

let cluster: PostgresCluster | null = null;
let storage: DrillStorage | null = null;
let receiver: http.Server | null = null;
const dashboards: DashboardStream[] = [];
let cleaned = false;

async function cleanUp(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  for (const d of dashboards) d.close();
  receiver?.close();
  await Promise.all(instances.map((i) => i.stop().catch(() => undefined)));
  await agent?.close().catch(() => undefined);
  await storage?.close().catch(() => undefined);
  cluster?.stop();
  cluster = null;
}

/** Whatever happens, nothing this run started outlives it. */
process.on('exit', () => {
  for (const i of instances) if (i.alive) i.kill('SIGKILL');
  try {
    cluster?.stop();
  } catch {
    // best effort while exiting
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the servers and the cluster`);
    void cleanUp().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------- the run

async function startServers(requestLog: string): Promise<void> {
  if (!storage) throw new Error('no storage');
  // Every client of this benchmark comes from 127.0.0.1, where a real fleet's come from
  // thousands of addresses: the per-address connection limit (100 by default) would refuse
  // the PMS clients' connections beside one instance's dashboard streams (100 at 500 hotels).
  const perIp = String(Math.max(1_000, 4 * HOTELS));
  const env = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', REQUEST_LOG: requestLog, LOG_LEVEL: 'warn', MAX_CONNECTIONS_PER_IP: perIp };
  const started: Instance[] = [];
  for (let i = 0; i < INSTANCES; i++) {
    started.push(await Instance.start({ label: `instance ${i + 1}`, dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, env }));
  }
  instances = started;
}

async function setUp(): Promise<Hotel[]> {
  if (!storage) throw new Error('no storage');
  const sizes = hotelSizes(HOTELS, MODEL, seeded(SEED));
  const plannedWallS = 120 + PHASES.length * (DURATION_S + 30);
  const pairs = Math.max(...sizes.map((r) => keyPairsNeeded(r, MODEL, SPEEDUP, plannedWallS).pairs));
  const hotels: Hotel[] = [];
  const password = 'fleet-staff-password-1';
  const logins: Array<Promise<void>> = [];
  const { url: hookUrl } = await webhookReceiver().then((r) => {
    receiver = r.server;
    return r;
  });
  const setUpHotel = async (i: number): Promise<void> => {
    if (!storage) throw new Error('no storage');
    const slug = `fleet-${i}`;
    const keys: string[] = [];
    const dashboard = i % MODEL.hotelsPerDashboard === 0;
    const webhook = i % Math.round(1 / MODEL.webhookShare) === 1;
    let id: string;
    let userId: string | null = null;
    const email = `desk@${slug}.example`;
    if (i === 0) {
      // The first hotel as an operator sets one up: the `innsync` command.
      await innsync(storage, ['hotel', 'create', slug, '--name', `Fleet hotel ${i}`, '--time-zone', 'UTC']);
      for (let k = 0; k < pairs; k++) keys.push(String((await innsync(storage, ['key', 'issue', slug], '', { MAX_KEY_PAIRS_PER_HOTEL: String(pairs) })).live));
      await innsync(storage, ['user', 'create', slug, '--email', email, '--role', 'receptionist'], password);
      id = (await storage.db.selectFrom('hotels').select('id').where('slug', '=', slug).executeTakeFirstOrThrow()).id;
    } else {
      id = (await createHotel(storage.db, slug, `Fleet hotel ${i}`)).id;
      for (let k = 0; k < pairs; k++) keys.push((await issueKeyPair(storage.db, slug, { maxActive: pairs })).live);
      if (dashboard) userId = (await createStaffUser(storage.db, slug, email, 'receptionist', password)).userId;
    }
    if (webhook) await addEndpoint(storage.db, id, { url: `${hookUrl}/${slug}` }, { allowPrivateNetworks: true, maxEndpointsPerHotel: 10 });
    const rooms = sizes[i] ?? MODEL.medianRooms;
    const h: Hotel = {
      index: i,
      slug,
      id,
      rooms: roomNumbers(rooms),
      keys,
      keyTurn: {},
      inHouse: new Map(),
      queue: Promise.resolve(),
      made: 0,
      dashboard: null,
      webhook,
    };
    hotels[i] = h;
    if (dashboard) {
      // The first ones log in as staff do (POST /dashboard/api/login, one after another: the
      // login counts against the per-address limit); the others get the session a login
      // makes (src/dashboard/session.ts) straight in the database.
      const loggedIn = userId === null || logins.length < HTTP_LOGINS;
      const cookie = loggedIn ? logIn(email, password) : startSession(storage.db, { id: userId ?? '', hotelId: id }).then((s) => s.token);
      logins.push(
        cookie.then((c) => {
          h.dashboard = new DashboardStream(h, c);
          dashboards.push(h.dashboard);
        }),
      );
      if (loggedIn) await logins[logins.length - 1];
    }
  };
  // The first hotel alone (the command's), then the others, a few at a time.
  await setUpHotel(0);
  let next = 1;
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      while (next < HOTELS) await setUpHotel(next++);
    }),
  );
  await Promise.all(logins);
  console.log(`set up ${HOTELS} hotels and their keys, users, endpoints; first syncs next …`);
  // Go-live: every hotel's first sync brings its in-house guests (occupancy of the model).
  for (const h of hotels) {
    const occupied = Math.round(h.rooms.length * MODEL.occupancy);
    for (const room of h.rooms.slice(0, occupied)) h.inHouse.set(room, newStay(h, room, random));
  }
  let first = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (first < hotels.length) {
        const h = hotels[first++];
        if (h) await sync(h, true);
      }
    }),
  );
  return hotels;
}

/** Poisson arrivals over the fleet: the next event of a kind after an exponential gap, at a hotel chosen by its share of the rate. */
class Arrivals {
  private readonly cumulative: number[] = [];
  readonly ratePerWallS: number;

  constructor(
    private readonly hotels: Hotel[],
    perDay: (h: Hotel) => number,
  ) {
    let sum = 0;
    for (const h of hotels) {
      sum += (perDay(h) / 86_400) * SPEEDUP;
      this.cumulative.push(sum);
    }
    this.ratePerWallS = sum;
  }

  gapMs(): number {
    return (-Math.log(1 - random()) / this.ratePerWallS) * 1000;
  }

  hotel(): Hotel {
    const x = random() * this.ratePerWallS;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.cumulative[mid] ?? 0) < x) lo = mid + 1;
      else hi = mid;
    }
    return this.hotels[lo] as Hotel;
  }
}

async function play(hotels: Hotel[], seconds: number): Promise<void> {
  const kinds: Array<[Arrivals, (h: Hotel) => Promise<void>]> = [
    [new Arrivals(hotels, (h) => hotelDay(h.rooms.length, MODEL).checkIns), checkIn],
    [new Arrivals(hotels, (h) => hotelDay(h.rooms.length, MODEL).updates), update],
    [new Arrivals(hotels, (h) => hotelDay(h.rooms.length, MODEL).checkOuts), checkOut],
  ];
  const end = Date.now() + seconds * 1000;
  const timers: NodeJS.Timeout[] = [];
  // Syncs: every hotel every FLEET_SYNC_MINUTES of model time, at an offset of its own.
  const syncEveryMs = (MODEL.syncEveryMinutes * 60_000) / SPEEDUP;
  for (const h of hotels) {
    const first = setTimeout(() => {
      enqueue(h, () => sync(h));
      timers.push(setInterval(() => enqueue(h, () => sync(h)), syncEveryMs));
    }, random() * syncEveryMs);
    timers.push(first);
  }
  await Promise.all(
    kinds.map(async ([arrivals, act]) => {
      for (let t = Date.now() + arrivals.gapMs(); t < end; t += arrivals.gapMs()) {
        await sleep(Math.max(0, t - Date.now()));
        const h = arrivals.hotel();
        enqueue(h, () => act(h));
      }
    }),
  );
  for (const t of timers) clearTimeout(t);
  await Promise.all(hotels.map((h) => h.queue));
}

async function runPhase(hotels: Hotel[], setting: string, pgPid: number | null): Promise<PhaseStats> {
  if (!storage) throw new Error('no storage');
  phase = emptyPhase(setting);
  phase.loadAvg = os.loadavg();
  const bytesBefore = await tableBytes(storage);
  const wal = await walPosition(storage);
  const cpu0 = instances.map((i) => cpuSeconds(i.pid));
  const pg0 = pgPid ? postgresCpuSeconds(pgPid) : Number.NaN;
  const t0 = Date.now();
  measureFrom = t0 + WARMUP_S * 1000;
  await play(hotels, DURATION_S);
  // What the dashboards and receivers have not seen 5 s after the last answer is missed.
  await sleep(5_000);
  phase.wallS = (Date.now() - t0) / 1000;
  phase.serverCpuS = instances.reduce((s, i, k) => s + cpuSeconds(i.pid) - (cpu0[k] ?? 0), 0);
  phase.pgCpuS = pgPid ? postgresCpuSeconds(pgPid) - pg0 : Number.NaN;
  phase.walBytes = await walBytesSince(storage, wal);
  phase.liveMissed = [...awaitingLive.values()].filter((t) => t >= measureFrom).length;
  phase.webhookMissed = [...awaitingHook.values()].filter((t) => t >= measureFrom).length;
  awaitingLive.clear();
  awaitingHook.clear();
  if (phase.liveMissed > 0) countError(`live events not received within 5 s (${phase.liveMissed})`);
  const after = await tableBytes(storage);
  for (const [name, bytes] of after) phase.tableBytes.set(name, bytes - (bytesBefore.get(name) ?? 0));
  return phase;
}

// ---------------------------------------------------------------- report

const f = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
const q = (values: number[], p: number): number =>
  quantile(
    [...values].sort((a, b) => a - b),
    p,
  );
const mb = (bytes: number): string => `${f(bytes / 1e6, 2)} MB`;

function reportHeader(hotels: Hotel[], description: string): void {
  const rooms = hotels.map((h) => h.rooms.length).sort((a, b) => a - b);
  const perDay = hotels.map((h) => hotelDay(h.rooms.length, MODEL));
  const sum = (k: keyof (typeof perDay)[number]): number => perDay.reduce((s, d) => s + d[k], 0);
  const modelDaysPerPhase = (DURATION_S * SPEEDUP) / 86_400;
  console.log(`\ninnsync fleet benchmark, ${new Date().toISOString()}, ${description}`);
  console.log(`machine: ${os.cpus().length} cores (shared with other work), Node.js ${process.version}`);
  console.log(
    `fleet: ${HOTELS} hotels, rooms log-normal (median ${MODEL.medianRooms}, sigma ${MODEL.sigma}, ${MODEL.minRooms}-${MODEL.maxRooms}): ` +
      `min ${rooms[0]}, median ${q(rooms, 0.5)}, p90 ${q(rooms, 0.9)}, max ${rooms[rooms.length - 1]}, ${rooms.reduce((a, b) => a + b, 0)} rooms in all`,
  );
  console.log(
    `model per fleet-day: ${f(sum('checkIns'), 0)} check-ins, ${f(sum('updates'), 0)} updates, ${f(sum('checkOuts'), 0)} check-outs, ` +
      `${f(sum('syncs'), 0)} syncs of ${f(sum('syncedGuests'), 0)} guests in all; ${dashboards.length} dashboards, ${hotels.filter((h) => h.webhook).length} webhook endpoints`,
  );
  const needed = keyPairsNeeded(MODEL.medianRooms, { ...MODEL }, 1, 3600);
  console.log(
    `limits: sync ${KEY_LIMITS.syncPerHour}/h per key, a sync every ${MODEL.syncEveryMinutes} min is ${f(60 / MODEL.syncEveryMinutes, 0)}/h: ` +
      `${needed.pairs} key pair(s) a hotel in real time; at ${SPEEDUP}× this run gave each hotel ${hotels[0]?.keys.length ?? 0} pair(s), used in turn`,
  );
  console.log(
    `time: ${SPEEDUP}× (one wall second = ${SPEEDUP} model seconds); ${DURATION_S} s a phase = ${f(modelDaysPerPhase * 24, 2)} model hours; warm-up ${WARMUP_S} s not in the latencies`,
  );
}

/** One phase's figures and targets; false when a request failed unexpectedly. */
function reportPhase(p: PhaseStats): boolean {
  const modelDaysPerPhase = (DURATION_S * SPEEDUP) / 86_400;
  {
    console.log(`\n== request log ${p.setting}  (load average at start ${p.loadAvg.map((x) => f(x, 2)).join(' ')})`);
    console.log('endpoint    requests   p50 ms   p95 ms   p99 ms');
    for (const e of ['checkin', 'update', 'checkout', 'sync'] as EndpointName[]) {
      const l = p.latencies[e];
      console.log(`${e.padEnd(10)} ${String(p.requests[e]).padStart(9)} ${f(q(l, 0.5)).padStart(8)} ${f(q(l, 0.95)).padStart(8)} ${f(q(l, 0.99)).padStart(8)}`);
    }
    console.log(
      `sync, hotels of ${MODEL.medianRooms} rooms ±20 %: n ${p.medianSync.length}, p50 ${f(q(p.medianSync, 0.5))}, p99 ${f(q(p.medianSync, 0.99))} ms; 400+ rooms: n ${p.largeSync.length}, p99 ${f(q(p.largeSync, 0.99))} ms`,
    );
    const errors = [...p.errors.entries()];
    if (driftSample) console.log(`first sync summary that disagreed with the PMS's list: ${driftSample}`);
    console.log(
      `expected 409 (duplicate check-ins): ${p.expected409}; other errors: ${errors.length === 0 ? 0 : errors.map(([k, v]) => `${k} ×${v}`).join('; ')}`,
    );
    console.log(
      `live lag at the dashboards (200 → event): n ${p.liveLags.length}, p50 ${f(q(p.liveLags, 0.5), 0)}, p95 ${f(q(p.liveLags, 0.95), 0)}, p99 ${f(q(p.liveLags, 0.99), 0)} ms; missed ${p.liveMissed}; "re-read the roster" events ${p.rereads}`,
    );
    console.log(
      `webhook lag (200 → delivery of guest.checked_in): n ${p.webhookLags.length}, p50 ${f(q(p.webhookLags, 0.5), 0)}, p95 ${f(q(p.webhookLags, 0.95), 0)}, p99 ${f(q(p.webhookLags, 0.99), 0)} ms; not delivered within 5 s ${p.webhookMissed}`,
    );
    const total = Object.values(p.requests).reduce((a, b) => a + b, 0);
    console.log(
      `CPU: servers ${f(p.serverCpuS, 2)} s (${f((p.serverCpuS * 1e6) / total, 0)} µs per PMS request, dashboards and webhooks included), ` +
        `PostgreSQL ${f(p.pgCpuS, 2)} s (${f((p.pgCpuS * 1e6) / total, 0)} µs per request); over ${f(p.wallS, 1)} s wall`,
    );
    const grown = [...p.tableBytes.entries()].filter(([, b]) => b !== 0).sort((a, b) => b[1] - a[1]);
    const hotelDays = HOTELS * modelDaysPerPhase;
    console.log(`bytes written per table (growth; per hotel-day = growth / (${HOTELS} hotels × ${f(modelDaysPerPhase, 4)} model days)):`);
    for (const [name, bytes] of grown)
      console.log(`  ${name.padEnd(28)} ${mb(bytes).padStart(12)}   ${f(bytes / hotelDays / 1e3, 2).padStart(9)} kB per hotel-day`);
    if (Number.isFinite(p.walBytes)) console.log(`PostgreSQL WAL written: ${mb(p.walBytes)} (${f(p.walBytes / hotelDays / 1e3, 1)} kB per hotel-day)`);

    // Extrapolation: real-time load is the run's wall load ÷ speedup, linear in hotels.
    const modelSeconds = p.wallS * SPEEDUP;
    const perHotelCores = (cpu: number): number => cpu / modelSeconds / HOTELS;
    console.log('extrapolation (linear in hotels; average load, no daily peak):');
    console.log('  cores(H) = CPU seconds of the phase / (wall seconds × speedup) × H / hotels');
    console.log('  disk(H, 90 d) = Σ per table: growth per hotel-day × H × min(90, retention days of the table)');
    console.log('  PostgreSQL write rate(H) = WAL bytes of the phase / (wall seconds × speedup) × H / hotels');
    for (const H of [10_000, 50_000]) {
      let disk = 0;
      for (const [name, bytes] of p.tableBytes) if (bytes > 0) disk += (bytes / hotelDays) * H * Math.min(HORIZON_DAYS, RETENTION_DAYS[name] ?? HORIZON_DAYS);
      const srv = perHotelCores(p.serverCpuS) * H;
      const pgc = perHotelCores(p.pgCpuS) * H;
      const wal = (p.walBytes / modelSeconds / HOTELS) * H;
      console.log(
        `  ${H.toLocaleString('en')} hotels, 90 days: disk ${f(disk / 1e9, 1)} GB, server cores ${f(srv, 2)}, PostgreSQL cores ${f(pgc, 2)}, ` +
          `PostgreSQL write rate ${f(wal / 1e6, 2)} MB/s WAL`,
      );
      if (H === 10_000) (p as PhaseStats & { projection?: { disk: number; pgc: number } }).projection = { disk, pgc };
    }
    const proj = (p as PhaseStats & { projection?: { disk: number; pgc: number } }).projection;
    const events = ['checkin', 'update', 'checkout'] as EndpointName[];
    const targets: Array<[string, boolean, string]> = [
      ['0 errors other than the model’s 409s', p.errors.size === 0, `${[...p.errors.values()].reduce((a, b) => a + b, 0)}`],
      [
        `check-in/update/checkout p99 < ${TARGET.eventP99Ms} ms`,
        events.every((e) => q(p.latencies[e], 0.99) < TARGET.eventP99Ms),
        events.map((e) => f(q(p.latencies[e], 0.99))).join(' / '),
      ],
      [`sync p99 < ${TARGET.medianSyncP99Ms} ms for the median hotel`, q(p.medianSync, 0.99) < TARGET.medianSyncP99Ms, f(q(p.medianSync, 0.99))],
      [`live lag p99 < ${TARGET.liveLagP99Ms} ms`, q(p.liveLags, 0.99) < TARGET.liveLagP99Ms && p.liveMissed === 0, f(q(p.liveLags, 0.99), 0)],
    ];
    if (ENGINE === 'postgres' && proj) {
      targets.push([
        `10,000 hotels fit one PostgreSQL primary (${TARGET.pgCores} cores, ≤ 2 TB for 90 days)`,
        proj.pgc <= TARGET.pgCores && proj.disk <= TARGET.diskBytes,
        `${f(proj.pgc, 2)} cores, ${f(proj.disk / 1e12, 3)} TB`,
      ]);
    }
    for (const [name, met, value] of targets) console.log(`${met ? 'MET    ' : 'NOT MET'}  ${name}: ${value}`);
  }
  return p.errors.size === 0;
}

/** The request log's cost: the phases with it on and off side by side. */
function reportComparison(phases: PhaseStats[]): void {
  {
    const on = phases.find((p) => p.setting === 'on');
    const off = phases.find((p) => p.setting === 'off');
    if (on && off) {
      const per = (p: PhaseStats, cpu: number): number => (cpu * 1e6) / Object.values(p.requests).reduce((a, b) => a + b, 0);
      const bytes = (p: PhaseStats): number => [...p.tableBytes.values()].reduce((a, b) => a + Math.max(0, b), 0);
      console.log('\n== the request log’s cost (on ÷ off, same run)');
      console.log(
        `server CPU per request: ${f(per(on, on.serverCpuS), 0)} / ${f(per(off, off.serverCpuS), 0)} µs = ${f(per(on, on.serverCpuS) / per(off, off.serverCpuS), 2)}×`,
      );
      if (ENGINE === 'postgres')
        console.log(
          `PostgreSQL CPU per request: ${f(per(on, on.pgCpuS), 0)} / ${f(per(off, off.pgCpuS), 0)} µs = ${f(per(on, on.pgCpuS) / per(off, off.pgCpuS), 2)}×`,
        );
      console.log(
        `bytes written: ${mb(bytes(on))} / ${mb(bytes(off))} = ${f(bytes(on) / bytes(off), 2)}×; request_log alone ${mb(on.tableBytes.get('request_log') ?? 0)}`,
      );
      if (ENGINE === 'postgres') console.log(`WAL: ${mb(on.walBytes)} / ${mb(off.walBytes)} = ${f(on.walBytes / off.walBytes, 2)}×`);
      for (const e of ['checkin', 'sync'] as EndpointName[]) console.log(`${e} p99: ${f(q(on.latencies[e], 0.99))} / ${f(q(off.latencies[e], 0.99))} ms`);
    }
  }
}

async function main(): Promise<void> {
  console.log(
    `load average at start: ${os
      .loadavg()
      .map((x) => f(x, 2))
      .join(' ')} (${os.cpus().length} cores)`,
  );
  let pgPid: number | null = null;
  let description = 'SQLite, 1 instance';
  if (ENGINE === 'postgres') {
    cluster = await startPostgresCluster();
    description = `${cluster.description}, ${INSTANCES} instances on one database`;
  }
  storage = await createStorage(ENGINE, cluster?.adminUrl ?? null);
  if (ENGINE === 'sqlite') description = `SQLite (SQLITE_SYNCHRONOUS=normal), ${INSTANCES} instance`;
  await startServers(PHASES[0] ?? 'on');
  certificate = fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8');
  agent = new Agent({ connect: { ca: certificate, servername: 'localhost' }, connections: 48, keepAliveTimeout: 30_000 });
  if (ENGINE === 'postgres') {
    const dir = (await sql<{ setting: string }>`select setting from pg_settings where name = 'data_directory'`.execute(storage.db)).rows[0]?.setting;
    pgPid = dir ? Number(fs.readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]) : null;
  }
  const setupStart = Date.now();
  const hotels = await setUp();
  console.log(`set up ${HOTELS} hotels (first sync of each included) in ${f((Date.now() - setupStart) / 1000, 1)} s; errors so far: ${phase.errors.size}`);
  const deadline = Date.now() + 60_000;
  while (dashboards.some((d) => d.ready === 0)) {
    if (Date.now() > deadline) throw new Error('the dashboards did not open their streams within 60 s');
    await sleep(100);
  }
  const setupErrors = [...phase.errors.entries()];
  if (setupErrors.length > 0) console.log(`errors during set-up: ${setupErrors.map(([k, v]) => `${k} ×${v}`).join('; ')}`);
  reportHeader(hotels, description);
  let ok = true;
  const phases: PhaseStats[] = [];
  for (const [n, setting] of PHASES.entries()) {
    if (n > 0) {
      const before = dashboards.map((d) => d.ready);
      await Promise.all(instances.map((i) => i.stop()));
      await startServers(setting);
      // Every dashboard back on its stream (a new `ready`) before the phase starts, so its events are not missed.
      const deadline = Date.now() + 60_000;
      while (dashboards.some((d, k) => d.ready <= (before[k] ?? 0))) {
        if (Date.now() > deadline) throw new Error('the dashboards did not reconnect within 60 s of the restart');
        await sleep(100);
      }
    }
    console.log(`phase ${n + 1}/${PHASES.length}: request log ${setting}, ${DURATION_S} s …`);
    const p = await runPhase(hotels, setting, pgPid);
    phases.push(p);
    if (!reportPhase(p)) ok = false;
  }
  reportComparison(phases);
  if (!ok || setupErrors.length > 0) {
    console.log('\nINVALID RUN: requests failed other than the model’s 409s (exit 1)');
    process.exitCode = 1;
  }
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    for (const i of instances) if (!i.alive) console.error(`${i.label}:\n${i.tail()}`);
    process.exitCode = 1;
  })
  .finally(() => cleanUp());
