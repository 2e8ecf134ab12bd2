import type { Engine } from '../../src/db/database.js';
import { compareWithModels, HotelWorker, newLoadStats, replayCheck, type AnsweredRequest } from './hotel-load.js';
import { sleep, startOn } from '../support/drill-instance.js';
import { percentile, round, type DrillResult } from '../support/drill-report.js';
import { addHotel, createStorage, invariantViolations, sqliteIntegrity, type DrillStorage } from '../support/drill-storage.js';

export interface KillDrillOptions {
  engine: Engine;
  pgAdminUrl: string | null;
  /** PostgreSQL reached through this PgBouncer (transaction mode) in front of that cluster (test/support/drill-storage.ts). */
  pgBouncerPort?: number | null;
  /** SIGKILLs, each after a random time under load. */
  kills: number;
  /** Concurrent clients, each with a hotel of its own. */
  clients: number;
  /** Key pairs per hotel (each key may send 60 requests a minute per endpoint). */
  pairsPerHotel: number;
  runMs: [number, number];
  /** A request-log row may be missing only if its request was answered less than this before the kill. */
  logLossWindowMs: number;
}

/**
 * SIGKILL under mixed load at random points, the service restarted each time; every
 * unanswered request is sent again with its own key. Checks: nothing acknowledged lost,
 * nothing processed twice, the roster's invariants, SQLite's integrity check after every
 * kill, and which request-log rows a kill lost.
 */
export async function killDrill(o: KillDrillOptions): Promise<DrillResult> {
  const storage = await createStorage(o.engine, o.pgAdminUrl, o.pgBouncerPort ?? null);
  const violations: string[] = [];
  const figures: DrillResult['figures'] = {};
  try {
    const start = () => startOn(storage, 'server');
    let instance = await start();
    const hotels = [];
    for (let i = 0; i < o.clients; i++) hotels.push(await addHotel(storage.db, o.pairsPerHotel));
    const target = { baseUrl: () => instance.baseUrl };
    const stats = newLoadStats();
    const workers = hotels.map((h) => new HotelWorker(h, target, stats));
    let stopping = false;
    const running = workers.map((w) => w.run(() => stopping));

    let segmentStart = Date.now();
    let logAnswered = 0;
    const missingAges: number[] = [];
    let integrityChecks = 0;
    const killTimes: number[] = [];
    for (let k = 0; k < o.kills; k++) {
      await sleep(o.runMs[0] + Math.random() * (o.runMs[1] - o.runMs[0]));
      if (!instance.alive) violations.push(`the service exited on its own before kill ${k + 1}: ${JSON.stringify(instance.exit)}\n${instance.tail()}`);
      const killAt = Date.now();
      killTimes.push(killAt);
      instance.kill('SIGKILL');
      await instance.exited;
      const answered = workers.flatMap((w) => w.answered.filter((a) => a.receivedAt >= segmentStart && a.receivedAt < killAt));
      const missing = await missingLogRows(storage, answered);
      logAnswered += answered.length;
      for (const a of missing) missingAges.push(killAt - a.receivedAt);
      if (storage.engine === 'sqlite') {
        integrityChecks += 1;
        const integrity = await sqliteIntegrity(storage.dataDir);
        if (integrity !== 'ok') violations.push(`SQLite integrity check after kill ${k + 1}: ${integrity}`);
      }
      instance = await start();
      segmentStart = Date.now();
    }
    await sleep(o.runMs[0]);
    stopping = true;
    await Promise.all(running);

    const compared = await compareWithModels(storage.db, workers);
    const invariants = await invariantViolations(storage.db);
    violations.push(...stats.violations, ...compared.lines, ...invariants);
    // The operations at risk: acknowledged in the last second before a kill, or settled by a retry after one.
    const atRisk = (receivedAt: number) => killTimes.some((t) => receivedAt < t && t - receivedAt < 1_000);
    const replays = await replayCheck(instance.baseUrl, workers, (op) => {
      const ok = op.answers.find((a) => a.status === 200);
      return ok !== undefined && (atRisk(ok.receivedAt) || op.answers.some((a) => a.status === 0));
    });
    violations.push(...replays.lines);
    await instance.stop();
    if (instance.exit?.code !== 0) violations.push(`the service did not stop cleanly on SIGTERM: ${JSON.stringify(instance.exit)}`);
    if (storage.engine === 'sqlite') {
      integrityChecks += 1;
      const integrity = await sqliteIntegrity(storage.dataDir);
      if (integrity !== 'ok') violations.push(`SQLite integrity check at the end: ${integrity}`);
    }
    missingAges.sort((a, b) => a - b);
    const tooOld = missingAges.filter((age) => age > o.logLossWindowMs);
    if (tooOld.length > 0)
      violations.push(
        `${tooOld.length} request-log rows lost for requests answered more than ${o.logLossWindowMs} ms before a kill (oldest ${Math.max(...tooOld)} ms)`,
      );

    Object.assign(figures, {
      kills: o.kills,
      clients: o.clients,
      'requests sent': stats.sent,
      'operations acknowledged (2xx)': stats.acknowledged,
      'of which replays after a retry': stats.replays,
      'requests unanswered (killed), sent again': stats.unanswered,
      'answers by status': JSON.stringify(stats.byStatus),
      'acknowledged lost': compared.lost,
      'processed twice': compared.doubled + stats.violations.filter((v) => v.includes('processed twice')).length,
      'acknowledged operations sent again and replayed': `${replays.checked - replays.lines.length} of ${replays.checked}`,
      'invariant violations': invariants.length,
      'SQLite integrity checks':
        storage.engine === 'sqlite' ? `${integrityChecks} run, ${violations.filter((v) => v.startsWith('SQLite integrity')).length} failed` : 'n/a',
      'request-log rows missing after kills': `${missingAges.length} of ${logAnswered} answered (${round((100 * missingAges.length) / Math.max(1, logAnswered), 2)} %)`,
      'age of missing rows at the kill (ms)':
        missingAges.length === 0 ? 'none missing' : `median ${percentile(missingAges, 50)}, max ${missingAges[missingAges.length - 1]}`,
    });
    return { drill: 'kill under load', engine: storage.engine, figures, violations };
  } finally {
    await storage.close();
  }
}

/** The answered requests that have no request-log row. */
async function missingLogRows(storage: DrillStorage, answered: AnsweredRequest[]): Promise<AnsweredRequest[]> {
  const found = new Set<string>();
  for (let i = 0; i < answered.length; i += 500) {
    const ids = answered.slice(i, i + 500).map((a) => a.requestId);
    const rows = await storage.db.selectFrom('request_log').select('id').where('id', 'in', ids).execute();
    for (const r of rows) found.add(r.id);
  }
  return answered.filter((a) => !found.has(a.requestId));
}
