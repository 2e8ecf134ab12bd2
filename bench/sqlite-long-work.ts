/**
 * SQLite long work beside short requests: how long a health probe and a dashboard read of
 * another hotel wait while one client runs a 20,000-guest full sync, and while the
 * retention purge deletes 500,000 request-log rows. The real server (SQLite in a
 * temporary DATA_DIR, HTTPS) runs in this process beside its clients, so a probe's
 * latency includes every turn of the event loop the long work kept.
 *
 *   npm run bench:sqlite-long-work
 *
 * Run twice in one process: `SQLITE_READER=off` (one connection for everything, and the
 * purge as the single DELETE it was: the former behaviour) and `on` (the default: reads
 * on their own connection, long transactions yield, the purge in batches). Printed for
 * each: probe latency max/p99 and how many probes were answered 200 during each long
 * request, the long request's own time, and a short check-in's latency (sequential, one
 * at a time, after 100 not counted) with the ratio on ÷ off. BENCH_CHECKINS (600) check-ins per side,
 * BENCH_SYNC_GUESTS (20000), BENCH_PURGE_ROWS (500000).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import SqliteDatabase from 'better-sqlite3';
import pino from 'pino';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { sqliteFile } from '../src/db/database.js';
import { REQUEST_LOG_RETENTION_MS, runRetention } from '../src/jobs/retention.js';
import { createHotel, createStaffUser, issueKeyPair } from '../src/operations.js';
import { startServer } from '../src/server.js';
import { describe, intEnv } from './lib/stats.js';

const CHECKINS = intEnv('BENCH_CHECKINS', 600);
const SYNC_GUESTS = intEnv('BENCH_SYNC_GUESTS', 20_000);
const PURGE_ROWS = intEnv('BENCH_PURGE_ROWS', 500_000);
const PROBE_EVERY_MS = 10;
const PASSWORD = 'bench-password-long-work';

interface ProbeFigures {
  answered: number;
  ok: number;
  max: number;
  p99: number;
}

interface SideFigures {
  sync: { ms: number; status: number; readyz: ProbeFigures; dashboard: ProbeFigures };
  purge: { ms: number; deleted: number; readyz: ProbeFigures; dashboard: ProbeFigures };
  checkin: { mean: number; median: number; p99: number };
}

/** Polls `url` every PROBE_EVERY_MS until `stop()`; the latency of each answer. */
function poll(agent: Agent, url: string, headers: Record<string, string>): { stop: () => Promise<ProbeFigures> } {
  let done = false;
  const latencies: number[] = [];
  let ok = 0;
  const loop = (async () => {
    while (!done) {
      const started = performance.now();
      const res = await request(url, { dispatcher: agent, headers });
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

/** 500,000 request-log rows older than the retention, written straight into the database file in one transaction. */
function insertOldRequestLog(dataDir: string, rows: number, hotelId: string): void {
  const sqlite = new SqliteDatabase(sqliteFile(dataDir));
  try {
    sqlite.pragma('busy_timeout = 5000');
    const insert = sqlite.prepare(
      `insert into request_log (id, created_at, hotel_id, slug, method, path, status_code, client_ip, duration_ms)
       values (?, ?, ?, 'bench', 'POST', '/guests/checkin', 200, '127.0.0.1', 1.5)`,
    );
    const old = Date.now() - REQUEST_LOG_RETENTION_MS - 24 * 60 * 60 * 1000;
    sqlite.transaction(() => {
      for (let i = 0; i < rows; i++) insert.run(`req_old_${i.toString().padStart(7, '0')}`, new Date(old + i).toISOString(), hotelId);
    })();
    // Copied into the database file now, not by the server's next commit.
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    sqlite.close();
  }
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

async function side(reader: 'on' | 'off'): Promise<SideFigures> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-long-work-'));
  const config = loadConfig({ PORT: '0', HTTP_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent', SQLITE_READER: reader });
  const server = await startServer(config, pino({ level: 'silent' }));
  const cert = fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
  const agent = new Agent({ connect: { ca: cert, servername: 'localhost' }, connections: 16 });
  const base = `https://127.0.0.1:${server.httpsPort}`;
  const db = server.database.db;
  try {
    const big = await createHotel(db, 'long-work-big', 'Big hotel');
    await createHotel(db, 'long-work-small', 'Small hotel');
    await createStaffUser(db, 'long-work-small', 'desk@example.com', 'receptionist', PASSWORD);
    const login = await request(`${base}/dashboard/api/login`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'desk@example.com', password: PASSWORD }),
    });
    await login.body.text();
    const setCookie = login.headers['set-cookie'];
    const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
    if (login.statusCode !== 200 || !cookie) throw new Error(`dashboard login failed: ${login.statusCode}`);
    const probes = (): Array<{ stop: () => Promise<ProbeFigures> }> => [
      poll(agent, `${base}/readyz`, {}),
      poll(agent, `${base}/dashboard/api/guests`, { cookie }),
    ];

    // Short check-ins, one at a time (a fresh key pair every 50: the per-key limit is 60 a minute).
    const small = await issueKeyPair(db, 'long-work-small', { maxActive: 1000 });
    let key = small.live;
    const checkins: number[] = [];
    // The first 100 warm the process up and are not counted.
    for (let i = -100; i < CHECKINS; i++) {
      if (i % 50 === 0) key = (await issueKeyPair(db, 'long-work-small', { maxActive: 1000 })).live;
      const started = performance.now();
      const res = await request(`${base}/api/pms/v1/long-work-small/guests/checkin`, {
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

    // The 20,000-guest full sync.
    const pair = await issueKeyPair(db, 'long-work-big');
    const body = JSON.stringify({ syncMode: 'full', guests: Array.from({ length: SYNC_GUESTS }, (_, i) => guestOf(i)) });
    let running = probes();
    await new Promise((resolve) => setTimeout(resolve, 100));
    let started = performance.now();
    const res = await request(`${base}/api/pms/v1/long-work-big/guests/sync`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${pair.live}`, 'content-type': 'application/json', 'idempotency-key': `sync-${reader}` },
      body,
    });
    await res.body.text();
    const syncMs = performance.now() - started;
    let [readyz, dashboard] = await Promise.all(running.map((p) => p.stop()));
    if (res.statusCode !== 200) throw new Error(`sync answered ${res.statusCode}`);
    const sync = { ms: syncMs, status: res.statusCode, readyz: readyz!, dashboard: dashboard! };

    // The purge of 500,000 old request-log rows.
    insertOldRequestLog(dataDir, PURGE_ROWS, big.id);
    running = probes();
    await new Promise((resolve) => setTimeout(resolve, 100));
    started = performance.now();
    let deleted: number;
    if (reader === 'on') {
      deleted = (await runRetention(db, null)).requestLog;
    } else {
      // The purge as it was: one DELETE of every row past the retention.
      const cutoff = new Date(Date.now() - REQUEST_LOG_RETENTION_MS).toISOString();
      deleted = Number((await db.deleteFrom('request_log').where('created_at', '<', cutoff).executeTakeFirst()).numDeletedRows);
    }
    const purgeMs = performance.now() - started;
    [readyz, dashboard] = await Promise.all(running.map((p) => p.stop()));
    if (deleted !== PURGE_ROWS) throw new Error(`the purge deleted ${deleted} rows, not ${PURGE_ROWS}`);
    const purge = { ms: purgeMs, deleted, readyz: readyz!, dashboard: dashboard! };
    return { sync, purge, checkin };
  } finally {
    await agent.close();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const fmt = (n: number): string => n.toFixed(1).padStart(7);
const probeLine = (name: string, p: ProbeFigures): string =>
  `    ${name.padEnd(22)} answered ${String(p.answered).padStart(4)} (200: ${String(p.ok).padStart(4)})  max ${fmt(p.max)} ms  p99 ${fmt(p.p99)} ms`;

async function main(): Promise<void> {
  const results: Record<string, SideFigures> = {};
  for (const reader of ['off', 'on'] as const) {
    const r = await side(reader);
    results[reader] = r;
    console.log(`SQLITE_READER=${reader}${reader === 'off' ? ' (before: one connection, single-statement purge)' : ' (after)'}`);
    console.log(`  ${SYNC_GUESTS.toLocaleString('en')}-guest full sync: ${r.sync.ms.toFixed(0)} ms`);
    console.log(probeLine('GET /readyz', r.sync.readyz));
    console.log(probeLine('GET /dashboard/api/guests', r.sync.dashboard));
    console.log(`  purge of ${PURGE_ROWS.toLocaleString('en')} request-log rows: ${r.purge.ms.toFixed(0)} ms`);
    console.log(probeLine('GET /readyz', r.purge.readyz));
    console.log(probeLine('GET /dashboard/api/guests', r.purge.dashboard));
    console.log(
      `  ${CHECKINS} sequential check-ins: mean ${r.checkin.mean.toFixed(2)} ms, median ${r.checkin.median.toFixed(2)} ms, p99 ${r.checkin.p99.toFixed(2)} ms`,
    );
  }
  const off = results.off!;
  const on = results.on!;
  console.log(
    `ratio on ÷ off: check-in mean ×${(on.checkin.mean / off.checkin.mean).toFixed(2)}, median ×${(on.checkin.median / off.checkin.median).toFixed(2)}; ` +
      `max probe during sync ×${(Math.max(on.sync.readyz.max, on.sync.dashboard.max) / Math.max(off.sync.readyz.max, off.sync.dashboard.max)).toFixed(3)}, ` +
      `during purge ×${(Math.max(on.purge.readyz.max, on.purge.dashboard.max) / Math.max(off.purge.readyz.max, off.purge.dashboard.max)).toFixed(3)}`,
  );
}

await main();
