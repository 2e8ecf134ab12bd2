/**
 * Hostile-load benchmark: a PMS client sending live check-ins, alone ("quiet")
 * and then while the service is attacked ("hostile"), in the same run against the same
 * server process:
 *
 *   - slow-body connections (2,000) from one address: TLS, the headers of a check-in with
 *     a large Content-Length, then one byte every few seconds; reconnected when the server
 *     closes them;
 *   - a flood of hostile JSON (200 requests/s): a wide object (100,000 members, about
 *     0.9 MB) and a deeply nested one (10,000 levels), in turn, to the check-in and to the
 *     dashboard login, from the same address.
 *
 * Reported: the PMS client's p50/p99/max latency and errors in both phases and the ratio
 * of the p99s, what the attacker saw, the server's peak RSS and open descriptors (sampled
 * every 250 ms from /proc, and VmHWM), the server's own log (errors, stack traces) and
 * whether the process survived. Targets: no PMS error under attack, p99 within 3× the
 * quiet p99, RSS under 300 MB; exit status 1 when one is missed, 2 when the run failed.
 *
 *   npm run build && node dist/bench/hostile-load.js
 *   node dist/bench/hostile-load.js --seconds 10 --json
 *   node dist/bench/hostile-load.js --engine postgres --env MAX_CONNECTIONS_PER_IP=50
 *
 * Options: --seconds N per measured phase (20), --rate N PMS check-ins per second (20),
 * --slow N slow-body connections (2000), --flood N hostile JSON requests per second (200),
 * --engine sqlite|postgres (sqlite; postgres in a throwaway cluster, PG_BIN), --env
 * KEY=VALUE for the server (repeatable; the connection limits are otherwise left at their
 * defaults), --attacker-address (127.0.0.2), --flood-address (the attacker's), --drip-ms
 * (3000), --reconnect-ms (1000), --json (one JSON object on stdout, progress on stderr).
 *
 * `--rapid-reset` runs the HTTP/2 rapid-reset scenario instead (bench/lib/rapid-reset.ts).
 *
 * Three processes: this one (the PMS client and the /proc sampler), the server
 * (`bin/innsync.js serve`, test/support/drill-instance.ts) and the attacker (this file again with
 * `--attacker`), so the attack's event loop does not delay the PMS client's. All three
 * share the machine's CPUs; the attacker's CPU time is reported.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import type { Engine } from '../src/db/database.js';
import { startPostgresCluster, type PostgresCluster } from '../test/support/postgres-cluster.js';
import { pmsPost } from '../test/support/drill-http.js';
import { Instance, SERVER_BIN, sleep } from '../test/support/drill-instance.js';
import { percentile, round } from '../test/support/drill-report.js';
import { addHotel, createStorage, type DrillStorage } from '../test/support/drill-storage.js';
import { cpuSeconds } from './lib/proc.js';
import { runRapidResetScenario, runResetAttacker } from './lib/rapid-reset.js';

const MB = 1024 * 1024;
/** The service's connection limits (README.md, "Operating it"); left unset so the run shows the defaults. */
const LIMIT_VARS = ['HEADERS_TIMEOUT_SECONDS', 'REQUEST_TIMEOUT_SECONDS', 'KEEP_ALIVE_TIMEOUT_SECONDS', 'MAX_CONNECTIONS', 'MAX_CONNECTIONS_PER_IP'];
/** Check-ins per key and minute the service allows is 60; the PMS client uses at most this many per key. */
const PMS_PER_KEY = 40;
const PMS_CLIENT_ADDRESS = '127.0.0.1';
const SERVER_HOST = '127.0.0.1';
const LOOP_RESOLUTION_MS = 5;
/** The slow bodies' Content-Length: under the 1 MiB body limit, so it is not refused up front. */
const SLOW_CONTENT_LENGTH = 1_000_000;
/** The flood skips a request (counted) rather than have more than this many unanswered. */
const MAX_FLOOD_IN_FLIGHT = 256;

// ================================================================ the attacker (child process)

interface AttackConfig {
  port: number;
  slug: string;
  keys: string[];
  slowConnections: number;
  slowAddress: string;
  floodAddress: string;
  floodRate: number;
  dripMs: number;
  reconnectMs: number;
  /** The slow connections are opened over this time. */
  rampMs: number;
  contentLength: number;
  wideMembers: number;
  deepLevels: number;
  maxFloodInFlight: number;
}

type ToAttacker = { type: 'start'; config: AttackConfig } | { type: 'stop' };

interface Distribution {
  count: number;
  p50: number;
  max: number;
}

