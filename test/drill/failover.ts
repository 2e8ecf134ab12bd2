import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { addEndpoint } from '../../src/webhooks/endpoints.js';
import { DashboardStream } from '../support/drill-event-stream.js';
import { compareWithModels, HotelWorker, newLoadStats, replayCheck, type LoadStats } from './hotel-load.js';
import { isReplay, type Answer } from '../support/drill-http.js';
import { Instance, startInstances, sleep } from '../support/drill-instance.js';
import { canWrite, PATRONI_TIMING, PatroniCluster, type PatroniNode } from './patroni-cluster.js';
import { round, type DrillResult } from '../support/drill-report.js';
import { addHotel, createStorage, invariantViolations, staffSessionCookie } from '../support/drill-storage.js';

export interface FailoverDrillOptions {
  /** The primary's machine killed this many times, the nodes taking turns. */
  failovers: number;
  clients: number;
  /**
   * Then the synchronous standby's machine, the primary alive: killed, frozen (SIGSTOP), or
   * both one after the other; how long writes wait for it is measured.
   */
  standbyLoss: ('kill' | 'freeze')[];
  /**
   * After the last standby loss, the standby comes back and is checked to follow as the
   * synchronous standby again (false in the quick version: the failover already checks
   * that a node rejoins).
   */
  lastStandbyReturns: boolean;
}

/**
 * How long writes may wait when the synchronous standby dies while the primary lives:
 * Patroni's documentation ("Replication modes", synchronous mode) says the primary drops
 * a standby that is gone from synchronous_standby_names; a dead node stays a member until
 * its key expires (ttl), and the primary acts on its next loop (loop_wait). 5 s more for
 * the reload and a loaded machine.
 */
const STALL_BOUND_MS = (PATRONI_TIMING.ttl + PATRONI_TIMING.loopWait + 5) * 1000;

/**
 * A plain-HTTP webhook receiver on 127.0.0.1 that answers 200 to every delivery and keeps,
 * per guest a delivery names (`data.guest.guestId`), when each arrived.
 */
async function startReceiver(): Promise<{ url: string; seen: Map<string, number[]>; close(): Promise<void> }> {
  const seen = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { data?: { guest?: { guestId?: string } } };
        const guestId = body.data?.guest?.guestId;
        if (guestId) seen.set(guestId, [...(seen.get(guestId) ?? []), Date.now()]);
      } catch {
        // not an event: answered all the same
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** One write after another, through `url`, each timed: [sent, acknowledged or failed]. */
class ProbeWriter {
  readonly samples: { start: number; end: number; ok: boolean; error: string | null }[] = [];
  private stopping = false;
  private readonly done: Promise<void>;

  constructor(private readonly url: string) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    let client: pg.Client | null = null;
    while (!this.stopping) {
      const start = Date.now();
      try {
        if (!client) {
          const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 1_000, query_timeout: 120_000 });
          c.on('error', () => undefined);
          client = c;
          await c.connect();
          await c.query('create table if not exists drill_probe (at timestamptz)');
        }
        await client.query('insert into drill_probe values (now())');
        this.samples.push({ start, end: Date.now(), ok: true, error: null });
      } catch (err) {
        const e = err as { code?: string; message?: string };
        this.samples.push({ start, end: Date.now(), ok: false, error: `${e.code ?? ''} ${e.message ?? String(err)}`.trim() });
        await client?.end().catch(() => undefined);
        client = null;
        await sleep(100);
      }
      await sleep(100);
    }
    await client?.end().catch(() => undefined);
  }

  /** The first write sent at `since` or later that was acknowledged. */
  firstOkAfter(since: number): number | null {
    return this.samples.find((s) => s.ok && s.start >= since)?.end ?? null;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.done;
  }
}

/** Answers by status added to `stats` since `before` (a copy taken earlier). */
function statusDelta(stats: LoadStats, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(stats.byStatus)) if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  return out;
}

const fiveHundredsIn = (byStatus: Record<string, number>): number =>
  Object.entries(byStatus)
    .filter(([s]) => s.startsWith('5') && s !== '503')
    .reduce((n, [, v]) => n + v, 0);

const seconds = (ms: number | null): string => (ms === null ? 'none' : String(round(ms / 1000, 1)));

