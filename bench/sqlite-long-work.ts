/**
 * SQLite long work beside short requests: how long a health probe and a dashboard read of
 * another hotel wait while the service does long work on SQLite: a 20,000-guest full sync,
 * the retention purge of 500,000 request-log rows, a guest's export and erasure, a
 * request-log search, and `innsync backup`. The real server (SQLite in a temporary
 * DATA_DIR, HTTPS) runs in a process of its own; this process only sends the requests (the
 * sync's 20,000-guest body is built before the probes start), so a probe's latency is the
 * server's, not the benchmark's. The server also measures its own event loop while each
 * long work runs (perf_hooks monitorEventLoopDelay): the longest turn it could not take.
 *
 *   npm run bench:sqlite-long-work
 *
 * Run twice: `SQLITE_READER=off` (one connection on the event loop for everything, and
 * the purge as the single DELETE it was: the former behaviour) and `on` (the default:
 * writer in the service's thread, readers and checkpoints in worker threads, the purge in
 * batches). Printed for each: probe
 * latency max/p99 and how many probes were answered 200 during each long work, the server's
 * longest event-loop delay meanwhile, the long work's own time, and a short check-in's
 * latency (sequential, one at a time, after 100 not counted) with the ratio on ÷ off.
 * BENCH_CHECKINS (600) check-ins per side, BENCH_SYNC_GUESTS (20000), BENCH_PURGE_ROWS
 * (500000); BENCH_SIDES (`off,on`: one of them alone for a quicker look); BENCH_CPU_PROF=<dir>
 * writes a V8 CPU profile of each server.
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pino from 'pino';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { REQUEST_LOG_RETENTION_MS, runRetention } from '../src/jobs/retention.js';
import { createHotel, createStaffUser, issueKeyPair } from '../src/operations.js';
import { startServer } from '../src/server.js';
import { describe, intEnv } from './lib/stats.js';

const CHECKINS = intEnv('BENCH_CHECKINS', 600);
const SYNC_GUESTS = intEnv('BENCH_SYNC_GUESTS', 20_000);
const PURGE_ROWS = intEnv('BENCH_PURGE_ROWS', 500_000);
const PROBE_EVERY_MS = 10;
/** BENCH_SIDES: which of the two to run (both unless told: the ratio needs both). */
const SIDES = (process.env.BENCH_SIDES ?? 'off,on').split(',').filter((s): s is 'on' | 'off' => s === 'on' || s === 'off');
const PASSWORD = 'bench-password-long-work';
const BIG = 'long-work-big';
const SMALL = 'long-work-small';
/** A third hotel, whose check-ins are sent beside the long work (the small hotel's board stays one guest). */
const WRITES = 'long-work-writes';

type ToServer =
  | { type: 'keys'; slug: string; count: number }
  | { type: 'loopStart' }
  | { type: 'loopStop' }
  | { type: 'insertOld'; rows: number }
  | { type: 'purge' }
  | { type: 'stop' };

type FromServer =
  | { type: 'ready'; port: number }
  | { type: 'keys'; keys: string[] }
  | { type: 'loop'; max: number; p99: number }
  | { type: 'done'; ms?: number; deleted?: number }
  | { type: 'error'; message: string };

// ---------------------------------------------------------------- child: the server

