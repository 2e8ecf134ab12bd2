/**
 * The hostile-load benchmark's HTTP/2 "rapid reset" scenario (`hostile-load.js --rapid-reset`):
 * a PMS client sending live check-ins, alone ("quiet") and then while an attacker, from an
 * address of its own, keeps N HTTP/2 connections busy sending HEADERS followed at once by
 * RST_STREAM (up to --streams pairs per connection, reconnecting whenever the server closes
 * one). Reported: the PMS client's p50/p95/p99/max in both phases and the ratio of the p99s,
 * what the attacker saw (streams sent, GOAWAY codes, connections refused), the request-log
 * rows written for the attacker's address, the server's peak RSS. Target: no PMS error under
 * attack, p99 within 3× the quiet p99, at most a handful of rows for the reset streams.
 *
 *   node dist/bench/hostile-load.js --rapid-reset [--seconds 10] [--rate 20] [--connections 5]
 *     [--streams 20000] [--engine sqlite|postgres] [--env KEY=VALUE]… [--json]
 *
 * Three processes, as in the main scenario: this one (the PMS client), the server and the
 * attacker (hostile-load.js --reset-attacker).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Engine } from '../../src/db/database.js';
import { startPostgresCluster, type PostgresCluster } from '../../test/support/postgres-cluster.js';
import { H2_ERROR, RawH2 } from '../../test/support/h2-frames.js';
import { pmsPost } from '../../test/support/drill-http.js';
import { Instance, sleep } from '../../test/support/drill-instance.js';
import { percentile, round } from '../../test/support/drill-report.js';
import { addHotel, createStorage, type DrillStorage } from '../../test/support/drill-storage.js';

const PMS_PER_KEY = 40;
const ATTACKER_ADDRESS = '127.0.0.3';
const BATCH = 100;

interface ResetAttack {
  port: number;
  slug: string;
  key: string;
  address: string;
  connections: number;
  streams: number;
}

interface ResetStats {
  connectionsOpened: number;
  /** Connection attempts closed before the TLS handshake ended (an address refused). */
  refused: number;
  streamsSent: number;
  /** How the server ended the attacker's connections: GOAWAY error code (name), or none. */
  endings: Record<string, number>;
  /** HEADERS+RST_STREAM pairs a connection got out before the server closed it, p50 / max. */
  perConnectionP50: number;
  perConnectionMax: number;
}

type FromResetAttacker = { type: 'ready' } | { type: 'stats'; stats: ResetStats };

const CODE_NAMES: Record<number, string> = Object.fromEntries(Object.entries(H2_ERROR).map(([name, code]) => [code, name]));

/** The attacker (child process): `connections` slots, each connecting and sending pairs until stopped. */
export async function runResetAttacker(): Promise<void> {
  const send = (m: FromResetAttacker) => process.send?.(m);
  let stop = false;
  const stats: ResetStats = { connectionsOpened: 0, refused: 0, streamsSent: 0, endings: {}, perConnectionP50: 0, perConnectionMax: 0 };
  const perConnection: number[] = [];
  const slot = async (a: ResetAttack): Promise<void> => {
    const headers: Array<[string, string]> = [
      [':method', 'GET'],
      [':scheme', 'https'],
      [':authority', `127.0.0.1:${a.port}`],
      [':path', `/api/pms/v1/${a.slug}/guests`],
      ['authorization', `Bearer ${a.key}`],
    ];
    while (!stop) {
      const conn = await RawH2.connect({ host: '127.0.0.1', port: a.port, localAddress: a.address }).catch(() => null);
      if (!conn) {
        stats.refused++;
        await sleep(50);
        continue;
      }
      stats.connectionsOpened++;
      let sent = 0;
      while (!stop && sent < a.streams && !conn.socket.destroyed) {
        const frames: Buffer[] = [];
        for (let i = 0; i < BATCH; i++) {
          const id = conn.newStream();
          frames.push(RawH2.request(id, headers), RawH2.rstStream(id, H2_ERROR.CANCEL));
        }
        if (!(await conn.write(Buffer.concat(frames)))) break;
        sent += BATCH;
        await new Promise((resolve) => setImmediate(resolve));
      }
      stats.streamsSent += sent;
      perConnection.push(sent);
      const ending = conn.goaway ? (CODE_NAMES[conn.goaway.errorCode] ?? String(conn.goaway.errorCode)) : 'none';
      stats.endings[ending] = (stats.endings[ending] ?? 0) + 1;
      conn.destroy();
    }
  };
  const slots: Array<Promise<void>> = [];
  process.on('message', (m: { type: 'start'; attack: ResetAttack } | { type: 'stop' }) => {
    if (m.type === 'start') for (let i = 0; i < m.attack.connections; i++) slots.push(slot(m.attack));
    else {
      stop = true;
      void Promise.all(slots).then(() => {
        const sorted = perConnection.sort((x, y) => x - y);
        stats.perConnectionP50 = percentile(sorted, 50);
        stats.perConnectionMax = sorted[sorted.length - 1] ?? 0;
        send({ type: 'stats', stats });
        process.exit(0);
      });
    }
  });
  send({ type: 'ready' });
}

