/**
 * Load benchmark: LIVE check-ins through the whole innsync pipeline over HTTPS, beside a
 * bare Fastify HTTPS route answering a JSON body of the same size, measured in the same
 * run. Prints req/s, p50/p99 latency of both and the ratio pipeline ÷ bare.
 *
 *   npm run bench                      # SQLite in a temporary DATA_DIR
 *   DATABASE_URL=postgres://… npm run bench
 *
 * Knobs (environment): BENCH_CONNECTIONS (10), BENCH_DURATION seconds per measured run
 * (10), BENCH_WARMUP seconds of warm-up per side (3), BENCH_ROUNDS (1; rounds alternate
 * pipeline and bare), BENCH_PER_KEY check-ins per API key (50, at most 60: the check-in
 * limit is 60/min per key), BENCH_CPU_PROF=<dir> writes V8 CPU profiles of both server
 * processes (pipeline-….cpuprofile, bare-….cpuprofile).
 *
 * Three processes: this one drives autocannon; the real server (startServer) and the
 * bare server each run in a child process, so client and server do not share one event
 * loop. They do share the machine's CPUs.
 *
 * Runs are sized by request count (autocannon `amount`, derived from the rate seen in
 * the previous run × BENCH_DURATION), not by wall time: autocannon then waits for every
 * answer, so no check-in is left in flight at the end and the guests in the database
 * can be compared exactly with the 200 responses.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import pino from 'pino';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import type { Db } from '../src/db/database.js';
import { randomId } from '../src/domain/ids.js';
import { CheckinResponse } from '../src/pms/schemas.js';

// ---------------------------------------------------------------- settings

function intEnv(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer ${min}-${max}, got "${raw}"`);
  return n;
}

// ---------------------------------------------------------------- IPC

type ToChild = { type: 'issueKeys'; count: number } | { type: 'counts' } | { type: 'cpu' } | { type: 'walStart' } | { type: 'walEnd' } | { type: 'stop' };

interface Counts {
  guests: number;
  activity: number;
  idempotencyDone: number;
  /** Only after `stop` (the request log is flushed on close). */
  requestLog?: number;
  /** SQLite's writer (a build with group commit): commits, and the transactions they made durable. */
  commits?: { commits: number; transactions: number } | null;
}

type FromChild =
  | { type: 'ready'; port: number; engine: string; slug: string }
  | { type: 'keys'; keys: string[] }
  | { type: 'counts'; counts: Counts }
  | { type: 'stopped'; counts: Counts }
  | { type: 'cpu'; micros: number }
  | { type: 'wal'; bytes: number }
  | { type: 'error'; message: string };

function send(msg: FromChild): void {
  process.send?.(msg);
}

/** CPU time (user + system, all threads) this process has used so far. */
function cpuMessage(): FromChild {
  const u = process.cpuUsage();
  return { type: 'cpu', micros: u.user + u.system };
}

// ---------------------------------------------------------------- child: the real server