interface SlowStats {
  connections: number;
  address: string;
  attempted: number;
  /** The TLS handshake completed and the headers went out. */
  established: number;
  /** Closed or reset by the server before the TLS handshake completed (a connection cap). */
  refusedAtOnce: number;
  /** Connection attempts that failed otherwise, by error code. */
  connectErrors: Record<string, number>;
  /** Every HTTP status line received on a slow connection, by status. */
  answers: Record<string, number>;
  /** Established connections the server closed: after an answer / without one. */
  closedAfterAnswer: number;
  closedWithoutAnswer: number;
  /** Error codes seen on established connections as they ended. */
  closeErrors: Record<string, number>;
  /** How long established connections lasted until the server closed them, ms. */
  lifetimeMs: Distribution;
  /** Time from the headers to the first answer, ms. */
  answerAfterMs: Distribution;
  openAtEnd: number;
  peakOpen: number;
  bytesDripped: number;
}

interface FloodStats {
  address: string;
  rate: number;
  /** Requests the schedule called for, sent, and skipped because maxFloodInFlight were still unanswered. */
  scheduled: number;
  sent: number;
  skipped: number;
  /** By kind ("wide → checkin"…), then by status or error code. */
  outcomes: Record<string, Record<string, number>>;
  megabytesSent: number;
  latencyMs: Distribution;
}

interface AttackStats {
  seconds: number;
  /** The attacker process's CPU time over the attack, % of one core. */
  cpuPercent: number;
  slow: SlowStats;
  flood: FloodStats;
}

type FromAttacker = { type: 'ready' } | { type: 'started' } | { type: 'stats'; stats: AttackStats } | { type: 'error'; message: string };

function bump(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}

function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: round(percentile(sorted, 50), 0), max: round(sorted[sorted.length - 1] ?? NaN, 0) };
}

function errorCode(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? String(err);
}

/** 2,000 connections that send headers and then a body one byte at a time. */
class SlowBodyAttack {
  private stopping = false;
  private readonly sockets = new Set<tls.TLSSocket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private open = 0;
  private seq = 0;
  private readonly lifetimes: number[] = [];
  private readonly answerAfter: number[] = [];
  readonly stats: SlowStats;

  constructor(
    private readonly c: AttackConfig,
    private readonly nextKey: () => string,
  ) {
    this.stats = {
      connections: c.slowConnections,
      address: c.slowAddress,
      attempted: 0,
      established: 0,
      refusedAtOnce: 0,
      connectErrors: {},
      answers: {},
      closedAfterAnswer: 0,
      closedWithoutAnswer: 0,
      closeErrors: {},
      lifetimeMs: { count: 0, p50: NaN, max: NaN },
      answerAfterMs: { count: 0, p50: NaN, max: NaN },
      openAtEnd: 0,
      peakOpen: 0,
      bytesDripped: 0,
    };
  }

  start(): void {
    for (let i = 0; i < this.c.slowConnections; i++) this.later(() => this.connect(), (i / this.c.slowConnections) * this.c.rampMs);
  }

  private later(fn: () => void, ms: number): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopping) fn();
    }, ms);
    this.timers.add(t);
  }

  private connect(): void {
    const s = this.stats;
    s.attempted++;
    // tls.connect hands localAddress to the TCP connect (its type does not list it).
    const options: tls.ConnectionOptions & { localAddress: string } = {
      host: SERVER_HOST,
      port: this.c.port,
      localAddress: this.c.slowAddress,
      servername: 'localhost',
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    };
    const socket = tls.connect(options);
    this.sockets.add(socket);
    let established = 0;
    let answered = false;
    let lastError: string | null = null;
    let drip: NodeJS.Timeout | null = null;
    let received = '';
    socket.on('secureConnect', () => {
      established = performance.now();
      s.established++;
      this.open++;
      s.peakOpen = Math.max(s.peakOpen, this.open);
      socket.setNoDelay(true);
      const head =
        `POST /api/pms/v1/${this.c.slug}/guests/checkin HTTP/1.1\r\nHost: localhost:${this.c.port}\r\n` +
        `Authorization: Bearer ${this.nextKey()}\r\nContent-Type: application/json\r\n` +
        `Idempotency-Key: slow-${process.pid}-${++this.seq}\r\nContent-Length: ${this.c.contentLength}\r\n\r\n`;
      socket.write(head);
      // The first byte at a random moment within the period, so the drips are spread out.
      const first = setTimeout(() => {
        this.timers.delete(first);
        const once = () => {
          if (socket.writable) {
            socket.write(' ');
            s.bytesDripped++;
          }
        };
        once();
        drip = setInterval(once, this.c.dripMs);
      }, Math.random() * this.c.dripMs);
      this.timers.add(first);
      socket.once('close', () => {
        clearTimeout(first);
        this.timers.delete(first);
      });
    });
    socket.on('data', (chunk: Buffer) => {
      // Status lines only: every answer the server writes on this connection (bodies are JSON, never "HTTP/1.1 ").
      received = (received + chunk.toString('latin1')).slice(-4096);
      for (const m of received.matchAll(/HTTP\/1\.1 (\d{3}) /g)) {
        if (!answered) this.answerAfter.push(performance.now() - established);
        answered = true;
        bump(s.answers, m[1] ?? '?');
      }
      received = received.replace(/HTTP\/1\.1 \d{3} /g, '');
    });
    socket.on('error', (err) => {
      lastError = errorCode(err);
    });
    socket.on('close', () => {
      if (drip) clearInterval(drip);
      this.sockets.delete(socket);
      if (this.stopping) return;
      if (established === 0) {
        if (lastError === null || lastError === 'ECONNRESET' || lastError === 'EPIPE') s.refusedAtOnce++;
        else bump(s.connectErrors, lastError);
      } else {
        this.open--;
        this.lifetimes.push(performance.now() - established);
        if (answered) s.closedAfterAnswer++;
        else s.closedWithoutAnswer++;
        if (lastError !== null) bump(s.closeErrors, lastError);
      }
      this.later(() => this.connect(), this.c.reconnectMs * (0.5 + Math.random()));
    });
  }

  stop(): void {
    this.stopping = true;
    this.stats.openAtEnd = this.open;
    this.stats.lifetimeMs = distribution(this.lifetimes);
    this.stats.answerAfterMs = distribution(this.answerAfter);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
  }
}

