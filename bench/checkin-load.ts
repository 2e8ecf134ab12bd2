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
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Db } from '../src/db/database.js';
import { randomId } from '../src/domain/ids.js';
import { createHotel, issueKeyPair } from '../src/operations.js';
import { CheckinResponse } from '../src/pms/schemas.js';
import { startServer } from '../src/server.js';

// ---------------------------------------------------------------- settings

function intEnv(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer ${min}-${max}, got "${raw}"`);
  return n;
}

// ---------------------------------------------------------------- IPC

type ToChild = { type: 'issueKeys'; count: number } | { type: 'counts' } | { type: 'cpu' } | { type: 'stop' };

interface Counts {
  guests: number;
  activity: number;
  idempotencyDone: number;
  /** Only after `stop` (the request log is flushed on close). */
  requestLog?: number;
}

type FromChild =
  | { type: 'ready'; port: number; engine: string; slug: string }
  | { type: 'keys'; keys: string[] }
  | { type: 'counts'; counts: Counts }
  | { type: 'stopped'; counts: Counts }
  | { type: 'cpu'; micros: number }
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

async function runPipelineServer(dataDir: string): Promise<void> {
  const env = {
    PORT: '0',
    HTTP_PORT: 'off',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    DATABASE_URL: process.env.DATABASE_URL,
    SQLITE_SYNCHRONOUS: process.env.SQLITE_SYNCHRONOUS,
    SQLITE_READER: process.env.SQLITE_READER,
  };
  const config = loadConfig(env);
  const server = await startServer(config, pino({ level: 'silent' }));
  const db = server.database.db;
  const slug = `bench-${randomId(10)}`;
  const hotel = await createHotel(db, slug, 'Benchmark Hotel');

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
        } else {
          // Closing flushes the batched request log; count it afterwards on a new handle.
          await server.close();
          const again = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
          try {
            const counts = await countRows(again.db, hotel.id);
            const log = await again.db
              .selectFrom('request_log')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('hotel_id', '=', hotel.id)
              .executeTakeFirstOrThrow();
            send({ type: 'stopped', counts: { ...counts, requestLog: Number(log.n) } });
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
): Promise<{ child: Child; port: number; engine: string; slug: string }> {
  const execArgv = cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir, '--cpu-prof-name', `${role}-${Date.now()}.cpuprofile`] : [];
  const proc = fork(fileURLToPath(import.meta.url), [`--${role}`, dataDir], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const child = new Child(proc);
  const ready = await child.next();
  if (ready.type !== 'ready') throw new Error(`${role} server did not start`);
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

async function main(): Promise<void> {
  const connections = intEnv('BENCH_CONNECTIONS', 10, 1, 1000);
  const duration = intEnv('BENCH_DURATION', 10, 1, 3600);
  const warmup = intEnv('BENCH_WARMUP', 3, 0, 600);
  const rounds = intEnv('BENCH_ROUNDS', 1, 1, 100);
  const perKey = intEnv('BENCH_PER_KEY', 50, 1, 60);
  const cpuProfDir = process.env.BENCH_CPU_PROF ? path.resolve(process.env.BENCH_CPU_PROF) : null;

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-bench-'));
  const pipeline = await startChild('pipeline', dataDir, cpuProfDir);
  const bare = await startChild('bare', dataDir, cpuProfDir);
  const cert = fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
  const checkinPath = `/api/pms/v1/${pipeline.slug}/guests/checkin`;
  const tag = randomId(6);
  const live = new CheckinFactory(tag, perKey);
  // The bare route checks nothing; its requests have the same size (same path, a key of
  // the same length, the same body shape and digits).
  const shadow = new CheckinFactory(tag, Number.MAX_SAFE_INTEGER);
  shadow.useKeys([`pms_live_${'x'.repeat(32)}`]);

  console.log(`innsync check-in load benchmark, ${new Date().toISOString()}`);
  console.log(
    `engine ${pipeline.engine}, node ${process.version}, ${os.cpus().length} CPUs (client and both servers share them), ` +
      `${connections} connections, ${duration} s per measured run, ${warmup} s warm-up, ${rounds} round(s)`,
  );

  // Probe: one check-in each side, over a verified TLS connection; the bodies must match in size.
  live.useKeys(await issueKeys(pipeline.child, 1));
  const p = await probe(pipeline.port, cert, checkinPath, live.next());
  const b = await probe(bare.port, cert, checkinPath, shadow.next());
  if (p.status !== 200) throw new Error(`probe check-in answered ${p.status}: ${p.body}`);
  let ok200 = 1;
  let answered = 1;
  console.log(`response body: pipeline ${Buffer.byteLength(p.body)} bytes, bare ${Buffer.byteLength(b.body)} bytes`);
  if (Buffer.byteLength(p.body) !== Buffer.byteLength(b.body)) console.log('WARNING: the response bodies differ in size');

  const everyRun: Measured[] = [];
  const runLive = async (label: string, amount: number): Promise<Measured> => {
    live.useKeys(await issueKeys(pipeline.child, Math.ceil(amount / perKey) + 1));
    await pause(500); // let the previous run's request-log batch settle
    const m = await load(label, pipeline, checkinPath, live, amount, connections);
    ok200 += m.ok;
    answered += m.requests;
    everyRun.push(m);
    return m;
  };
  const runBare = async (label: string, amount: number): Promise<Measured> => {
    await pause(500);
    const m = await load(label, bare, checkinPath, shadow, amount, connections);
    everyRun.push(m);
    return m;
  };
  const sized = (m: Measured, seconds: number): number => Math.max(connections * 5, Math.round(m.rps * seconds));

  // Warm-up: a short calibration run, then about BENCH_WARMUP seconds for each side in
  // two halves, so the measured run is sized from a warm rate.
  let pRate = await runLive('calibrate', connections * 20);
  let bRate = await runBare('calibrate', connections * 20);
  for (let half = 0; half < 2 && warmup > 0; half++) {
    pRate = await runLive('warm-up', sized(pRate, warmup / 2));
    bRate = await runBare('warm-up', sized(bRate, warmup / 2));
  }

  const before = await pipeline.child.counts();
  const okBefore = ok200;
  const results: Array<{ pipeline: Measured; bare: Measured }> = [];
  for (let r = 0; r < rounds; r++) {
    const pm = await runLive('pipeline', sized(pRate, duration));
    const bm = await runBare('bare', sized(bRate, duration));
    results.push({ pipeline: pm, bare: bm });
    pRate = pm;
    bRate = bm;
  }
  await pause(500);
  const after = await pipeline.child.counts();
  const measuredOk = ok200 - okBefore;

  const stopped = await pipeline.child.request({ type: 'stop' });
  await bare.child.request({ type: 'stop' });
  const finalCounts = stopped.type === 'stopped' ? stopped.counts : null;

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
  results.forEach((res, i) => {
    const suffix = rounds > 1 ? ` #${i + 1}` : '';
    line(`pipeline (check-in)${suffix}`, res.pipeline);
    line(`bare Fastify route${suffix}`, res.bare);
    const ratio = res.pipeline.rps / res.bare.rps;
    ratios.push(ratio);
    console.log(`${`ratio pipeline/bare${suffix}`.padEnd(widths[0] ?? 0)}  ${fmt(ratio * 100, 1)} %   (req/s; target >= 50 %)`);
    // Were both servers the bottleneck, the req/s ratio would be the inverse CPU-cost ratio.
    console.log(
      `${''.padEnd(widths[0] ?? 0)}  ${fmt((res.bare.cpuPerRequest / res.pipeline.cpuPerRequest) * 100, 1)} %   (server CPU per request, bare ÷ pipeline)`,
    );
  });
  const bareBusy = Math.max(...results.map((r) => r.bare.serverBusy));
  if (bareBusy < 0.9) {
    console.log(
      `note: the bare server was at most ${fmt(bareBusy * 100, 0)} % busy, so its req/s is limited by the load generator ` +
        '(one autocannon thread on the same CPUs), which flatters the req/s ratio.',
    );
  }
  if (rounds > 1) {
    const sorted = [...ratios].sort((a, b2) => a - b2);
    const mid = Math.floor(sorted.length / 2);
    const median = sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
    console.log(
      `ratio over ${rounds} rounds: median ${fmt(median * 100)} %, min ${fmt((sorted[0] ?? 0) * 100)} %, max ${fmt((sorted[sorted.length - 1] ?? 0) * 100)} %`,
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
  if (live.exhausted) problems.push('ran out of API keys (raise the key budget)');
  const guestsDelta = after.guests - before.guests;
  console.log('');
  console.log(
    `verification (measured runs): guests created ${guestsDelta}, 200 responses ${measuredOk}, activity entries ${after.activity - before.activity}, idempotency records completed ${after.idempotencyDone - before.idempotencyDone}`,
  );
  if (guestsDelta !== measuredOk) problems.push(`guests created (${guestsDelta}) != 200 responses (${measuredOk})`);
  if (after.activity - before.activity !== measuredOk) problems.push('activity entries != 200 responses');
  if (after.idempotencyDone - before.idempotencyDone !== measuredOk) problems.push('completed idempotency records != 200 responses');
  if (finalCounts) {
    console.log(
      `verification (whole session): guests ${finalCounts.guests}, 200 responses ${ok200}; request-log rows ${finalCounts.requestLog ?? '?'}, check-ins answered ${answered}`,
    );
    if (finalCounts.guests !== ok200) problems.push(`guests in the database (${finalCounts.guests}) != 200 responses (${ok200})`);
    if (finalCounts.requestLog !== answered) problems.push(`request-log rows (${finalCounts.requestLog ?? '?'}) != requests answered (${answered})`);
  }
  if (cpuProfDir) console.log(`CPU profiles of the server processes written to ${cpuProfDir}`);
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (problems.length > 0) {
    console.log(`INVALID RUN: ${problems.join('; ')}`);
    process.exitCode = 1;
  } else {
    console.log('valid run: every check-in answered 200 and stored exactly once');
  }
}

const role = process.argv[2];
const roleDir = process.argv[3] ?? '';
const entry = role === '--pipeline' ? runPipelineServer(roleDir) : role === '--bare' ? runBareServer(roleDir) : main();
entry.catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
