import { startPostgresCluster } from '../support/postgres-cluster.js';
import { DashboardStream } from '../support/drill-event-stream.js';
import { isReplay } from '../support/drill-http.js';
import { compareWithModels, HotelWorker, newLoadStats, replayCheck } from './hotel-load.js';
import { Instance, startInstances, sleep } from '../support/drill-instance.js';
import { percentile, type DrillResult } from '../support/drill-report.js';
import { addHotel, createStorage, invariantViolations, staffSessionCookie } from '../support/drill-storage.js';

export interface OutageDrillOptions {
  /** PostgreSQL stopped (fast shutdown) and started again, this many times in a row. */
  outages: number;
  downMs: [number, number];
  clients: number;
}

/**
 * PostgreSQL stopped and started again under load, with two instances of the service
 * and a dashboard stream on each. The processes stay up; requests meanwhile get 503
 * SERVICE_UNAVAILABLE (never 500) and are sent again with their keys; nothing
 * acknowledged is lost or applied twice; after each restart the service answers again
 * without being restarted, and both dashboard streams carry the next change.
 */
export async function outageDrill(o: OutageDrillOptions): Promise<DrillResult> {
  const cluster = await startPostgresCluster();
  const storage = await createStorage('postgres', cluster.adminUrl);
  const violations: string[] = [];
  const instances: Instance[] = [];
  const streams: DashboardStream[] = [];
  try {
    instances.push(...(await startInstances(storage, 2)));
    const hotels = [];
    for (let i = 0; i < o.clients; i++) hotels.push(await addHotel(storage.db, 4));
    const watched = hotels[0];
    if (!watched) throw new Error('no hotel');
    for (const inst of instances) streams.push(new DashboardStream(() => inst.baseUrl, await staffSessionCookie(storage.db, watched.id)));
    let turn = 0;
    const target = { baseUrl: () => (instances[turn++ % instances.length] as Instance).baseUrl };
    const stats = newLoadStats();
    const workers = hotels.map((h) => new HotelWorker(h, target, stats, { retryPauseMs: 250, pauseBetweenMs: 20 }));
    let stopping = false;
    const running = workers.map((w) => w.run(() => stopping));
    const watcher = workers[0] as HotelWorker;

    const recoveries: number[] = [];
    let streamsResumed = 0;
    for (let c = 0; c < o.outages; c++) {
      await sleep(1_000 + Math.random() * 1_000);
      cluster.pause();
      await sleep(o.downMs[0] + Math.random() * (o.downMs[1] - o.downMs[0]));
      cluster.resume();
      const upAt = Date.now();
      // Recovered: the first 2xx after the database is back, on any instance.
      let recoveredAt: number | null = null;
      for (let i = 0; i < 300 && recoveredAt === null; i++) {
        const ok = workers.flatMap((w) => w.ops.flatMap((op) => op.answers)).filter((a) => a.status === 200 && a.receivedAt >= upAt);
        if (ok.length > 0) recoveredAt = Math.min(...ok.map((a) => a.receivedAt));
        else await sleep(50);
      }
      if (recoveredAt === null) violations.push(`outage ${c + 1}: no 2xx within 15 s of PostgreSQL starting again`);
      else recoveries.push(recoveredAt - upAt);
      for (const inst of instances) if (!inst.alive) violations.push(`outage ${c + 1}: ${inst.label} exited: ${JSON.stringify(inst.exit)}\n${inst.tail()}`);
      // The dashboards: changes made while the streams' LISTEN connection was down are
      // announced by a re-read (an empty change); after that, the watched hotel's next
      // change reaches the stream on both instances.
      await sleep(2_000);
      const since = Date.now();
      let guestId: string | null = null;
      for (let i = 0; i < 200 && guestId === null; i++) {
        // A change first sent after `since` and processed then: an operation in flight at the
        // stop may have committed before it, and its retry is a replay, which no event follows.
        const op = watcher.ops.find((x) => (x.answers[0]?.sentAt ?? 0) >= since && x.answers.some((a) => a.status === 200 && !isReplay(a)));
        guestId = (op?.answers.find((a) => a.status === 200 && !isReplay(a))?.body?.guestId as string | undefined) ?? null;
        if (guestId === null) await sleep(50);
      }
      const reread = streams.map((st) => st.events.some((e) => e.receivedAt >= upAt && e.changes.length === 0));
      if (guestId === null) violations.push(`outage ${c + 1}: the watched hotel had no change after the restart`);
      else {
        const heard = await Promise.all(streams.map((st) => st.waitFor(guestId ?? '', since, 10_000)));
        if (heard.every(Boolean) && reread.every(Boolean)) streamsResumed += 1;
        else
          violations.push(
            `outage ${c + 1}: dashboard streams after the restart: re-read ${JSON.stringify(reread)}, next change heard ${JSON.stringify(heard)}`,
          );
      }
    }
    await sleep(1_000);
    stopping = true;
    await Promise.all(running);
    const compared = await compareWithModels(storage.db, workers);
    const replays = await replayCheck((instances[0] as Instance).baseUrl, workers, () => Math.random() < 0.1);
    violations.push(...stats.violations, ...compared.lines, ...replays.lines, ...(await invariantViolations(storage.db)));
    const exits = instances.filter((i) => !i.alive).length;
    const fiveHundreds = Object.entries(stats.byStatus)
      .filter(([s]) => s.startsWith('5') && s !== '503')
      .reduce((n, [, v]) => n + v, 0);
    recoveries.sort((a, b) => a - b);
    return {
      drill: 'PostgreSQL stopped and started under load',
      engine: 'postgres',
      figures: {
        outages: o.outages,
        instances: instances.length,
        clients: o.clients,
        'requests sent': stats.sent,
        'operations acknowledged (2xx)': stats.acknowledged,
        'answers by status': JSON.stringify(stats.byStatus),
        '5xx other than 503': fiveHundreds,
        'process exits during outages': exits,
        'recovery after PostgreSQL started (ms)': recoveries.length ? `median ${percentile(recoveries, 50)}, max ${recoveries[recoveries.length - 1]}` : 'none',
        'acknowledged lost': compared.lost,
        'processed twice': compared.doubled,
        'dashboard streams told to re-read, then carrying the next change, after a restart': `${streamsResumed} of ${o.outages} outages (both instances)`,
      },
      violations,
    };
  } finally {
    for (const s of streams) s.close();
    await Promise.all(instances.map((i) => i.stop()));
    await storage.close().catch(() => undefined);
    cluster.stop();
  }
}
