/**
 * The cost of traces (docs/architecture.md, "Traces"): live check-ins over HTTPS against
 * `innsync serve` as an operator runs it, once with tracing off (OTEL_EXPORTER_OTLP_ENDPOINT
 * unset: the SDK is never loaded) and once on, exporting every span (OTLP/HTTP protobuf,
 * the default sampler) to a collector of this process that reads and drops them. Prints
 * each side's check-ins per second, median and p99 latency and the server's CPU time per
 * check-in, and the ratios on / off.
 *
 *   npm run bench:tracing
 *   DATABASE_URL=postgres://… npm run bench:tracing
 *
 * Knobs: BENCH_CHECKINS per side (2000), BENCH_CONNECTIONS (10), BENCH_ROUNDS (1; each
 * round runs off then on, on a server started for it).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrations.js';
import { createHotel, issueKeyPair } from '../src/operations.js';
import { startOn, type InstanceStorage } from '../test/support/drill-instance.js';
import { cpuSeconds } from './lib/proc.js';
import { intEnv } from './lib/stats.js';

/** Check-ins per key: under the 60 per minute a key may send (docs/pms-interface.md, "Rate limits"). */
const PER_KEY = 50;

interface Side {
  perSecond: number;
  medianMs: number;
  p99Ms: number;
  cpuMsPerCheckIn: number;
  errors: number;
}

/** A collector that reads each export and answers 200: the server's exporter runs as against a real one. */
async function collector(): Promise<{ url: string; bytes: () => number; close(): Promise<void> }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bytes: () => bytes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let guestNo = 0;

/** `count` check-ins over `keys` (PER_KEY each) against the server on `port`. */
async function run(port: number, pid: number, keys: string[], count: number, connections: number): Promise<Side> {
  let sent = 0;
  const cpuBefore = cpuSeconds(pid);
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      {
        url: `https://127.0.0.1:${port}/api/pms/v1/tracing-bench/guests/checkin`,
        method: 'POST',
        connections,
        amount: count,
        timeout: 30,
        requests: [
          {
            setupRequest: (req) => {
              const key = keys[Math.floor(sent++ / PER_KEY)] ?? keys[keys.length - 1];
              const n = String(++guestNo).padStart(8, '0');
              req.headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `trace-bench-${n}` };
              req.body = JSON.stringify({
                pmsGuestId: `G-${n}`,
                lastName: 'Lovelace',
                firstName: 'Ada',
                roomNumber: `R${n}`,
                checkInDate: '2026-11-23',
                checkOutDate: '2026-11-26',
              });
              return req;
            },
          },
        ],
      },
      (err: unknown, res: autocannon.Result) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(res)),
    );
  });
  const cpu = cpuSeconds(pid) - cpuBefore;
  const ok = result['2xx'];
  return {
    perSecond: ok / (result.duration || 1),
    medianMs: result.latency.p50,
    p99Ms: result.latency.p99,
    cpuMsPerCheckIn: (cpu * 1000) / Math.max(1, ok),
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

async function keysFor(storage: InstanceStorage, count: number): Promise<string[]> {
  const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
  try {
    const keys: string[] = [];
    for (let i = 0; i < count; i++) keys.push((await issueKeyPair(handle.db, 'tracing-bench')).live);
    return keys;
  } finally {
    await handle.close();
  }
}

/** One side: a server started with `env`, a warm-up, then the measured check-ins. */
async function side(storage: InstanceStorage, env: Record<string, string>, checkIns: number, connections: number): Promise<Side> {
  const warmUp = 200;
  const keys = await keysFor(storage, Math.ceil((checkIns + warmUp) / PER_KEY));
  const instance = await startOn(storage, env.OTEL_EXPORTER_OTLP_ENDPOINT ? 'tracing on' : 'tracing off', env);
  try {
    await run(instance.port, instance.pid, keys.slice(0, warmUp / PER_KEY), warmUp, connections);
    return await run(instance.port, instance.pid, keys.slice(warmUp / PER_KEY), checkIns, connections);
  } finally {
    await instance.stop();
  }
}

const line = (label: string, s: Side): string =>
  `${label.padEnd(12)} ${s.perSecond.toFixed(0).padStart(6)} check-ins/s   median ${s.medianMs.toFixed(1)} ms   p99 ${s.p99Ms.toFixed(1)} ms   CPU ${s.cpuMsPerCheckIn.toFixed(2)} ms per check-in   errors ${s.errors}`;

async function main(): Promise<void> {
  const checkIns = intEnv('BENCH_CHECKINS', 2000);
  const connections = intEnv('BENCH_CONNECTIONS', 10);
  const rounds = intEnv('BENCH_ROUNDS', 1);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-tracing-bench-'));
  const storage: InstanceStorage = { dataDir, databaseUrl: process.env.DATABASE_URL ?? null };
  const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir });
  await migrateToLatest(handle.db);
  await createHotel(handle.db, 'tracing-bench', 'Tracing Bench Hotel');
  await handle.close();
  const otlp = await collector();
  try {
    for (let r = 1; r <= rounds; r++) {
      const off = await side(storage, {}, checkIns, connections);
      const on = await side(storage, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url }, checkIns, connections);
      console.log(`round ${r} of ${rounds}: ${checkIns} live check-ins per side, ${connections} connections, ${storage.databaseUrl ? 'PostgreSQL' : 'SQLite'}`);
      console.log(line('tracing off', off));
      console.log(line('tracing on', on));
      console.log(
        `on / off     throughput ×${(on.perSecond / off.perSecond).toFixed(3)}   median ×${(on.medianMs / off.medianMs).toFixed(3)}   p99 ×${(on.p99Ms / off.p99Ms).toFixed(3)}   CPU per check-in ×${(on.cpuMsPerCheckIn / off.cpuMsPerCheckIn).toFixed(3)}   (${otlp.bytes()} bytes of spans exported so far)`,
      );
    }
  } finally {
    await otlp.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