/** How the node came back, read from what its Patroni logged since `offset`. */
function rejoinHow(logFile: string, offset: number): string {
  let text = '';
  try {
    text = fs.readFileSync(logFile, 'utf8').slice(offset);
  } catch {
    return 'unknown';
  }
  const how: string[] = [];
  if (text.includes('running pg_rewind')) how.push(/pg_rewind exit code=0/.test(text) ? 'pg_rewind' : 'pg_rewind failed');
  if (/replica has been created using basebackup|bootstrap from leader/.test(text)) how.push('cloned again (pg_basebackup)');
  return how.length > 0 ? how.join(', then ') : 'followed without a rewind';
}

/**
 * The primary's machine dies under load (docs: bench/README.md, Drills: failover):
 * PostgreSQL managed by Patroni (etcd as its store, a synchronous standby), HAProxy in
 * front as the service's one database address, two instances of the service, a dashboard
 * stream on each. The primary's Patroni and PostgreSQL are SIGKILLed together; Patroni
 * promotes the standby; the service answers 503 meanwhile and carries on against the new
 * primary without a restart; nothing acknowledged is lost or applied twice. The dead node
 * then comes back, rejoins as the standby (pg_rewind), and the next failover goes the
 * other way. Last, the standby's machine dies while the primary lives: writes may wait
 * for it only until Patroni drops it from the synchronous standbys.
 */