async function runServer(dataDir: string, reader: 'on' | 'off'): Promise<void> {
  const send = (msg: FromServer): void => void process.send?.(msg);
  const config = loadConfig({
    PORT: '0',
    HTTP_PORT: 'off',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    LOG_LEVEL: 'silent',
    SQLITE_READER: reader,
  });
  const server = await startServer(config, pino({ level: 'silent' }));
  const startedAt = performance.now();
  const db = server.database.db;
  const big = await createHotel(db, BIG, 'Big hotel');
  await createHotel(db, SMALL, 'Small hotel');
  await createHotel(db, WRITES, 'Third hotel');
  await createStaffUser(db, SMALL, 'desk@example.com', 'receptionist', PASSWORD);
  await createStaffUser(db, BIG, 'admin@example.com', 'admin', PASSWORD);
  let loop: IntervalHistogram | null = null;
  process.on('message', (raw) => {
    const msg = raw as ToServer;
    void (async () => {
      try {
        if (msg.type === 'keys') {
          const keys: string[] = [];
          for (let i = 0; i < msg.count; i++) keys.push((await issueKeyPair(db, msg.slug, { maxActive: 1000 })).live);
          send({ type: 'keys', keys });
        } else if (msg.type === 'loopStart') {
          loop = monitorEventLoopDelay({ resolution: 5 });
          loop.enable();
          send({ type: 'done' });
        } else if (msg.type === 'loopStop') {
          loop?.disable();
          send({ type: 'loop', max: (loop?.max ?? 0) / 1e6, p99: (loop?.percentile(99) ?? 0) / 1e6 });
          loop = null;
        } else if (msg.type === 'insertOld') {
          // The service's own first retention run (5 s after its start) is over before the old rows come.
          const wait = startedAt + 7_000 - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          // Old request-log rows in one statement through the server's own writer, then copied into the database file.
          const oldest = Date.now() - REQUEST_LOG_RETENTION_MS - 24 * 60 * 60 * 1000;
          await sql`insert into request_log (id, created_at, hotel_id, slug, method, path, status_code, client_ip, duration_ms)
            with recursive n(i) as (select 0 union all select i + 1 from n where i < ${msg.rows - 1})
            select 'req_old_' || i, strftime('%Y-%m-%dT%H:%M:%fZ', (${oldest} + i) / 1000.0, 'unixepoch'), ${big.id}, ${BIG}, 'POST', '/guests/checkin', 200, '127.0.0.1', 1.5 from n`.execute(
            db,
          );
          await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db);
          send({ type: 'done' });
        } else if (msg.type === 'purge') {
          const started = performance.now();
          let deleted: number;
          if (reader === 'on') {
            deleted = (await runRetention(db, null)).requestLog;
          } else {
            // The purge as it was: one DELETE of every row past the retention.
            const cutoff = new Date(Date.now() - REQUEST_LOG_RETENTION_MS).toISOString();
            deleted = Number((await db.deleteFrom('request_log').where('created_at', '<', cutoff).executeTakeFirst()).numDeletedRows);
          }
          send({ type: 'done', ms: performance.now() - started, deleted });
        } else {
          await server.close();
          send({ type: 'done' });
          process.disconnect();
        }
      } catch (err) {
        send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    })();
  });
  send({ type: 'ready', port: server.httpsPort });
}

// ---------------------------------------------------------------- parent: the clients

class ServerProcess {
  private readonly waiting: Array<(msg: FromServer) => void> = [];
  readonly proc: ChildProcess;

  constructor(dataDir: string, reader: 'on' | 'off') {
    const profDir = process.env.BENCH_CPU_PROF;
    const execArgv = profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir, '--cpu-prof-name', `server-${reader}-${Date.now()}.cpuprofile`] : [];
    this.proc = fork(fileURLToPath(import.meta.url), ['--server', dataDir, reader], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.proc.on('message', (raw) => {
      const msg = raw as FromServer;
      if (msg.type === 'error') {
        console.error(`server process failed:\n${msg.message}`);
        process.exit(2);
      }
      this.waiting.shift()?.(msg);
    });
    this.proc.on('exit', (code) => {
      if (code !== 0 && code !== null) {
        console.error(`server process exited with code ${code}`);
        process.exit(2);
      }
    });
  }

  next(): Promise<FromServer> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  ask(msg: ToServer): Promise<FromServer> {
    const reply = this.next();
    this.proc.send(msg);
    return reply;
  }

  async keys(slug: string, count: number): Promise<string[]> {
    const r = await this.ask({ type: 'keys', slug, count });
    if (r.type !== 'keys') throw new Error(`unexpected reply ${r.type}`);
    return r.keys;
  }
}

interface ProbeFigures {
  answered: number;
  ok: number;
  max: number;
  p99: number;
}

interface LongWork {
  name: string;
  ms: number;
  readyz: ProbeFigures;
  dashboard: ProbeFigures;
  /** Check-ins of a third hotel: writes, which wait for the one writer. */
  checkin: ProbeFigures;
  /** The server's longest event-loop delay (and its p99) while the work ran. */
  loop: { max: number; p99: number };
}

interface SideFigures {
  works: LongWork[];
  checkin: { mean: number; median: number; p99: number };
}