interface Phase {
  phase: string;
  sent: number;
  ok: number;
  errors: Record<string, number>;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Open loop: one check-in every 1/rate s, latency from its scheduled moment. */
async function pmsPhase(phase: string, seconds: number, rate: number, baseUrl: string, slug: string, keys: string[], counter: { n: number }): Promise<Phase> {
  const latencies: number[] = [];
  const errors: Record<string, number> = {};
  let ok = 0;
  const pending: Array<Promise<void>> = [];
  const began = performance.now();
  const planned = Math.max(1, Math.round(seconds * rate));
  for (let i = 0; i < planned; i++) {
    const at = began + (i * 1000) / rate;
    const wait = at - performance.now();
    if (wait > 0) await sleep(wait);
    const n = counter.n++;
    const key = keys[Math.floor(n / PMS_PER_KEY)];
    if (key === undefined) throw new Error('the PMS client ran out of keys');
    const id = String(n).padStart(7, '0');
    const body = { pmsGuestId: `G-${id}`, lastName: 'Lovelace', firstName: 'Ada', roomNumber: `R${id}`, checkInDate: '2026-11-23', checkOutDate: '2026-11-26' };
    pending.push(
      pmsPost(baseUrl, slug, '/guests/checkin', key, `pms-${id}`, body, 30_000).then((a) => {
        latencies.push(performance.now() - at);
        if (a.status >= 200 && a.status < 300) ok++;
        else {
          const kind = a.status === 0 ? `no answer (${a.error ?? '?'})` : String(a.status);
          errors[kind] = (errors[kind] ?? 0) + 1;
        }
      }),
    );
  }
  await Promise.all(pending);
  const sorted = latencies.sort((a, b) => a - b);
  return {
    phase,
    sent: planned,
    ok,
    errors,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? NaN),
  };
}

function peakRssMb(pid: number, current: number): number {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return Math.max(current, m ? Number(m[1]) / 1024 : 0);
  } catch {
    return current;
  }
}