/** Wide objects and deep nesting, in turn, to the check-in and to the dashboard login. */
class JsonFlood {
  private stopping = false;
  private inFlight = 0;
  private readonly latencies: number[] = [];
  private readonly agent: Agent;
  private readonly bodies: Array<{ kind: string; path: string; body: Buffer; auth: boolean }>;
  private loop: Promise<void> | null = null;
  private seq = 0;
  readonly stats: FloodStats;

  constructor(
    private readonly c: AttackConfig,
    private readonly nextKey: () => string,
  ) {
    this.agent = new Agent({ localAddress: c.floodAddress, connect: { rejectUnauthorized: false }, connections: 32, pipelining: 1, keepAliveTimeout: 10_000 });
    const wide = wideObject(c.wideMembers);
    const deep = deepNesting(c.deepLevels);
    const checkin = `/api/pms/v1/${c.slug}/guests/checkin`;
    this.bodies = [
      { kind: 'wide → checkin', path: checkin, body: wide, auth: true },
      { kind: 'deep → checkin', path: checkin, body: deep, auth: true },
      { kind: 'wide → login', path: '/dashboard/api/login', body: wide, auth: false },
      { kind: 'deep → login', path: '/dashboard/api/login', body: deep, auth: false },
    ];
    this.stats = {
      address: c.floodAddress,
      rate: c.floodRate,
      scheduled: 0,
      sent: 0,
      skipped: 0,
      outcomes: {},
      megabytesSent: 0,
      latencyMs: { count: 0, p50: NaN, max: NaN },
    };
    for (const b of this.bodies) this.stats.outcomes[b.kind] = {};
  }

  start(): void {
    if (this.c.floodRate <= 0) return;
    const began = performance.now();
    this.loop = (async () => {
      while (!this.stopping) {
        const due = Math.floor(((performance.now() - began) / 1000) * this.c.floodRate);
        while (this.stats.scheduled < due && !this.stopping) {
          this.stats.scheduled++;
          if (this.inFlight >= this.c.maxFloodInFlight) this.stats.skipped++;
          else void this.send();
        }
        await sleep(5);
      }
    })();
  }

  private async send(): Promise<void> {
    const b = this.bodies[this.seq++ % this.bodies.length];
    if (!b) return;
    const outcome = this.stats.outcomes[b.kind] ?? {};
    this.inFlight++;
    this.stats.sent++;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (b.auth) {
      headers.authorization = `Bearer ${this.nextKey()}`;
      headers['idempotency-key'] = `flood-${process.pid}-${this.seq}`;
    }
    const t0 = performance.now();
    try {
      const res = await request(`https://${SERVER_HOST}:${this.c.port}${b.path}`, {
        method: 'POST',
        headers,
        body: b.body,
        dispatcher: this.agent,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      });
      await res.body.dump();
      bump(outcome, String(res.statusCode));
      this.stats.megabytesSent += b.body.length / MB;
      this.latencies.push(performance.now() - t0);
    } catch (err) {
      bump(outcome, errorCode(err));
    } finally {
      this.inFlight--;
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
    const deadline = performance.now() + 5_000;
    while (this.inFlight > 0 && performance.now() < deadline) await sleep(20);
    this.stats.latencyMs = distribution(this.latencies);
    this.stats.megabytesSent = round(this.stats.megabytesSent, 1);
    await this.agent.destroy().catch(() => undefined);
  }
}

/** `{"0":0,"1":0,…}` with base-36 member names: 100,000 members is about 0.9 MB (under the 1 MiB body limit). */
function wideObject(members: number): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < members; i++) parts.push(`"${i.toString(36)}":0`);
  return Buffer.from(`{${parts.join(',')}}`);
}