async function countRows(db: Db, hotelId: string): Promise<Counts> {
  const guests = await db
    .selectFrom('guests')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('hotel_id', '=', hotelId)
    .executeTakeFirstOrThrow();
  const activity = await db
    .selectFrom('activity_log')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('hotel_id', '=', hotelId)
    .executeTakeFirstOrThrow();
  const done = await db
    .selectFrom('idempotency_records')
    .innerJoin('api_keys', 'api_keys.id', 'idempotency_records.api_key_id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('api_keys.hotel_id', '=', hotelId)
    .where('idempotency_records.response_body', 'is not', null)
    .executeTakeFirstOrThrow();
  return { guests: Number(guests.n), activity: Number(activity.n), idempotencyDone: Number(done.n) };
}

/**
 * The service's modules of one build: this one's, or those of another checkout's `dist/`
 * (BENCH_BASELINE), so both builds run under the same driver in the same session.
 */
async function serviceModules(root: string | null) {
  const from = (rel: string): string => (root ? pathToFileURL(path.join(root, 'dist', 'src', rel)).href : `../src/${rel}`);
  const [config, database, operations, server] = await Promise.all([
    import(from('config.js')) as Promise<typeof import('../src/config.js')>,
    import(from('db/database.js')) as Promise<typeof import('../src/db/database.js')>,
    import(from('operations.js')) as Promise<typeof import('../src/operations.js')>,
    import(from('server.js')) as Promise<typeof import('../src/server.js')>,
  ]);
  return {
    loadConfig: config.loadConfig,
    openDatabase: database.openDatabase,
    createHotel: operations.createHotel,
    issueKeyPair: operations.issueKeyPair,
    startServer: server.startServer,
  };
}

/**
 * WAL bytes written between walStart and walEnd. SQLite: the WAL is emptied
 * (`wal_checkpoint(TRUNCATE)`), then a read transaction of this connection holds its
 * snapshot, so no checkpoint can copy the frames that follow and the WAL is never reset:
 * its size at the end is every frame written (each a page and a 24-byte header).
 * PostgreSQL: the WAL insert position's advance.
 */
class WalMeter {
  #sqlite: SqliteDatabase.Database | null = null;
  #pg: pg.Client | null = null;
  #startLsn = '';

  constructor(
    private readonly databaseUrl: string | undefined,
    private readonly file: string,
  ) {}

  async start(): Promise<void> {
    if (this.databaseUrl) {
      this.#pg = new pg.Client({ connectionString: this.databaseUrl });
      await this.#pg.connect();
      const r = await this.#pg.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn');
      this.#startLsn = r.rows[0]?.lsn ?? '0/0';
      return;
    }
    const db = new SqliteDatabase(this.file);
    db.pragma('busy_timeout = 10000');
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.exec('begin');
    db.prepare('select count(*) from hotels').get();
    this.#sqlite = db;
  }

  async end(): Promise<number> {
    if (this.#pg) {
      const r = await this.#pg.query<{ bytes: string }>('select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::text as bytes', [this.#startLsn]);
      await this.#pg.end();
      this.#pg = null;
      return Number(r.rows[0]?.bytes ?? 0);
    }
    const bytes = Math.max(0, fs.statSync(`${this.file}-wal`).size - 32);
    this.#sqlite?.exec('rollback');
    this.#sqlite?.close();
    this.#sqlite = null;
    return bytes;
  }
}

async function runPipelineServer(dataDir: string, root: string | null): Promise<void> {
  const { loadConfig, openDatabase, createHotel, issueKeyPair, startServer } = await serviceModules(root);
  const env = {
    PORT: '0',
    HTTP_PORT: 'off',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    DATABASE_URL: process.env.DATABASE_URL,
    SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS,
    SQLITE_READER: process.env.SQLITE_READER,
    SQLITE_GROUP_COMMIT_MS: process.env.SQLITE_GROUP_COMMIT_MS,
  };
  const config = loadConfig(env);
  const server = await startServer(config, pino({ level: 'silent' }));
  const db = server.database.db;
  const slug = `bench-${randomId(10)}`;
  const hotel = await createHotel(db, slug, 'Benchmark Hotel');
  const wal = new WalMeter(config.databaseUrl ?? undefined, path.join(dataDir, 'innsync.sqlite'));

  process.on('message', (raw) => {
    const msg = raw as ToChild;
    void (async () => {
      try {
        if (msg.type === 'issueKeys') {
          const keys: string[] = [];
          for (let i = 0; i < msg.count; i++) keys.push((await issueKeyPair(db, slug)).live);
          send({ type: 'keys', keys });
        } else if (msg.type === 'counts') {
          send({ type: 'counts', counts: await countRows(db, hotel.id) });
        } else if (msg.type === 'cpu') {
          send(cpuMessage());
        } else if (msg.type === 'walStart') {
          await wal.start();
          send({ type: 'wal', bytes: 0 });
        } else if (msg.type === 'walEnd') {
          send({ type: 'wal', bytes: await wal.end() });
        } else {
          // Closing flushes the batched request log; count it afterwards on a new handle.
          const handle = server.database as { commitStats?: () => { commits: number; transactions: number } | null };
          const commits = handle.commitStats?.() ?? null;
          await server.close();
          const again = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
          try {
            const counts = await countRows(again.db, hotel.id);
            const log = await again.db
              .selectFrom('request_log')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('hotel_id', '=', hotel.id)
              .executeTakeFirstOrThrow();
            send({ type: 'stopped', counts: { ...counts, requestLog: Number(log.n), commits } });
          } finally {
            await again.close();
          }
          process.disconnect();
        }
      } catch (err) {
        send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    })();
  });
  send({ type: 'ready', port: server.httpsPort, engine: server.database.engine, slug });
}

// ---------------------------------------------------------------- child: the bare route

async function runBareServer(dataDir: string): Promise<void> {
  const tlsDir = path.join(dataDir, 'tls');
  const app = Fastify({
    logger: false,
    https: { key: fs.readFileSync(path.join(tlsDir, 'key.pem'), 'utf8'), cert: fs.readFileSync(path.join(tlsDir, 'cert.pem'), 'utf8'), minVersion: 'TLSv1.2' },
  });
  // Same path as the check-in, the same response schema (serializer), and a body of the
  // same size: the request's own pmsGuestId and roomNumber, ids of the real ids' length.
  const guestId = `guest_${'0'.repeat(20)}`;
  const requestId = `req_${'0'.repeat(20)}`;
  app.post('/api/pms/v1/:slug/guests/checkin', { schema: { response: { 200: CheckinResponse } } }, async (req) => {
    const body = req.body as { pmsGuestId: string; roomNumber: string };
    return { status: 'created', guestId, pmsGuestId: body.pmsGuestId, roomNumber: body.roomNumber.trim(), requestId };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.on('message', (raw) => {
    const msg = raw as ToChild;
    if (msg.type === 'cpu') send(cpuMessage());
    if (msg.type !== 'stop') return;
    void app.close().then(() => {
      send({ type: 'stopped', counts: { guests: 0, activity: 0, idempotencyDone: 0 } });
      process.disconnect();
    });
  });
  send({ type: 'ready', port, engine: 'none', slug: 'bare' });
}

// ---------------------------------------------------------------- parent: the driver

class Child {
  private readonly waiting: Array<(msg: FromChild) => void> = [];

  constructor(readonly proc: ChildProcess) {
    proc.on('message', (raw) => {
      const msg = raw as FromChild;
      if (msg.type === 'error') {
        console.error(`server process failed:\n${msg.message}`);
        process.exit(2);
      }
      this.waiting.shift()?.(msg);
    });
    proc.on('exit', (code) => {
      if (code !== 0 && code !== null) {
        console.error(`server process exited with code ${code}`);
        process.exit(2);
      }
    });
  }

  next(): Promise<FromChild> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async request(msg: ToChild): Promise<FromChild> {
    const reply = this.next();
    this.proc.send(msg);
    return reply;
  }

  async cpu(): Promise<number> {
    const r = await this.request({ type: 'cpu' });
    if (r.type !== 'cpu') throw new Error(`unexpected reply ${r.type}`);
    return r.micros;
  }

  async counts(): Promise<Counts> {
    const r = await this.request({ type: 'counts' });
    if (r.type !== 'counts') throw new Error(`unexpected reply ${r.type}`);
    return r.counts;
  }
}

async function startChild(
  role: 'pipeline' | 'bare',
  dataDir: string,
  cpuProfDir: string | null,
  opts: { root?: string | null; databaseUrl?: string | undefined; name?: string } = {},
): Promise<{ child: Child; port: number; engine: string; slug: string }> {
  const name = opts.name ?? role;
  const execArgv = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir, '--cpu-prof-name', `${name}-${Date.now()}.cpuprofile`] : [];
  const args = [`--${role}`, dataDir, ...(opts.root ? [opts.root] : [])];
  const env = { ...process.env, ...(opts.databaseUrl !== undefined ? { DATABASE_URL: opts.databaseUrl } : {}) };
  const proc = fork(fileURLToPath(import.meta.url), args, { execArgv, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const child = new Child(proc);
  const ready = await child.next();
  if (ready.type !== 'ready') throw new Error(`${name} server did not start`);
  return { child, port: ready.port, engine: ready.engine, slug: ready.slug };
}

/** Unique, fixed-size check-ins: every request a new guest in a new room, a new key. */
class CheckinFactory {
  private keys: string[] = [];
  private used = 0;
  built = 0;
  private n = 0;
  /** Set when more requests were built than keys were issued for (the run is then invalid). */
  exhausted = false;

  constructor(
    private readonly tag: string,
    private readonly perKey: number,
  ) {}

  /** New keys for the next run; requests built so far stay counted. */
  useKeys(keys: string[]): void {
    this.keys = keys;
    this.used = 0;
  }

  next(): { headers: Record<string, string>; body: string } {
    let key = this.keys[Math.floor(this.used / this.perKey)];
    if (key === undefined) {
      this.exhausted = true;
      key = this.keys[this.keys.length - 1] ?? 'pms_live_missing_key_000000000000';
    }
    this.used++;
    this.built++;
    const n = String(++this.n).padStart(8, '0');
    const body = JSON.stringify({
      pmsGuestId: `G-${this.tag}-${n}`,
      lastName: 'Lovelace',
      firstName: 'Ada',
      roomNumber: `R${n}`,
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-26',
      language: 'en',
      adults: 2,
    });
    return {
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `checkin-${this.tag}-${n}` },
      body,
    };
  }
}

function probe(port: number, cert: string, path_: string, req: { headers: Record<string, string>; body: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const r = https.request(
      {
        host: '127.0.0.1',
        port,
        path: path_,
        method: 'POST',
        ca: cert,
        servername: 'localhost',
        minVersion: 'TLSv1.2',
        headers: { ...req.headers, 'content-length': Buffer.byteLength(req.body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

interface Measured {
  label: string;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  /** Server process CPU time per answered request, µs (user + system, all its threads). */
  cpuPerRequest: number;
  /** Server process CPU time over the run's wall time: 100 % = one core busy throughout. */
  serverBusy: number;
  statusCodes: Record<string, number>;
}

async function load(
  label: string,
  server: { child: Child; port: number },
  urlPath: string,
  factory: CheckinFactory,
  amount: number,
  connections: number,
): Promise<Measured> {
  const port = server.port;
  const cpuBefore = await server.child.cpu();
  let last = 0;
  const started = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `https://127.0.0.1:${port}${urlPath}`,
        method: 'POST',
        connections,
        amount,
        timeout: 30,
        requests: [
          {
            setupRequest: (req) => {
              const r = factory.next();
              req.headers = r.headers;
              req.body = r.body;
              return req;
            },
          },
        ],
      },
      (err: unknown, res: autocannon.Result) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(res)),
    );
    instance.on('response', () => {
      last = performance.now();
    });
  });
  const seconds = ((last || performance.now()) - started) / 1000;
  const cpuMicros = (await server.child.cpu()) - cpuBefore;
  const statusCodes: Record<string, number> = {};
  for (const [code, s] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = s.count ?? 0;
  const answered = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  return {
    label,
    requests: answered,
    ok: statusCodes['200'] ?? 0,
    non2xx: result.non2xx,
    errors: result.errors,
    seconds,
    // Completed requests over the time to the last answer. (autocannon's requests.average
    // averages one-second samples; with `amount` its last sample is a partial second.)
    rps: answered / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    mean: result.latency.average,
    cpuPerRequest: cpuMicros / Math.max(1, answered),
    serverBusy: cpuMicros / 1e6 / seconds,
    statusCodes,
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function issueKeys(server: Child, count: number): Promise<string[]> {
  const r = await server.request({ type: 'issueKeys', count });
  if (r.type !== 'keys') throw new Error(`unexpected reply ${r.type}`);
  return r.keys;
}

function fmt(n: number, digits = 1): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function row(cells: string[], widths: number[]): string {
  return cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
}

/** One build's real server under load: this build's, or the baseline's (BENCH_BASELINE). */
interface Side {
  name: string;
  server: { child: Child; port: number; engine: string; slug: string };
  path: string;
  live: CheckinFactory;
  dataDir: string;
  ok200: number;
  answered: number;
  rate: Measured | null;
  before: Counts | null;
  okBefore: number;
  measured: Measured[];
  walBytesPerCheckin: number | null;
}

async function main(): Promise<void> {
  const connections = intEnv('BENCH_CONNECTIONS', 10, 1, 1000);
  const duration = intEnv('BENCH_DURATION', 10, 1, 3600);
  const warmup = intEnv('BENCH_WARMUP', 3, 0, 600);
  const rounds = intEnv('BENCH_ROUNDS', 1, 1, 100);
  const perKey = intEnv('BENCH_PER_KEY', 50, 1, 60);
  const walCheckins = intEnv('BENCH_WAL_CHECKINS', 2000, 0, 1_000_000);
  const cpuProfDir = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;
  const baselineRoot = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : null;
  if (baselineRoot && !fs.existsSync(path.join(baselineRoot, 'dist', 'src', 'server.js'))) {
    throw new Error(`BENCH_BASELINE=${baselineRoot} has no dist/src/server.js: run npm ci (or npm run build) in that checkout`);
  }
  if (baselineRoot && process.env.DATABASE_URL && !process.env.BENCH_BASELINE_DATABASE_URL) {
    throw new Error('with DATABASE_URL, BENCH_BASELINE needs BENCH_BASELINE_DATABASE_URL: a database of its own for the baseline build');
  }

  const tag = randomId(6);
  const sides: Side[] = [];
  const addSide = async (name: string, root: string | null, databaseUrl: string | undefined): Promise<void> => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-bench-'));
    const server = await startChild('pipeline', dataDir, cpuProfDir, { root, databaseUrl, name });
    sides.push({
      name,
      server,
      path: `/api/pms/v1/${server.slug}/guests/checkin`,
      live: new CheckinFactory(`${tag}${sides.length}`, perKey),
      dataDir,
      ok200: 0,
      answered: 0,
      rate: null,
      before: null,
      okBefore: 0,
      measured: [],
      walBytesPerCheckin: null,
    });
  };
  await addSide(baselineRoot ? 'this build' : 'pipeline', null, undefined);
  if (baselineRoot) await addSide('baseline', baselineRoot, process.env.BENCH_BASELINE_DATABASE_URL);
  const first = sides[0] as Side;
  const bare = await startChild('bare', first.dataDir, cpuProfDir);
  const cert = fs.readFileSync(path.join(first.dataDir, 'tls', 'cert.pem'), 'utf8');
  // The bare route checks nothing; its requests have the same size (same path, a key of
  // the same length, the same body shape and digits).
  const shadow = new CheckinFactory(`${tag}0`, Number.MAX_SAFE_INTEGER);
  shadow.useKeys([`pms_live_${'x'.repeat(32)}`]);

  console.log(`innsync check-in load benchmark, ${new Date().toISOString()}`);
  console.log(
    `engine ${first.server.engine}, node ${process.version}, ${os.cpus().length} CPUs (client and the servers share them), ` +
      `${connections} connections, ${duration} s per measured run, ${warmup} s warm-up, ${rounds} round(s)` +
      (baselineRoot ? `; baseline build: ${baselineRoot}` : ''),
  );

  // Probe: one check-in each side, over a verified TLS connection; the bodies must match in size.
  for (const side of sides) {
    side.live.useKeys(await issueKeys(side.server.child, 1));
    const p = await probe(side.server.port, fs.readFileSync(path.join(side.dataDir, 'tls', 'cert.pem'), 'utf8'), side.path, side.live.next());
    if (p.status !== 200) throw new Error(`probe check-in (${side.name}) answered ${p.status}: ${p.body}`);
    side.ok200 = 1;
    side.answered = 1;
    console.log(`response body (${side.name}): ${Buffer.byteLength(p.body)} bytes`);
  }
  const b = await probe(bare.port, cert, first.path, shadow.next());
  console.log(`response body (bare): ${Buffer.byteLength(b.body)} bytes`);

  const everyRun: Measured[] = [];
  const runLive = async (side: Side, label: string, amount: number): Promise<Measured> => {
    side.live.useKeys(await issueKeys(side.server.child, Math.ceil(amount / perKey) + 1));
    await pause(500); // let the previous run's request-log batch settle
    const m = await load(label, side.server, side.path, side.live, amount, connections);
    side.ok200 += m.ok;
    side.answered += m.requests;
    everyRun.push(m);
    return m;
  };
  let bRate: Measured | null = null;
  const runBare = async (label: string, amount: number): Promise<Measured> => {
    await pause(500);
    const m = await load(label, bare, first.path, shadow, amount, connections);
    everyRun.push(m);
    return m;
  };
  const sized = (m: Measured | null, seconds: number): number => Math.max(connections * 5, Math.round((m?.rps ?? 0) * seconds));

  // Warm-up: a short calibration run, then about BENCH_WARMUP seconds for each side in
  // two halves, so the measured run is sized from a warm rate.
  for (const side of sides) side.rate = await runLive(side, 'calibrate', connections * 20);
  bRate = await runBare('calibrate', connections * 20);
  for (let half = 0; half < 2 && warmup > 0; half++) {
    for (const side of sides) side.rate = await runLive(side, 'warm-up', sized(side.rate, warmup / 2));
    bRate = await runBare('warm-up', sized(bRate, warmup / 2));
  }

  for (const side of sides) {
    side.before = await side.server.child.counts();
    side.okBefore = side.ok200;
  }
  const bareRuns: Measured[] = [];
  for (let r = 0; r < rounds; r++) {
    // Interleaved, the order turning each round, so drift on the machine falls on every side alike.
    const order = r % 2 === 0 ? sides : [...sides].reverse();
    for (const side of order) {
      const m = await runLive(side, side.name, sized(side.rate, duration));
      side.measured.push(m);
      side.rate = m;
    }
    const bm = await runBare('bare', sized(bRate, duration));
    bareRuns.push(bm);
    bRate = bm;
  }
  await pause(500);
  const after = new Map<Side, Counts>();
  for (const side of sides) after.set(side, await side.server.child.counts());

  // WAL bytes per check-in: a run of its own, the WAL held from being reset meanwhile (WalMeter).
  if (walCheckins > 0) {
    for (const side of sides) {
      side.live.useKeys(await issueKeys(side.server.child, Math.ceil(walCheckins / perKey) + 1));
      await pause(500);
      await side.server.child.request({ type: 'walStart' });
      const m = await load('wal', side.server, side.path, side.live, walCheckins, connections);
      await pause(300);
      const r = await side.server.child.request({ type: 'walEnd' });
      side.ok200 += m.ok;
      side.answered += m.requests;
      everyRun.push(m);
      if (r.type === 'wal') side.walBytesPerCheckin = r.bytes / Math.max(1, m.ok);
    }
  }

  const finals = new Map<Side, Counts | null>();
  for (const side of sides) {
    const exited = new Promise((resolve) => side.server.child.proc.once('exit', resolve));
    const stopped = await side.server.child.request({ type: 'stop' });
    finals.set(side, stopped.type === 'stopped' ? stopped.counts : null);
    await exited; // its data directory is removed below
  }
  await bare.child.request({ type: 'stop' });

  // ------------------------------------------------------------ report
  const widths = [24, 10, 7, 7, 8, 9, 8, 7, 7, 13, 12];
  console.log('');
  console.log(row(['', 'req/s', 'p50 ms', 'p99 ms', 'mean ms', 'requests', 'seconds', 'non2xx', 'errors', 'server µs/req', 'server busy'], widths));
  const line = (name: string, m: Measured) =>
    console.log(
      row(
        [
          name,
          fmt(m.rps),
          String(m.p50),
          String(m.p99),
          fmt(m.mean, 2),
          String(m.requests),
          fmt(m.seconds, 2),
          String(m.non2xx),
          String(m.errors),
          fmt(m.cpuPerRequest, 0),
          `${fmt(m.serverBusy * 100, 0)} %`,
        ],
        widths,
      ),
    );
  const ratios: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const suffix = rounds > 1 ? ` #${i + 1}` : '';
    for (const side of sides) line(`${side.name}${suffix}`, side.measured[i] as Measured);
    const bm = bareRuns[i] as Measured;
    line(`bare Fastify route${suffix}`, bm);
    const pm = first.measured[i] as Measured;
    const ratio = pm.rps / bm.rps;
    ratios.push(ratio);
    console.log(`${`ratio ${first.name}/bare${suffix}`.padEnd(widths[0] ?? 0)}  ${fmt(ratio * 100, 1)} %   (req/s; target >= 50 %)`);
    // Were both servers the bottleneck, the req/s ratio would be the inverse CPU-cost ratio.
    console.log(`${''.padEnd(widths[0] ?? 0)}  ${fmt((bm.cpuPerRequest / pm.cpuPerRequest) * 100, 1)} %   (server CPU per request, bare ÷ ${first.name})`);
    const base = sides[1]?.measured[i];
    if (base) {
      console.log(
        `${`this build ÷ baseline${suffix}`.padEnd(widths[0] ?? 0)}  ${fmt(pm.rps / base.rps, 2)}× req/s, ${fmt(pm.cpuPerRequest / base.cpuPerRequest, 2)}× server CPU per check-in`,
      );
    }
  }
  const bareBusy = Math.max(...bareRuns.map((m) => m.serverBusy));
  if (bareBusy < 0.9) {
    console.log(
      `note: the bare server was at most ${fmt(bareBusy * 100, 0)} % busy, so its req/s is limited by the load generator ` +
        '(one autocannon thread on the same CPUs), which flatters the req/s ratio.',
    );
  }
  const median = (xs: number[]): number => {
    const sorted = [...xs].sort((a, b2) => a - b2);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  };
  if (rounds > 1) {
    console.log(
      `ratio ${first.name}/bare over ${rounds} rounds: median ${fmt(median(ratios) * 100)} %, min ${fmt(Math.min(...ratios) * 100)} %, max ${fmt(Math.max(...ratios) * 100)} %`,
    );
  }
  for (const side of sides) {
    console.log(
      `${side.name}: median ${fmt(median(side.measured.map((m) => m.rps)))} req/s, ${fmt(median(side.measured.map((m) => m.cpuPerRequest)), 0)} µs server CPU per check-in` +
        (side.walBytesPerCheckin !== null ? `, ${fmt(side.walBytesPerCheckin, 0)} WAL bytes per check-in (${walCheckins} check-ins)` : ''),
    );
  }
  const baseline = sides[1];
  if (baseline) {
    const rps = first.measured.map((m, i) => m.rps / (baseline.measured[i]?.rps ?? m.rps));
    const cpu = first.measured.map((m, i) => m.cpuPerRequest / (baseline.measured[i]?.cpuPerRequest ?? m.cpuPerRequest));
    console.log(
      `this build ÷ baseline, paired by round: req/s median ${fmt(median(rps), 2)}× (${fmt(Math.min(...rps), 2)}-${fmt(Math.max(...rps), 2)}), ` +
        `server CPU per check-in median ${fmt(median(cpu), 2)}× (${fmt(Math.min(...cpu), 2)}-${fmt(Math.max(...cpu), 2)})` +
        (first.walBytesPerCheckin !== null && baseline.walBytesPerCheckin
          ? `, WAL bytes per check-in ${fmt(first.walBytesPerCheckin / baseline.walBytesPerCheckin, 2)}×`
          : ''),
    );
  }

  // ------------------------------------------------------------ verification
  const problems: string[] = [];
  // Warm-up runs included: a 429 or a timeout anywhere invalidates the run.
  const non2xx = everyRun.reduce((a, m) => a + m.non2xx, 0);
  const errors = everyRun.reduce((a, m) => a + m.errors, 0);
  console.log(`non-2xx responses: ${non2xx}, connection errors/timeouts: ${errors} (all runs, warm-up included)`);
  if (non2xx > 0) problems.push(`${non2xx} non-2xx responses (${everyRun.map((m) => `${m.label} ${JSON.stringify(m.statusCodes)}`).join(', ')})`);
  if (errors > 0) problems.push(`${errors} connection errors or timeouts`);
  console.log('');
  for (const side of sides) {
    if (side.live.exhausted) problems.push(`${side.name}: ran out of API keys (raise the key budget)`);
    const before = side.before as Counts;
    const end = after.get(side) as Counts;
    const measuredOk = side.measured.reduce((a, m) => a + m.ok, 0);
    const guestsDelta = end.guests - before.guests;
    console.log(
      `verification (${side.name}, measured runs): guests created ${guestsDelta}, 200 responses ${measuredOk}, activity entries ${end.activity - before.activity}, idempotency records completed ${end.idempotencyDone - before.idempotencyDone}`,
    );
    if (guestsDelta !== measuredOk) problems.push(`${side.name}: guests created (${guestsDelta}) != 200 responses (${measuredOk})`);
    if (end.activity - before.activity !== measuredOk) problems.push(`${side.name}: activity entries != 200 responses`);
    if (end.idempotencyDone - before.idempotencyDone !== measuredOk) problems.push(`${side.name}: completed idempotency records != 200 responses`);
    const finalCounts = finals.get(side);
    if (finalCounts) {
      console.log(
        `verification (${side.name}, whole session): guests ${finalCounts.guests}, 200 responses ${side.ok200}; request-log rows ${finalCounts.requestLog ?? '?'}, check-ins answered ${side.answered}`,
      );
      if (finalCounts.commits) {
        const c = finalCounts.commits;
        console.log(`${side.name}: ${c.transactions} transactions in ${c.commits} commits (${fmt(c.transactions / Math.max(1, c.commits), 2)} a commit)`);
      }
      if (finalCounts.guests !== side.ok200) problems.push(`${side.name}: guests in the database (${finalCounts.guests}) != 200 responses (${side.ok200})`);
      if (finalCounts.requestLog !== side.answered)
        problems.push(`${side.name}: request-log rows (${finalCounts.requestLog ?? '?'}) != requests answered (${side.answered})`);
    }
    fs.rmSync(side.dataDir, { recursive: true, force: true });
  }
  if (cpuProfDir) console.log(`CPU profiles of the server processes written to ${cpuProfDir}`);
  if (problems.length > 0) {
    console.log(`INVALID RUN: ${problems.join('; ')}`);
    process.exitCode = 1;
  } else {
    console.log('valid run: every check-in answered 200 and stored exactly once');
  }
}

const role = process.argv[2];
const roleDir = process.argv[3] ?? '';
const entry = role === '--pipeline' ? runPipelineServer(roleDir, process.argv[4] ?? null) : role === '--bare' ? runBareServer(roleDir) : main();
entry.catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