export async function failoverDrill(o: FailoverDrillOptions): Promise<DrillResult> {
  const cluster = await PatroniCluster.start();
  const violations: string[] = [];
  const instances: Instance[] = [];
  const streams: DashboardStream[] = [];
  const figures: Record<string, number | string> = {};
  let storage: Awaited<ReturnType<typeof createStorage>> | null = null;
  const receiver = await startReceiver();
  try {
    storage = await createStorage('postgres', cluster.adminUrl);
    const databaseUrl = storage.databaseUrl as string;
    // The receiver listens on loopback over plain HTTP.
    instances.push(...(await startInstances(storage, 2, { DATABASE_LISTEN_URL: databaseUrl, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })));
    const hotels = [];
    for (let i = 0; i < o.clients; i++) hotels.push(await addHotel(storage.db, 4));
    const watched = hotels[0];
    if (!watched) throw new Error('no hotel');
    // The watched hotel's changes are also delivered to a webhook endpoint: the dispatchers
    // (one per instance) must deliver again after a failover, without a restart.
    await addEndpoint(storage.db, watched.id, { url: receiver.url }, { allowPrivateNetworks: true, maxEndpointsPerHotel: 10 });
    for (const inst of instances) streams.push(new DashboardStream(() => inst.baseUrl, await staffSessionCookie(storage.db, watched.id)));
    let turn = 0;
    const target = { baseUrl: () => (instances[turn++ % instances.length] as Instance).baseUrl };
    const stats = newLoadStats();
    const workers = hotels.map((h) => new HotelWorker(h, target, stats, { retryPauseMs: 250, pauseBetweenMs: 20 }));
    const watcher = workers[0] as HotelWorker;
    const db = storage.db;

    /** Load runs between start() and the phase's end; the models are compared with the database after each phase, the load stopped. */
    let stopping = false;
    let running: Promise<void>[] = [];
    const startLoad = () => {
      stopping = false;
      running = workers.map((w) => w.run(() => stopping));
    };
    let lostSoFar = 0;
    let doubledSoFar = 0;
    let violationsSoFar = 0;
    const endPhase = async (label: string, byStatusBefore: Record<string, number>, phaseStart: number) => {
      stopping = true;
      await Promise.all(running);
      const compared = await compareWithModels(db, workers);
      const invariants = await invariantViolations(db);
      const delta = statusDelta(stats, byStatusBefore);
      const other5xx = fiveHundredsIn(delta);
      figures[`${label}: answers by status`] = JSON.stringify(delta);
      figures[`${label}: acknowledged lost`] = compared.lost - lostSoFar;
      figures[`${label}: processed twice`] = compared.doubled - doubledSoFar;
      figures[`${label}: invariant violations`] = invariants.length;
      figures[`${label}: 5xx other than 503`] = other5xx;
      // docs/pms-interface.md: a 503 says when to try again.
      const bare503 = workers
        .flatMap((w) => w.ops.flatMap((op) => op.answers))
        .filter((a) => a.status === 503 && a.receivedAt >= phaseStart && !a.headers['retry-after']).length;
      figures[`${label}: 503 without Retry-After`] = bare503;
      if (bare503 > 0) violations.push(`${label}: ${bare503} answers 503 without Retry-After`);
      figures[`${label}: process exits`] = instances.filter((i) => !i.alive).length;
      if (compared.lost > lostSoFar || compared.doubled > doubledSoFar) violations.push(...compared.lines.map((l) => `${label}: ${l}`));
      lostSoFar = compared.lost;
      doubledSoFar = compared.doubled;
      violations.push(...invariants.map((l) => `${label}: ${l}`));
      violations.push(...stats.violations.slice(violationsSoFar).map((l) => `${label}: ${l}`));
      violationsSoFar = stats.violations.length;
      // A 500 is a bug in the service, not the database's fault: what the instances logged.
      if (other5xx > 0) for (const inst of instances) violations.push(`${label}: ${inst.label} logged:\n${inst.tail(40)}`);
      for (const inst of instances) if (!inst.alive) violations.push(`${label}: ${inst.label} exited: ${JSON.stringify(inst.exit)}\n${inst.tail()}`);
    };
    /** The first 2xx answer, on any instance, to a request sent at `since` or later (so processed by a primary alive then). */
    const firstOkSince = async (since: number, timeoutMs: number): Promise<number | null> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const ok = workers.flatMap((w) => w.ops.flatMap((op) => op.answers)).filter((a) => a.status === 200 && a.sentAt >= since);
        if (ok.length > 0) return Math.min(...ok.map((a) => a.receivedAt));
        if (Date.now() > deadline) return null;
        await sleep(50);
      }
    };
    /** Both dashboard streams told to re-read since `since`, then carrying the watched hotel's next change. */
    const streamsResume = async (label: string, since: number): Promise<boolean> => {
      const from = Date.now();
      // A change first sent after this moment and processed then (not a replay: an
      // operation in flight at the kill may have committed before it, and its retry is
      // answered from the stored response, with no new event).
      let change: Answer | null = null;
      for (let i = 0; i < 300 && change === null; i++) {
        const op = watcher.ops.find((x) => (x.answers[0]?.sentAt ?? 0) >= from && x.answers.some((a) => a.status === 200 && !isReplay(a)));
        change = op?.answers.find((a) => a.status === 200) ?? null;
        if (change === null) await sleep(50);
      }
      const guestId = (change?.body?.guestId as string | undefined) ?? null;
      if (change === null || guestId === null) {
        violations.push(`${label}: the watched hotel had no change after the failover`);
        return false;
      }
      // The change reaches each dashboard: an event naming the guest, or (when the stream's
      // LISTEN connection was down as it committed: HAProxy cut it) a re-read after it.
      const answeredAt = change.receivedAt;
      const heard = await Promise.all(
        streams.map(async (st) => (await st.waitFor(guestId, from, 10_000)) || st.events.some((e) => e.receivedAt >= answeredAt && e.changes.length === 0)),
      );
      const reread = streams.map((st) => st.events.some((e) => e.receivedAt >= since && e.changes.length === 0));
      // The same change delivered to the webhook endpoint: a delivery naming its guest that
      // arrived after the change was sent (the guest's earlier events arrived before).
      const deliveredAfter = (): number | undefined => receiver.seen.get(guestId)?.find((t) => t >= change.sentAt);
      for (let i = 0; i < 300 && deliveredAfter() === undefined; i++) await sleep(50);
      const deliveredAt = deliveredAfter();
      figures[`${label}: webhook delivery of the next change after its answer (s)`] =
        deliveredAt === undefined ? 'none' : round((deliveredAt - answeredAt) / 1000, 1);
      if (deliveredAt === undefined)
        violations.push(`${label}: the webhook dispatchers did not deliver the watched hotel's next change (guest ${guestId}) within 15 s`);
      if (heard.every(Boolean) && reread.every(Boolean)) return true;
      const rel = (t: number) => round((t - since) / 1000, 1);
      violations.push(
        `${label}: dashboard streams after the failover: re-read ${JSON.stringify(reread)}, next change heard ${JSON.stringify(heard)}; ` +
          `re-reads at ${JSON.stringify(streams.map((st) => st.events.filter((e) => e.receivedAt >= since && e.changes.length === 0).map((e) => rel(e.receivedAt))))} s after the kill, ` +
          `the change (guest ${guestId}) answered at ${rel(answeredAt)} s, checked from ${rel(from)} s; ` +
          `the instances logged:\n${instances.map((i) => `${i.label}:\n${i.tail(30)}`).join('\n')}`,
      );
      return false;
    };
    const primaryNode = async (): Promise<PatroniNode> => {
      for (const n of cluster.nodes) if ((await cluster.rest(n, '/primary')) === 200) return n;
      throw new Error('no primary');
    };

    const probe = new ProbeWriter(cluster.adminUrl);
    try {
      for (let c = 1; c <= o.failovers; c++) {
        const label = `failover ${c}`;
        await cluster.waitSynchronous(180_000);
        const before = { ...stats.byStatus };
        const phaseStart = Date.now();
        const haproxyLog = cluster.haproxyLogSize();
        const primary = await primaryNode();
        const standby = cluster.nodes.find((n) => n !== primary) as PatroniNode;
        startLoad();
        await sleep(1_500 + Math.random() * 1_000);
        const killAt = Date.now();
        cluster.killNode(primary);
        // The standby promoted: a durable write commits on it, directly.
        let promotedAt: number | null = null;
        while (promotedAt === null && Date.now() - killAt < 120_000) {
          if (await canWrite(`postgres://postgres@127.0.0.1:${standby.pg}/postgres`, 1_000)) promotedAt = Date.now();
          else await sleep(200);
        }
        const recoveredAt = await firstOkSince(killAt, 60_000);
        for (let i = 0; i < 300 && probe.firstOkAfter(killAt) === null; i++) await sleep(100);
        const throughHaproxyAt = probe.firstOkAfter(killAt);
        figures[`${label}: ${primary.name} killed, ${standby.name} promoted after (s)`] = seconds(promotedAt === null ? null : promotedAt - killAt);
        figures[`${label}: first write through HAProxy after the kill (s)`] = seconds(throughHaproxyAt === null ? null : throughHaproxyAt - killAt);
        figures[`${label}: first 2xx after the kill (s)`] = seconds(recoveredAt === null ? null : recoveredAt - killAt);
        figures[`${label}: first 2xx after the new primary accepted writes (s)`] =
          recoveredAt === null || promotedAt === null ? 'none' : seconds(recoveredAt - promotedAt);
        if (promotedAt === null) violations.push(`${label}: ${standby.name} not promoted within 120 s`);
        if (recoveredAt === null) violations.push(`${label}: no 2xx within 60 s of the failover`);
        // The dead node comes back and follows the new primary, as its synchronous standby,
        // while the dashboards are checked.
        const logFile = primary.patroni?.logFile ?? '';
        const offset = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
        const restartAt = Date.now();
        cluster.startNode(primary);
        figures[`${label}: dashboard streams resumed`] = (await streamsResume(label, killAt)) ? 'both' : 'no';
        await cluster.waitSynchronous(180_000);
        figures[`${label}: ${primary.name} back as synchronous standby after (s)`] = seconds(Date.now() - restartAt);
        figures[`${label}: ${primary.name} rejoined by`] = rejoinHow(logFile, offset);
        figures[`${label}: HAProxy marked`] = cluster.haproxyChanges(haproxyLog).join(', ') || 'nothing';
        await endPhase(label, before, phaseStart);
      }

      for (const [i, how] of o.standbyLoss.entries()) {
        const label = how === 'kill' ? 'standby killed' : 'standby frozen';
        await cluster.waitSynchronous(180_000);
        const before = { ...stats.byStatus };
        const phaseStart = Date.now();
        const haproxyLog = cluster.haproxyLogSize();
        const primary = await primaryNode();
        const lost = cluster.nodes.find((n) => n !== primary) as PatroniNode;
        startLoad();
        await sleep(1_500 + Math.random() * 1_000);
        const lostAt = Date.now();
        // Killed: its connections close at once. Frozen (a hung machine, a partition): they
        // stay open and silent, and only Patroni's member key running out (ttl) tells.
        let frozen: number[] = [];
        if (how === 'kill') cluster.killNode(lost);
        else frozen = cluster.freezeNode(lost);
        // Patroni drops the lost standby: synchronous_standby_names empty on the primary.
        let droppedAt: number | null = null;
        const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${primary.pg}/postgres`, connectionTimeoutMillis: 2_000 });
        admin.on('error', () => undefined);
        await admin.connect();
        try {
          while (droppedAt === null && Date.now() - lostAt < STALL_BOUND_MS + 30_000) {
            const res = await admin.query<{ s: string }>('select current_setting($1) as s', ['synchronous_standby_names']);
            if ((res.rows[0]?.s ?? '') === '') droppedAt = Date.now();
            else await sleep(100);
          }
        } finally {
          await admin.end().catch(() => undefined);
        }
        await sleep(2_000);
        // The longest a write waited: the probe's (one write after another, through HAProxy)
        // and the PMS requests' (acknowledged after the loss, counted from the loss at most).
        const waited = probe.samples.filter((x) => x.end >= lostAt).map((x) => x.end - Math.max(x.start, lostAt));
        const probeStall = waited.length > 0 ? Math.max(...waited) : null;
        const firstOk = await firstOkSince(lostAt + 1, 60_000);
        const acknowledgedAfter = workers
          .flatMap((w) => w.ops.flatMap((op) => op.answers))
          .filter((a) => a.status === 200 && a.receivedAt >= lostAt)
          .map((a) => a.receivedAt - Math.max(a.sentAt, lostAt));
        const requestStall = acknowledgedAfter.length > 0 ? Math.max(...acknowledgedAfter) : null;
        figures[`${label}: ${lost.name} lost, dropped from synchronous_standby_names after (s)`] = seconds(droppedAt === null ? null : droppedAt - lostAt);
        figures[`${label}: longest wait of a write (probe, s)`] = seconds(probeStall);
        figures[`${label}: longest wait of an acknowledged PMS request (s)`] = seconds(requestStall);
        figures[`${label}: first 2xx to a request sent after the loss (s)`] = seconds(firstOk === null ? null : firstOk - lostAt);
        figures[`${label}: bound, ttl + loop_wait + 5 (s)`] = STALL_BOUND_MS / 1000;
        for (const [what, ms] of [
          ['the probe', probeStall],
          ['a PMS request', requestStall],
        ] as const)
          if (ms === null || ms > STALL_BOUND_MS) violations.push(`${label}: writes of ${what} waited ${seconds(ms)} s, past ${STALL_BOUND_MS / 1000} s`);
        if (droppedAt === null) violations.push(`${label}: ${lost.name} never dropped from synchronous_standby_names`);
        // Back: started again (killed) or running again (frozen), it follows as the synchronous standby.
        if (i < o.standbyLoss.length - 1 || o.lastStandbyReturns) {
          const logFile = lost.patroni?.logFile ?? '';
          const offset = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
          const backAt = Date.now();
          if (how === 'kill') cluster.startNode(lost);
          else cluster.thawNode(frozen);
          await cluster.waitSynchronous(180_000);
          figures[`${label}: ${lost.name} back as synchronous standby after (s)`] = seconds(Date.now() - backAt);
          figures[`${label}: ${lost.name} rejoined by`] = rejoinHow(logFile, offset);
        }
        figures[`${label}: HAProxy marked`] = cluster.haproxyChanges(haproxyLog).join(', ') || 'nothing';
        await endPhase(label, before, phaseStart);
      }
    } finally {
      await probe.stop();
    }

    const replays = await replayCheck((instances[0] as Instance).baseUrl, workers, () => Math.random() < 0.1);
    violations.push(...replays.lines);
    const totalOther5xx = fiveHundredsIn(stats.byStatus);
    const exits = instances.filter((i) => !i.alive).length;
    return {
      drill: 'PostgreSQL primary killed, Patroni failover behind HAProxy',
      engine: 'postgres',
      figures: {
        failovers: o.failovers,
        instances: instances.length,
        clients: o.clients,
        'Patroni ttl / loop_wait / retry_timeout (s)': `${PATRONI_TIMING.ttl} / ${PATRONI_TIMING.loopWait} / ${PATRONI_TIMING.retryTimeout}`,
        'requests sent': stats.sent,
        'operations acknowledged (2xx)': stats.acknowledged,
        'answers by status': JSON.stringify(stats.byStatus),
        '5xx other than 503': totalOther5xx,
        'process exits': exits,
        'acknowledged lost': lostSoFar,
        'processed twice': doubledSoFar,
        'acknowledged operations replayed': replays.checked,
        ...figures,
      },
      violations,
    };
  } finally {
    for (const s of streams) s.close();
    await Promise.all(instances.map((i) => i.stop()));
    await receiver.close();
    await storage?.close().catch(() => undefined);
    await cluster.stop();
  }
}