/** `{"pmsGuestId":[[[…]]]}`: an object, as a check-in is, with `levels` arrays inside. */
function deepNesting(levels: number): Buffer {
  return Buffer.from(`{"pmsGuestId":${'['.repeat(levels)}${']'.repeat(levels)}}`);
}

async function runAttacker(): Promise<void> {
  const send = (msg: FromAttacker) => process.send?.(msg);
  let slow: SlowBodyAttack | null = null;
  let flood: JsonFlood | null = null;
  let began = 0;
  let cpu = process.cpuUsage();
  process.on('message', (raw) => {
    const msg = raw as ToAttacker;
    void (async () => {
      try {
        if (msg.type === 'start') {
          let k = 0;
          const keys = msg.config.keys;
          const nextKey = () => keys[k++ % keys.length] ?? 'pms_live_none';
          slow = new SlowBodyAttack(msg.config, nextKey);
          flood = new JsonFlood(msg.config, nextKey);
          began = performance.now();
          cpu = process.cpuUsage();
          slow.start();
          flood.start();
          send({ type: 'started' });
        } else if (slow && flood) {
          slow.stop();
          await flood.stop();
          const used = process.cpuUsage(cpu);
          const seconds = (performance.now() - began) / 1000;
          send({
            type: 'stats',
            stats: { seconds: round(seconds, 1), cpuPercent: round((used.user + used.system) / 1e4 / seconds, 0), slow: slow.stats, flood: flood.stats },
          });
          process.disconnect();
        }
      } catch (err) {
        send({ type: 'error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    })();
  });
  send({ type: 'ready' });
}

class AttackerProcess {
  private readonly waiting: Array<(msg: FromAttacker) => void> = [];
  private readonly proc: ChildProcess;

  constructor() {
    this.proc = fork(fileURLToPath(import.meta.url), ['--attacker'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.proc.on('message', (raw) => {
      // An error answers whoever waits; the caller throws it (and the run cleans up).
      this.waiting.shift()?.(raw as FromAttacker);
    });
  }

  next(): Promise<FromAttacker> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async ask(msg: ToAttacker): Promise<FromAttacker> {
    const reply = this.next();
    this.proc.send(msg);
    const r = await reply;
    if (r.type === 'error') throw new Error(`the attacker failed:\n${r.message}`);
    return r;
  }

  kill(): void {
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}

// ================================================================ the server: /proc and its log

interface ProcPeak {
  rssMb: number;
  fds: number;
  samples: number;
}

/** The server's VmRSS and open descriptors every 250 ms, peaks per phase. */
class ProcSampler {
  phase = 'start-up';
  readonly peaks = new Map<string, ProcPeak>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), 250);
    this.sample();
  }

  sample(): void {
    const status = readStatus(this.pid);
    if (!status) return;
    let fds = 0;
    try {
      fds = fs.readdirSync(`/proc/${this.pid}/fd`).length;
    } catch {
      return;
    }
    const peak = this.peaks.get(this.phase) ?? { rssMb: 0, fds: 0, samples: 0 };
    peak.rssMb = Math.max(peak.rssMb, status.rssKb / 1024);
    peak.fds = Math.max(peak.fds, fds);
    peak.samples++;
    this.peaks.set(this.phase, peak);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function readStatus(pid: number): { rssKb: number; hwmKb: number } | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return { rssKb: Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0), hwmKb: Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) };
  } catch {
    return null;
  }
}

/**
 * Every line the server writes, counted by pino level; warnings, errors and anything not
 * JSON (stack traces, Node's own messages) also by message, with the first line of each.
 */
class ServerLog {
  readonly levels: Record<string, number> = {};
  /** "warn: connection refused: …" → how many, and the first such line. */
  readonly messages: Record<string, { count: number; first: string }> = {};
  private partial = '';

  constructor(instance: Instance) {
    const take = (chunk: Buffer) => {
      const text = this.partial + chunk.toString('utf8');
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) this.line(line);
    };
    instance.child.stdout?.on('data', take);
    instance.child.stderr?.on('data', take);
  }

  private line(line: string): void {
    if (line.trim() === '') return;
    let parsed: { level?: number; msg?: string } | null = null;
    try {
      parsed = JSON.parse(line) as { level?: number; msg?: string };
    } catch {
      // a stack trace or a message of Node's own
    }
    const level = parsed && typeof parsed.level === 'number' ? (PINO_LEVELS[parsed.level] ?? String(parsed.level)) : 'not JSON';
    bump(this.levels, level);
    if (level !== 'warn' && level !== 'error' && level !== 'fatal' && level !== 'not JSON') return;
    const key = `${level}: ${(parsed?.msg ?? line.trim()).slice(0, 120)}`;
    const seen = this.messages[key];
    if (seen) seen.count++;
    else if (Object.keys(this.messages).length < 40) this.messages[key] = { count: 1, first: line.length > 400 ? `${line.slice(0, 400)}…` : line };
  }
}

const PINO_LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

// ================================================================ the PMS client

interface PmsPhase {
  phase: string;
  seconds: number;
  rate: number;
  sent: number;
  ok: number;
  errors: number;
  /** Non-2xx answers by status, transport failures by error code. */
  errorKinds: Record<string, number>;
  p50: number;
  p99: number;
  max: number;
  /** Server CPU over the phase, % of one core. */
  serverCpuPercent: number;
  /** The PMS client's own event-loop delay, p99 ms (a starved client would show here). */
  clientLoopDelayP99: number;
  peakRssMb: number;
  peakFds: number;
}

class PmsClient {
  private n = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly slug: string,
    private readonly keys: string[],
  ) {}

  get capacity(): number {
    return this.keys.length * PMS_PER_KEY;
  }

  private async checkin(): Promise<{ status: number; error: string | null }> {
    const i = this.n++;
    const key = this.keys[Math.floor(i / PMS_PER_KEY)];
    if (key === undefined) throw new Error('the PMS client ran out of keys');
    const n = String(i).padStart(7, '0');
    const a = await pmsPost(
      this.baseUrl,
      this.slug,
      '/guests/checkin',
      key,
      `pms-${n}`,
      {
        pmsGuestId: `G-${n}`,
        lastName: 'Lovelace',
        firstName: 'Ada',
        roomNumber: `R${n}`,
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-26',
        language: 'en',
        adults: 2,
      },
      30_000,
    );
    return { status: a.status, error: a.error };
  }

  /** Open loop: one check-in every 1/rate s for `seconds`, latency from its scheduled moment; waits for every answer. */
  async run(phase: string, seconds: number, rate: number, serverPid: number, sampler: ProcSampler, up: () => boolean): Promise<PmsPhase> {
    sampler.phase = phase;
    const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    loop.enable();
    const cpu0 = cpuSeconds(serverPid);
    const latencies: number[] = [];
    const errorKinds: Record<string, number> = {};
    let ok = 0;
    const pending: Array<Promise<void>> = [];
    const planned = Math.max(1, Math.round(seconds * rate));
    let count = 0;
    const began = performance.now();
    for (let i = 0; i < planned && up(); i++, count++) {
      const at = began + (i * 1000) / rate;
      const wait = at - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(
        this.checkin().then((r) => {
          latencies.push(performance.now() - at);
          if (r.status >= 200 && r.status < 300) ok++;
          else bump(errorKinds, r.status === 0 ? `no answer (${r.error ?? '?'})` : String(r.status));
        }),
      );
    }
    await Promise.all(pending);
    const wall = (performance.now() - began) / 1000;
    loop.disable();
    sampler.sample();
    const sorted = latencies.sort((a, b) => a - b);
    const peak = sampler.peaks.get(phase);
    return {
      phase,
      seconds: round(wall, 1),
      rate,
      sent: count,
      ok,
      errors: count - ok,
      errorKinds,
      p50: round(percentile(sorted, 50)),
      p99: round(percentile(sorted, 99)),
      max: round(sorted[sorted.length - 1] ?? NaN),
      serverCpuPercent: round(((cpuSeconds(serverPid) - cpu0) / wall) * 100, 0), // NaN once the server is gone
      // The histogram holds the timer's whole period: the delay is what exceeds the resolution.
      clientLoopDelayP99: round(Math.max(0, loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS)),
      peakRssMb: round(peak?.rssMb ?? NaN),
      peakFds: peak?.fds ?? 0,
    };
  }
}

// ================================================================ the run

interface Options {
  seconds: number;
  rate: number;
  slow: number;
  flood: number;
  engine: Engine;
  env: Record<string, string>;
  attackerAddress: string;
  floodAddress: string;
  dripMs: number;
  reconnectMs: number;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      seconds: { type: 'string', default: '20' },
      rate: { type: 'string', default: '20' },
      slow: { type: 'string', default: '2000' },
      flood: { type: 'string', default: '200' },
      engine: { type: 'string', default: 'sqlite' },
      env: { type: 'string', multiple: true, default: [] },
      'attacker-address': { type: 'string', default: '127.0.0.2' },
      'flood-address': { type: 'string' },
      'drip-ms': { type: 'string', default: '3000' },
      'reconnect-ms': { type: 'string', default: '1000' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(
      'node dist/bench/hostile-load.js [--seconds 20] [--rate 20] [--slow 2000] [--flood 200] [--engine sqlite|postgres] [--env KEY=VALUE]… [--attacker-address 127.0.0.2] [--flood-address ADDR] [--drip-ms 3000] [--reconnect-ms 1000] [--json]',
    );
    process.exit(0);
  }
  const int = (name: string, raw: string | undefined, min: number, max: number): number => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be a whole number ${min}-${max}, got "${raw}"`);
    return n;
  };
  if (values.engine !== 'sqlite' && values.engine !== 'postgres') throw new Error('--engine must be sqlite or postgres');
  const env: Record<string, string> = {};
  for (const pair of values.env ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new Error(`--env takes KEY=VALUE, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const attackerAddress = values['attacker-address'] ?? '127.0.0.2';
  return {
    seconds: int('seconds', values.seconds, 1, 3600),
    rate: int('rate', values.rate, 1, 1000),
    slow: int('slow', values.slow, 0, 15_000),
    flood: int('flood', values.flood, 0, 10_000),
    engine: values.engine,
    env,
    attackerAddress,
    floodAddress: values['flood-address'] ?? attackerAddress,
    dripMs: int('drip-ms', values['drip-ms'], 10, 600_000),
    reconnectMs: int('reconnect-ms', values['reconnect-ms'], 0, 600_000),
    json: values.json ?? false,
  };
}

interface Report {
  engine: string;
  node: string;
  cpus: number;
  serverBin: string;
  serverEnv: Record<string, string>;
  limitsSource: string;
  addresses: { server: string; pmsClient: string; slowBody: string; flood: string };
  phases: PmsPhase[];
  ratioP99: number;
  attack: AttackStats | null;
  server: {
    pid: number;
    peakRssMb: number;
    vmHwmMb: number | null;
    peakFds: number;
    fdsAtStart: number;
    survived: boolean;
    exit: string;
    log: { levels: Record<string, number>; messages: Record<string, { count: number; first: string }>; tailIfDied: string | null };
  };
  targets: Array<{ target: string; value: string; pass: boolean }>;
  pass: boolean;
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const say = (line: string) => (o.json ? process.stderr.write(`${line}\n`) : console.log(line));
  // The run shows the shipped defaults: a limit set in this shell would leak into the server (instance.ts copies the environment).
  for (const name of LIMIT_VARS) {
    if (process.env[name] !== undefined && o.env[name] === undefined) {
      say(`note: ${name}=${process.env[name]} in this environment is not passed on (use --env to set it)`);
      delete process.env[name];
    }
  }

  const warmupSeconds = 3;
  const afterSeconds = 3;
  const rampMs = 3_000;
  const pmsCheckins = o.rate * (warmupSeconds + 2 * o.seconds + afterSeconds) + 10;
  const attackerUses = Math.ceil(o.flood / 2) * (o.seconds + rampMs / 1000 + 5) + 2 * o.slow;

  let cluster: PostgresCluster | null = null;
  let storage: DrillStorage | null = null;
  let instance: Instance | null = null;
  let attacker: AttackerProcess | null = null;
  let sampler: ProcSampler | null = null;
  try {
    if (o.engine === 'postgres') {
      cluster = await startPostgresCluster();
      say(`PostgreSQL: ${cluster.description}`);
    }
    storage = await createStorage(o.engine, cluster?.adminUrl ?? null);
    instance = await Instance.start({ label: 'server', dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, env: o.env });
    const log = new ServerLog(instance);
    const pmsHotel = await addHotel(storage.db, Math.ceil(pmsCheckins / PMS_PER_KEY) + 1);
    // The attacker holds valid keys of a hotel of its own (a leaked or misbehaving PMS key), so its
    // bodies get past authentication to the body parser; keys are used in turn to stay under 60/min each.
    const attackHotel = await addHotel(storage.db, Math.max(1, Math.ceil(attackerUses / 50)));
    const serverPid = instance.pid;
    say(
      `innsync ${SERVER_BIN} (pid ${serverPid}) on ${o.engine}, port ${instance.port}; ${os.cpus().length} CPUs, Node ${process.version}; ` +
        `PMS client from ${PMS_CLIENT_ADDRESS}, slow-body from ${o.attackerAddress}, flood from ${o.floodAddress}`,
    );
    say(
      `server env: ${
        Object.keys(o.env).length === 0
          ? 'connection limits at their defaults (none set)'
          : Object.entries(o.env)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')
      }`,
    );

    attacker = new AttackerProcess();
    if ((await attacker.next()).type !== 'ready') throw new Error('the attacker did not start');
    sampler = new ProcSampler(serverPid);
    const fdsAtStart = fs.readdirSync(`/proc/${serverPid}/fd`).length;
    const client = new PmsClient(
      instance.baseUrl,
      pmsHotel.slug,
      pmsHotel.pairs.map((p) => p.live),
    );
    if (client.capacity < pmsCheckins) throw new Error('not enough PMS keys');

    // The server leaving by itself ends the run: when, and in which phase, is reported.
    const fate: { died: string | null; stopping: boolean } = { died: null, stopping: false };
    const startedAt = performance.now();
    void instance.exited.then(() => {
      if (!fate.stopping) fate.died = `during ${sampler?.phase ?? '?'}, ${round((performance.now() - startedAt) / 1000, 1)} s into the run`;
    });
    const up = () => fate.died === null;

    const phases: PmsPhase[] = [];
    let attack: AttackStats | null = null;
    const runPhase = async (phase: string, seconds: number, what: string): Promise<void> => {
      if (!up()) return;
      say(`${phase}: ${seconds} s of check-ins at ${o.rate}/s${what}`);
      phases.push(await client.run(phase, seconds, o.rate, serverPid, sampler as ProcSampler, up));
    };
    await runPhase('warm-up', warmupSeconds, ' (not counted)');
    await runPhase('quiet', o.seconds, ', the PMS client alone');
    if (up()) {
      say(`attack: ${o.slow} slow-body connections (one byte every ${o.dripMs} ms) and ${o.flood} hostile JSON requests/s; ${rampMs / 1000} s to ramp up`);
      sampler.phase = 'ramp-up';
      const config: AttackConfig = {
        port: instance.port,
        slug: attackHotel.slug,
        keys: attackHotel.pairs.map((p) => p.live),
        slowConnections: o.slow,
        slowAddress: o.attackerAddress,
        floodAddress: o.floodAddress,
        floodRate: o.flood,
        dripMs: o.dripMs,
        reconnectMs: o.reconnectMs,
        rampMs,
        contentLength: SLOW_CONTENT_LENGTH,
        wideMembers: 100_000,
        deepLevels: 10_000,
        maxFloodInFlight: MAX_FLOOD_IN_FLIGHT,
      };
      await attacker.ask({ type: 'start', config });
      await sleep(rampMs);
      await runPhase('hostile', o.seconds, ' under attack');
      const stopped = await attacker.ask({ type: 'stop' });
      if (stopped.type === 'stats') attack = stopped.stats;
      await sleep(500);
      await runPhase('after', afterSeconds, ', the attack stopped');
    }

    sampler.stop();
    const status = readStatus(serverPid);
    const survived = up() && instance.alive;
    const stopAt = performance.now();
    fate.stopping = true;
    await instance.stop();
    const shutdownMs = round(performance.now() - stopAt, 0);
    const how = instance.exit ? (instance.exit.signal ? `signal ${instance.exit.signal}` : `code ${instance.exit.code}`) : 'running';
    // Exit code 0 unasked for: the service's graceful shutdown, i.e. a SIGTERM or SIGINT from outside this run.
    const exit = survived
      ? `SIGTERM at the end → ${how} in ${shutdownMs} ms`
      : `exited by itself ${fate.died ?? ''} (${how}${how === 'code 0' ? ': a graceful shutdown, so a SIGTERM/SIGINT from outside this run' : ''})`;

    const quiet = phases.find((p) => p.phase === 'quiet');
    const hostile = phases.find((p) => p.phase === 'hostile');
    const peaks = [...sampler.peaks.values()];
    const peakRssMb = round(Math.max(0, ...peaks.map((p) => p.rssMb)));
    const vmHwmMb = status ? round(status.hwmKb / 1024) : null;
    const peakFds = Math.max(0, ...peaks.map((p) => p.fds));
    const ratioP99 = quiet && hostile ? round(hostile.p99 / quiet.p99, 2) : NaN;
    const rssForTarget = Math.max(peakRssMb, vmHwmMb ?? 0);
    const targets = [
      {
        target: 'no PMS error under attack',
        value: hostile ? `${hostile.errors} of ${hostile.sent}` : 'no hostile phase',
        pass: hostile !== undefined && hostile.errors === 0,
      },
      {
        target: 'PMS p99 within 3× of the quiet run',
        value: hostile && quiet ? `${ratioP99}× (${hostile.p99} vs ${quiet.p99} ms)` : 'not measured',
        pass: ratioP99 <= 3,
      },
      {
        target: 'server RSS under 300 MB',
        value: `${rssForTarget} MB peak${vmHwmMb === null ? ' (sampled only: VmHWM not read)' : ''}`,
        pass: rssForTarget < 300,
      },
      { target: 'the server process survived', value: survived ? 'yes' : `no: ${exit}`, pass: survived },
    ];
    const report: Report = {
      engine: o.engine,
      node: process.version,
      cpus: os.cpus().length,
      serverBin: SERVER_BIN,
      serverEnv: o.env,
      limitsSource: Object.keys(o.env).some((k) => LIMIT_VARS.includes(k)) ? 'some set by --env' : 'defaults',
      addresses: { server: `${SERVER_HOST}:${instance.port}`, pmsClient: PMS_CLIENT_ADDRESS, slowBody: o.attackerAddress, flood: o.floodAddress },
      phases,
      ratioP99,
      attack,
      server: {
        pid: serverPid,
        peakRssMb,
        vmHwmMb,
        peakFds,
        fdsAtStart,
        survived,
        exit,
        log: { levels: log.levels, messages: log.messages, tailIfDied: survived ? null : instance.tail(30) },
      },
      targets,
      pass: targets.every((t) => t.pass),
    };
    if (o.json) console.log(JSON.stringify(report, null, 2));
    else printReport(report, sampler);
    if (!report.pass) process.exitCode = 1;
  } finally {
    sampler?.stop();
    attacker?.kill();
    if (instance?.alive) await instance.stop();
    await storage?.close();
    cluster?.stop();
  }
}

function printReport(r: Report, sampler: ProcSampler): void {
  const pad = (cells: Array<string | number>, widths: number[]) =>
    cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i] ?? 0) : String(c).padStart(widths[i] ?? 0))).join('  ');
  const widths = [9, 7, 6, 7, 8, 8, 8, 11, 12, 9, 12];
  console.log('');
  console.log(pad(['phase', 'sent', 'ok', 'errors', 'p50 ms', 'p99 ms', 'max ms', 'server CPU', 'peak RSS MB', 'peak fds', 'client lag'], widths));
  for (const p of r.phases) {
    console.log(
      pad(
        [
          p.phase,
          p.sent,
          p.ok,
          p.errors,
          p.p50,
          p.p99,
          p.max,
          Number.isFinite(p.serverCpuPercent) ? `${p.serverCpuPercent} %` : '-',
          p.peakRssMb,
          p.peakFds,
          `${p.clientLoopDelayP99} ms`,
        ],
        widths,
      ),
    );
    if (p.errors > 0) console.log(`          errors: ${JSON.stringify(p.errorKinds)}`);
  }
  const ramp = sampler.peaks.get('ramp-up');
  if (ramp) console.log(pad(['(ramp-up)', '', '', '', '', '', '', '', round(ramp.rssMb), ramp.fds, ''], widths));
  console.log(`p99 hostile / quiet: ${r.ratioP99}×   (client lag: the PMS client's own event-loop delay, p99)`);
  const a = r.attack;
  if (a) {
    const s = a.slow;
    console.log('');
    console.log(`attacker: ${a.seconds} s, ${a.cpuPercent} % of one core`);
    console.log(
      `  slow-body (${s.connections} from ${s.address}): ${s.attempted} connects, ${s.established} established (peak ${s.peakOpen} open at once, ${s.openAtEnd} open at the end), ` +
        `${s.refusedAtOnce} closed before TLS, connect errors ${JSON.stringify(s.connectErrors)}`,
    );
    console.log(
      `    answers ${s.answerAfterMs.count === 0 ? 'none' : `${JSON.stringify(s.answers)}, the first after p50 ${s.answerAfterMs.p50} / max ${s.answerAfterMs.max} ms`}; ` +
        `closed by the server once established: ${s.closedAfterAnswer} after an answer, ${s.closedWithoutAnswer} without (${JSON.stringify(s.closeErrors)})` +
        `${s.lifetimeMs.count === 0 ? '' : `, after p50 ${s.lifetimeMs.p50} / max ${s.lifetimeMs.max} ms`}; ${s.bytesDripped} bytes dripped`,
    );
    const f = a.flood;
    console.log(
      `  flood (${f.rate}/s from ${f.address}): ${f.scheduled} scheduled, ${f.sent} sent, ${f.skipped} skipped (${MAX_FLOOD_IN_FLIGHT} unanswered), ${f.megabytesSent} MB of bodies answered; latency of the answered p50 ${f.latencyMs.p50} / max ${f.latencyMs.max} ms`,
    );
    for (const [kind, outcomes] of Object.entries(f.outcomes)) console.log(`    ${kind.padEnd(15)} ${JSON.stringify(outcomes)}`);
  }
  const s = r.server;
  console.log('');
  console.log(`server: peak RSS ${s.peakRssMb} MB sampled, VmHWM ${s.vmHwmMb ?? '?'} MB; open fds ${s.fdsAtStart} at start, peak ${s.peakFds}; ${s.exit}`);
  console.log(`server log lines by level: ${JSON.stringify(s.log.levels)}`);
  for (const [message, m] of Object.entries(s.log.messages)) {
    console.log(`  ${String(m.count).padStart(6)} × ${message}`);
    console.log(`           first: ${m.first}`);
  }
  if (s.log.tailIfDied !== null) console.log(`the server's last output:\n${s.log.tailIfDied.replace(/^/gm, '  > ')}`);
  console.log('');
  for (const t of r.targets) console.log(`${t.pass ? 'PASS' : 'FAIL'}  ${t.target}: ${t.value}`);
}

const entry =
  process.argv[2] === '--attacker'
    ? runAttacker()
    : process.argv[2] === '--reset-attacker'
      ? runResetAttacker()
      : process.argv.includes('--rapid-reset')
        ? runRapidResetScenario(process.argv.slice(2), fileURLToPath(import.meta.url))
        : main();
entry.catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