interface ProbeRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/** Sends `next()` every PROBE_EVERY_MS after the last answer until `stop()`; the latency of each answer. */
function poll(agent: Agent, next: () => ProbeRequest): { stop: () => Promise<ProbeFigures> } {
  let done = false;
  const latencies: number[] = [];
  let ok = 0;
  const loop = (async () => {
    while (!done) {
      const { url, method = 'GET', headers, body } = next();
      const started = performance.now();
      const res = await request(url, { method, dispatcher: agent, headers, body });
      await res.body.text();
      latencies.push(performance.now() - started);
      if (res.statusCode === 200) ok++;
      const wait = PROBE_EVERY_MS - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  return {
    stop: async () => {
      done = true;
      await loop;
      const d = describe(latencies);
      return { answered: latencies.length, ok, max: d.max, p99: d.p99 };
    },
  };
}

const guestOf = (i: number): Record<string, unknown> => ({
  pmsGuestId: `G${i}`,
  roomNumber: `${1000 + i}`,
  lastName: 'Lovelace',
  firstName: 'Ada',
  checkInDate: '2026-11-23',
  checkOutDate: '2026-11-26',
  email: 'ada@example.com',
  language: 'en',
  adults: 2,
});

interface Session {
  cookie: string;
  csrf: string;
}

async function login(agent: Agent, base: string, email: string): Promise<Session> {
  const res = await request(`${base}/dashboard/api/login`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  const body = (await res.body.json()) as { csrfToken?: string };
  const setCookie = res.headers['set-cookie'];
  const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
  if (res.statusCode !== 200 || !cookie || !body.csrfToken) throw new Error(`dashboard login of ${email} failed: ${res.statusCode}`);
  return { cookie, csrf: body.csrfToken };
}

async function side(reader: 'on' | 'off'): Promise<SideFigures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-long-work-'));
  const server = new ServerProcess(dataDir, reader);
  const ready = await server.next();
  if (ready.type !== 'ready') throw new Error('the server did not start');
  const cert = fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
  const agent = new Agent({ connect: { ca: cert, servername: 'localhost' }, connections: 16 });
  const base = `https://127.0.0.1:${ready.port}`;
  const works: LongWork[] = [];
  try {
    const desk = await login(agent, base, 'desk@example.com');
    const admin = await login(agent, base, 'admin@example.com');

    // Keys for the check-ins sent beside the long work (a new one every 50: the limit is 60 a minute per key).
    const writeKeys = await server.keys(WRITES, 40);
    let written = 0;

    /** Runs `work` between probes and the server's event-loop monitor; its own time. */
    const measure = async (name: string, work: () => Promise<void>): Promise<void> => {
      await server.ask({ type: 'loopStart' });
      const running = [
        poll(agent, () => ({ url: `${base}/readyz`, headers: {} })),
        poll(agent, () => ({ url: `${base}/dashboard/api/guests`, headers: { cookie: desk.cookie } })),
        poll(agent, () => {
          const n = written++;
          return {
            url: `${base}/api/pms/v1/${WRITES}/guests/checkin`,
            method: 'POST',
            headers: {
              authorization: `Bearer ${writeKeys[Math.floor(n / 50) % writeKeys.length]}`,
              'content-type': 'application/json',
              'idempotency-key': `w-${reader}-${n}`,
            },
            body: JSON.stringify({ ...guestOf(n), pmsGuestId: `W${n}`, roomNumber: `W${n}` }),
          };
        }),
      ];
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = performance.now();
      const outcome = await work().then(
        () => null,
        (err: unknown) => err,
      );
      const ms = performance.now() - started;
      const [readyz, dashboard, checkin] = await Promise.all(running.map((p) => p.stop()));
      if (outcome !== null) throw outcome;
      const loop = await server.ask({ type: 'loopStop' });
      if (loop.type !== 'loop') throw new Error(`unexpected reply ${loop.type}`);
      works.push({ name, ms, readyz: readyz!, dashboard: dashboard!, checkin: checkin!, loop: { max: loop.max, p99: loop.p99 } });
    };
    const call = async (method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: string): Promise<unknown> => {
      const res = await request(`${base}${url}`, { method, dispatcher: agent, headers, body });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${method} ${url} answered ${res.statusCode}: ${text.slice(0, 300)}`);
      return JSON.parse(text);
    };

    // Short check-ins, one at a time (a fresh key every 50: the per-key limit is 60 a minute).
    const smallKeys = await server.keys(SMALL, Math.ceil((CHECKINS + 100) / 50) + 1);
    const checkins: number[] = [];
    // The first 100 warm the process up and are not counted.
    for (let i = -100; i < CHECKINS; i++) {
      const key = smallKeys[Math.floor((i + 100) / 50)]!;
      const started = performance.now();
      const res = await request(`${base}/api/pms/v1/${SMALL}/guests/checkin`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `ci-${reader}-${i}` },
        body: JSON.stringify({ ...guestOf(i), pmsGuestId: `S${i + 100}`, roomNumber: `S${i + 100}` }),
      });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`check-in answered ${res.statusCode}`);
      if (i >= 0) checkins.push(performance.now() - started);
    }
    const c = describe(checkins);
    const checkin = { mean: checkins.reduce((a, b) => a + b, 0) / checkins.length, median: c.median, p99: c.p99 };

    // The full sync, its body built before the probes start.
    const [bigKey] = await server.keys(BIG, 1);
    const auth = { authorization: `Bearer ${bigKey}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ syncMode: 'full', guests: Array.from({ length: SYNC_GUESTS }, (_, i) => guestOf(i)) });
    await measure(`${SYNC_GUESTS.toLocaleString('en')}-guest full sync`, async () => {
      await call('POST', `/api/pms/v1/${BIG}/guests/sync`, { ...auth, 'idempotency-key': `sync-${reader}` }, body);
    });

    // The same list again, every guest's departure a day later: 20,000 updates against a full roster.
    const again = JSON.stringify({ syncMode: 'full', guests: Array.from({ length: SYNC_GUESTS }, (_, i) => ({ ...guestOf(i), checkOutDate: '2026-11-27' })) });
    await measure(`${SYNC_GUESTS.toLocaleString('en')}-guest full sync, every guest updated`, async () => {
      await call('POST', `/api/pms/v1/${BIG}/guests/sync`, { ...auth, 'idempotency-key': `sync-again-${reader}` }, again);
    });

    // One guest of the sync leaves; an admin exports, then erases, its personal data.
    const out = (await call(
      'POST',
      `/api/pms/v1/${BIG}/guests/checkout`,
      { ...auth, 'idempotency-key': `out-${reader}` },
      JSON.stringify({ pmsGuestId: 'G0' }),
    )) as {
      guestId: string;
    };
    const adminHeaders = { cookie: admin.cookie, 'x-csrf-token': admin.csrf };
    await measure('guest export', async () => {
      await call('GET', `/dashboard/api/guests/${out.guestId}/export`, adminHeaders);
    });
    await measure('guest erasure', async () => {
      await call('POST', `/dashboard/api/guests/${out.guestId}/erase`, adminHeaders);
    });

    // The purge of old request-log rows; a request-log search beside them first.
    const inserted = await server.ask({ type: 'insertOld', rows: PURGE_ROWS });
    if (inserted.type !== 'done') throw new Error(`unexpected reply ${inserted.type}`);
    await measure(`request-log search (${PURGE_ROWS.toLocaleString('en')} rows)`, async () => {
      await call('GET', `/dashboard/api/requests?status=5xx&limit=100`, { cookie: admin.cookie });
    });
    const backupFile = path.join(dataDir, 'backup.sqlite');
    await measure('innsync backup', async () => {
      const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'innsync.js');
      await new Promise<void>((resolve, reject) =>
        execFile(process.execPath, [bin, 'backup', backupFile], { env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' } }, (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    });
    let deleted = 0;
    await measure(`purge of ${PURGE_ROWS.toLocaleString('en')} request-log rows`, async () => {
      const r = await server.ask({ type: 'purge' });
      if (r.type !== 'done') throw new Error(`unexpected reply ${r.type}`);
      deleted = r.deleted ?? 0;
    });
    if (deleted < PURGE_ROWS) throw new Error(`the purge deleted ${deleted} rows, not ${PURGE_ROWS}`);
    return { works, checkin };
  } finally {
    await agent.close();
    await server.ask({ type: 'stop' });
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const fmt = (n: number): string => n.toFixed(1).padStart(7);
const probeLine = (name: string, p: ProbeFigures): string =>
  `    ${name.padEnd(26)} answered ${String(p.answered).padStart(4)} (200: ${String(p.ok).padStart(4)})  max ${fmt(p.max)} ms  p99 ${fmt(p.p99)} ms`;

async function main(): Promise<void> {
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}; ${os.cpus().length} CPUs; Node.js ${process.version}`,
  );
  const results: Record<string, SideFigures> = {};
  for (const reader of SIDES) {
    const r = await side(reader);
    results[reader] = r;
    console.log(
      `SQLITE_READER=${reader}${reader === 'off' ? ' (one connection on the event loop, single-statement purge)' : ' (readers in worker threads: the default)'}`,
    );
    for (const w of r.works) {
      console.log(`  ${w.name}: ${w.ms.toFixed(0)} ms; server event loop: longest delay ${w.loop.max.toFixed(1)} ms, p99 ${w.loop.p99.toFixed(1)} ms`);
      console.log(probeLine('GET /readyz', w.readyz));
      console.log(probeLine('GET /dashboard/api/guests', w.dashboard));
      console.log(probeLine('POST /guests/checkin', w.checkin));
    }
    console.log(
      `  ${CHECKINS} sequential check-ins: mean ${r.checkin.mean.toFixed(2)} ms, median ${r.checkin.median.toFixed(2)} ms, p99 ${r.checkin.p99.toFixed(2)} ms`,
    );
  }
  const off = results.off;
  const on = results.on;
  if (!off || !on) return;
  console.log(
    `ratio on ÷ off: check-in mean ×${(on.checkin.mean / off.checkin.mean).toFixed(2)}, median ×${(on.checkin.median / off.checkin.median).toFixed(2)}`,
  );
  on.works.forEach((w, i) => {
    const o = off.works[i]!;
    const maxOf = (x: LongWork): number => Math.max(x.readyz.max, x.dashboard.max);
    console.log(`  ${w.name}: max probe ×${(maxOf(w) / maxOf(o)).toFixed(3)}, own time ×${(w.ms / o.ms).toFixed(2)}`);
  });
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
  );
}

const entry = process.argv[2] === '--server' ? runServer(process.argv[3]!, process.argv[4] === 'off' ? 'off' : 'on') : main();
entry.catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
