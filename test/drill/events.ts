import type { Engine } from '../../src/db/database.js';
import { DashboardStream } from '../support/drill-event-stream.js';
import { compareWithModels, HotelWorker, newLoadStats } from './hotel-load.js';
import { Instance, startInstances, sleep } from '../support/drill-instance.js';
import { percentile, round, type DrillResult } from '../support/drill-report.js';
import { addHotel, createStorage, staffSessionCookie } from '../support/drill-storage.js';

export interface EventsDrillOptions {
  engine: Engine;
  pgAdminUrl: string | null;
  /** PostgreSQL reached through this PgBouncer (transaction mode) in front of that cluster (test/support/drill-storage.ts). */
  pgBouncerPort?: number | null;
  hotels: number;
  /** Changes per second across all hotels (rate limits allow about 3 per second per key). */
  rate: number;
  /** The run ends after this many requests, or after maxSeconds. */
  requests: number;
  maxSeconds: number;
  /** One dashboard stream for every `streamEvery`-th hotel. */
  streamEvery: number;
  /** Violations: an event later than this, or an instance's memory above this. */
  maxLagMs: number;
  maxRssBytes: number;
}

const MB = 1024 * 1024;

/**
 * Sustained load of roster changes over many hotels (two instances on PostgreSQL) with
 * dashboard streams open: how long a change takes from its answer to the dashboard's
 * event, whether every change reaches the dashboards (or a re-read does), and the memory
 * of each instance over the run.
 */
export async function eventsDrill(o: EventsDrillOptions): Promise<DrillResult> {
  const storage = await createStorage(o.engine, o.pgAdminUrl, o.pgBouncerPort ?? null);
  const violations: string[] = [];
  const instances: Instance[] = [];
  const streams = new Map<string, DashboardStream>();
  try {
    const count = storage.engine === 'postgres' ? 2 : 1;
    instances.push(...(await startInstances(storage, count)));
    const hotels = [];
    for (let i = 0; i < o.hotels; i++) hotels.push(await addHotel(storage.db, 3));
    for (const [i, h] of hotels.entries()) {
      if (i % o.streamEvery !== 0) continue;
      const inst = instances[(i / o.streamEvery) % instances.length] as Instance;
      streams.set(h.id, new DashboardStream(() => inst.baseUrl, await staffSessionCookie(storage.db, h.id)));
    }
    await sleep(500);
    let turn = 0;
    const target = { baseUrl: () => (instances[turn++ % instances.length] as Instance).baseUrl };
    const stats = newLoadStats();
    const workers = hotels.map((h) => new HotelWorker(h, target, stats, { retryPauseMs: 250, pauseBetweenMs: 0, opsPerSecond: o.rate / o.hotels }));
    const rss = instances.map(() => [] as number[]);
    const sample = () => instances.forEach((inst, i) => rss[i]?.push(inst.rssBytes() ?? 0));
    sample();
    const sampler = setInterval(sample, 2_000);
    const began = Date.now();
    let stopping = false;
    const running = workers.map((w) => w.run(() => stopping));
    while (stats.sent < o.requests && Date.now() - began < o.maxSeconds * 1000) await sleep(500);
    stopping = true;
    await Promise.all(running);
    const seconds = (Date.now() - began) / 1000;
    sample();
    await sleep(5_000); // the backlog drains, if there is one
    sample();
    clearInterval(sampler);

    // Lag: from the answer of a change to the first event on its hotel's stream that names its guest (or asks for a re-read).
    const lags: number[] = [];
    let missing = 0;
    let rereads = 0;
    for (const w of workers) {
      const stream = streams.get(w.hotel.id);
      if (!stream) continue;
      for (const op of w.ops) {
        const ok = op.answers.find((a) => a.status === 200);
        const guestId = ok?.body?.guestId as string | undefined;
        if (!ok || !guestId || ok.body?._idempotent) continue;
        const event = stream.events.find((e) => e.receivedAt >= ok.sentAt && (e.changes.length === 0 || e.changes.some((c) => c.guestId === guestId)));
        if (!event) missing += 1;
        else {
          if (event.changes.length === 0) rereads += 1;
          lags.push(Math.max(0, event.receivedAt - ok.receivedAt));
        }
      }
    }
    lags.sort((a, b) => a - b);
    const compared = await compareWithModels(storage.db, workers);
    violations.push(...stats.violations, ...compared.lines);
    if (missing > 0) violations.push(`${missing} changes never reached their hotel's dashboard stream (neither the change nor a re-read)`);
    const worstLag = lags[lags.length - 1] ?? 0;
    if (worstLag > o.maxLagMs) violations.push(`a change reached the dashboard ${worstLag} ms after its answer (limit ${o.maxLagMs} ms)`);
    rss.forEach((series, i) => {
      const max = Math.max(...series);
      if (max > o.maxRssBytes) violations.push(`instance ${i + 1} used ${round(max / MB)} MB (limit ${round(o.maxRssBytes / MB)} MB)`);
    });
    for (const inst of instances) if (!inst.alive) violations.push(`${inst.label} exited: ${JSON.stringify(inst.exit)}\n${inst.tail()}`);
    return {
      drill: 'live events under sustained load',
      engine: storage.engine,
      figures: {
        instances: instances.length,
        hotels: o.hotels,
        'dashboard streams': streams.size,
        'requests sent': stats.sent,
        'changes acknowledged': stats.acknowledged,
        'achieved rate (changes/s)': round(stats.acknowledged / seconds),
        'answers by status': JSON.stringify(stats.byStatus),
        'changes followed on a stream': lags.length + missing,
        'of which announced by a re-read (backlog dropped)': rereads,
        'lag from answer to dashboard event (ms)': lags.length
          ? `p50 ${percentile(lags, 50)}, p95 ${percentile(lags, 95)}, p99 ${percentile(lags, 99)}, max ${worstLag}`
          : 'n/a',
        'events missing': missing,
        ...Object.fromEntries(
          rss.map((series, i) => [
            `RSS instance ${i + 1} (MB): start, max, at the end, 5 s after`,
            series.length
              ? `${round((series[0] ?? 0) / MB)}, ${round(Math.max(...series) / MB)}, ${round((series[series.length - 2] ?? 0) / MB)}, ${round((series[series.length - 1] ?? 0) / MB)}`
              : 'n/a',
          ]),
        ),
      },
      violations,
    };
  } finally {
    for (const s of streams.values()) s.close();
    await Promise.all(instances.map((i) => i.stop()));
    await storage.close();
  }
}