/** The scenario: `argv` as given after --rapid-reset. */
export async function runRapidResetScenario(argv: string[], attackerScript: string): Promise<void> {
  const { values } = parseArgs({
    args: argv.filter((a) => a !== '--rapid-reset'),
    options: {
      seconds: { type: 'string', default: '10' },
      rate: { type: 'string', default: '20' },
      connections: { type: 'string', default: '5' },
      streams: { type: 'string', default: '20000' },
      engine: { type: 'string', default: 'sqlite' },
      env: { type: 'string', multiple: true, default: [] },
      json: { type: 'boolean', default: false },
    },
  });
  const seconds = Number(values.seconds);
  const rate = Number(values.rate);
  const engine = values.engine as Engine;
  if (engine !== 'sqlite' && engine !== 'postgres') throw new Error('--engine must be sqlite or postgres');
  const env = Object.fromEntries((values.env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  const say = (line: string) => (values.json ? process.stderr.write(`${line}\n`) : console.log(line));

  let cluster: PostgresCluster | null = null;
  let storage: DrillStorage | null = null;
  let instance: Instance | null = null;
  let attacker: ChildProcess | null = null;
  try {
    if (engine === 'postgres') cluster = await startPostgresCluster();
    storage = await createStorage(engine, cluster?.adminUrl ?? null);
    instance = await Instance.start({ label: 'server', dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, env });
    const warmup = 2;
    const pms = await addHotel(storage.db, Math.ceil((rate * (2 * seconds + warmup) + 10) / PMS_PER_KEY) + 1);
    const target = await addHotel(storage.db, 1);
    const keys = pms.pairs.map((p) => p.live);
    const counter = { n: 0 };
    say(
      `innsync (pid ${instance.pid}) on ${engine}; ${os.cpus().length} CPUs, Node ${process.version}; PMS client from 127.0.0.1, attacker from ${ATTACKER_ADDRESS}`,
    );
    let rss = 0;
    const sampler = setInterval(() => (rss = peakRssMb(instance?.pid ?? -1, rss)), 250);

    await pmsPhase('warm-up', warmup, rate, instance.baseUrl, pms.slug, keys, counter);
    say(`quiet: ${seconds} s of check-ins at ${rate}/s`);
    const quiet = await pmsPhase('quiet', seconds, rate, instance.baseUrl, pms.slug, keys, counter);

    const child = fork(attackerScript, ['--reset-attacker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    attacker = child;
    const messages: FromResetAttacker[] = [];
    const next = (): Promise<FromResetAttacker> =>
      new Promise((resolve) => {
        const m = messages.shift();
        if (m) resolve(m);
        else child.once('message', (msg: FromResetAttacker) => resolve(msg));
      });
    if ((await next()).type !== 'ready') throw new Error('the attacker did not start');
    const attack: ResetAttack = {
      port: instance.port,
      slug: target.slug,
      key: target.pairs[0]?.live ?? '',
      address: ATTACKER_ADDRESS,
      connections: Number(values.connections),
      streams: Number(values.streams),
    };
    say(
      `attack: ${attack.connections} HTTP/2 connections from ${attack.address}, up to ${attack.streams} HEADERS+RST_STREAM each, reconnecting; check-ins at ${rate}/s meanwhile`,
    );
    child.send({ type: 'start', attack });
    const hostile = await pmsPhase('hostile', seconds, rate, instance.baseUrl, pms.slug, keys, counter);
    child.send({ type: 'stop' });
    const stopped = await next();
    const stats = stopped.type === 'stats' ? stopped.stats : null;
    clearInterval(sampler);
    // Rows are written in batches within ~100 ms.
    await sleep(1_000);
    const rows = (await storage.db.selectFrom('request_log').select('id').where('client_ip', '=', ATTACKER_ADDRESS).execute()).length;
    const ratio = round(hostile.p99 / quiet.p99, 2);
    const targets = [
      { target: 'no PMS error under attack', value: `${hostile.sent - hostile.ok} of ${hostile.sent}`, pass: hostile.ok === hostile.sent },
      { target: 'PMS p99 within 3× of the quiet run', value: `${ratio}× (${hostile.p99} vs ${quiet.p99} ms)`, pass: ratio <= 3 },
      { target: 'at most a handful of request-log rows for reset streams', value: `${rows} rows for ${stats?.streamsSent ?? '?'} streams`, pass: rows <= 10 },
    ];
    const report = {
      engine,
      node: process.version,
      cpus: os.cpus().length,
      serverEnv: env,
      phases: [quiet, hostile],
      ratioP99: ratio,
      attack: stats,
      requestLogRows: rows,
      peakRssMb: round(rss),
      targets,
    };
    if (values.json) console.log(JSON.stringify(report, null, 2));
    else {
      console.log('');
      console.log('phase      sent    ok   p50 ms   p95 ms   p99 ms   max ms');
      for (const p of [quiet, hostile]) {
        console.log(
          `${p.phase.padEnd(8)} ${String(p.sent).padStart(6)} ${String(p.ok).padStart(5)} ${String(p.p50).padStart(8)} ${String(p.p95).padStart(8)} ${String(p.p99).padStart(8)} ${String(p.max).padStart(8)}`,
        );
        if (Object.keys(p.errors).length > 0) console.log(`         errors: ${JSON.stringify(p.errors)}`);
      }
      console.log(`ratio hostile / quiet: p50 ${round(hostile.p50 / quiet.p50, 2)}×, p95 ${round(hostile.p95 / quiet.p95, 2)}×, p99 ${ratio}×`);
      if (stats) {
        console.log(
          `attacker: ${stats.connectionsOpened} connections opened, ${stats.refused} refused before TLS, ${stats.streamsSent} HEADERS+RST_STREAM sent ` +
            `(per connection p50 ${stats.perConnectionP50}, max ${stats.perConnectionMax}); ended by ${JSON.stringify(stats.endings)}`,
        );
      }
      console.log(`request-log rows for ${ATTACKER_ADDRESS}: ${rows}; server peak RSS ${round(rss)} MB`);
      for (const t of targets) console.log(`${t.pass ? 'PASS' : 'FAIL'}  ${t.target}: ${t.value}`);
    }
    if (!targets.every((t) => t.pass)) process.exitCode = 1;
  } finally {
    attacker?.kill();
    if (instance?.alive) await instance.stop();
    await storage?.close();
    cluster?.stop();
  }
}
