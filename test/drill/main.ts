/**
 * Reliability drills (bench/README.md: Drills): the service run as operators run it,
 * attacked the way a payments engineer tests "retries are always safe".
 *
 *   npm run drill                           # every drill, SQLite and PostgreSQL, full size
 *   npm run drill -- --quick                # the short versions npm test runs
 *   npm run drill -- --engine postgres --only kill,stall
 *
 * PostgreSQL drills run in a throwaway cluster of their own (PG_BIN, default
 * /usr/lib/postgresql/15/bin; fsync off unless DRILL_PG_DURABLE=1, which keeps PostgreSQL's
 * durable defaults). DRILL_SERVER_BIN=<path to bin/innsync.js> runs them against another
 * build (a baseline). Exit status 1 when any drill saw a violation.
 */
import type { Engine } from '../../src/db/database.js';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { drillAgent } from '../support/drill-instance.js';
import { eventsDrill } from './events.js';
import { failoverDrill } from './failover.js';
import { killDrill } from './kill.js';
import { outageDrill } from './outage.js';
import { poolerDrill } from './pooler.js';
import { roomRaceDrill } from './room-race.js';
import { sameKeyDrill } from './same-key.js';
import { stallDrill } from './stall.js';
import { syncKillDrill } from './sync-kill.js';
import { printResult, type DrillResult } from '../support/drill-report.js';

interface DrillSpec {
  name: string;
  engines: Engine[];
  /** Starts a PostgreSQL of its own: the shared throwaway cluster is not needed. */
  ownCluster?: boolean;
  run(engine: Engine, pgAdminUrl: string | null, quick: boolean): Promise<DrillResult>;
}

export const DRILLS: DrillSpec[] = [
  {
    name: 'kill',
    engines: ['sqlite', 'postgres'],
    run: (engine, pgAdminUrl, quick) =>
      killDrill({
        engine,
        pgAdminUrl,
        kills: quick ? 3 : engine === 'sqlite' ? 25 : 15,
        clients: quick ? 8 : 30,
        pairsPerHotel: quick ? 4 : 8,
        runMs: quick ? [500, 1500] : [1000, 4000],
        logLossWindowMs: quick ? 1000 : 250,
      }),
  },
  {
    name: 'sync-kill',
    engines: ['sqlite', 'postgres'],
    run: (engine, pgAdminUrl, quick) => syncKillDrill({ engine, pgAdminUrl, guests: quick ? 2_000 : 20_000, kills: quick ? 3 : 20 }),
  },
  {
    name: 'same-key',
    engines: ['sqlite', 'postgres'],
    run: (engine, pgAdminUrl, quick) => sameKeyDrill({ engine, pgAdminUrl, rounds: quick ? 100 : 1000, instances: engine === 'postgres' ? 2 : 1 }),
  },
  {
    name: 'room-race',
    engines: ['sqlite', 'postgres'],
    run: (engine, pgAdminUrl, quick) => roomRaceDrill({ engine, pgAdminUrl, rounds: quick ? 100 : 500, instances: engine === 'postgres' ? 2 : 1 }),
  },
  {
    name: 'stall',
    engines: ['sqlite', 'postgres'],
    run: (engine, pgAdminUrl, quick) =>
      stallDrill({
        engine,
        pgAdminUrl,
        stallSeconds: quick ? 7 : 65,
        variants: quick
          ? [
              { then: 'resume', at: 'mid' },
              { then: 'crash', at: 'commit' },
            ]
          : [
              { then: 'resume', at: 'mid' },
              { then: 'resume', at: 'commit' },
              { then: 'crash', at: 'mid' },
              { then: 'crash', at: 'commit' },
              { then: 'freeze', at: 'mid' },
            ],
      }),
  },
  {
    name: 'outage',
    engines: ['postgres'],
    run: (_engine, _pgAdminUrl, quick) => outageDrill({ outages: quick ? 3 : 10, downMs: [1_000, 3_000], clients: quick ? 8 : 30 }),
  },
  {
    name: 'pooler',
    engines: ['postgres'],
    run: (_engine, pgAdminUrl, quick) => poolerDrill({ pgAdminUrl: pgAdminUrl ?? '', quick }),
  },
  {
    name: 'failover',
    engines: ['postgres'],
    ownCluster: true,
    run: (_engine, _pgAdminUrl, quick) =>
      failoverDrill({
        failovers: quick ? 1 : 3,
        clients: quick ? 8 : 30,
        standbyLoss: quick ? ['kill'] : ['kill', 'freeze'],
        lastStandbyReturns: !quick,
      }),
  },
  {
    name: 'events',
    engines: ['sqlite', 'postgres'],
    run: (engine, pgAdminUrl, quick) =>
      eventsDrill({
        engine,
        pgAdminUrl,
        hotels: 120,
        rate: 350,
        requests: quick ? 10_000 : 300_000,
        maxSeconds: quick ? 60 : 1_500,
        streamEvery: 4,
        maxLagMs: 5_000,
        maxRssBytes: 500 * 1024 * 1024,
      }),
  },
];

function arg(name: string): string | null {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? null) : null;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const only = arg('--only')?.split(',') ?? null;
  const engines = (arg('--engine')?.split(',') ?? ['sqlite', 'postgres']) as Engine[];
  for (const name of only ?? [])
    if (!DRILLS.some((d) => d.name === name)) throw new Error(`unknown drill ${name}; drills: ${DRILLS.map((d) => d.name).join(', ')}`);
  let cluster: PostgresCluster | null = null;
  const results: DrillResult[] = [];
  try {
    for (const engine of engines) {
      for (const drill of DRILLS) {
        if ((only && !only.includes(drill.name)) || !drill.engines.includes(engine)) continue;
        if (engine === 'postgres' && !cluster && !drill.ownCluster) cluster = await startPostgresCluster({ durable: process.env.DRILL_PG_DURABLE === '1' });
        const started = Date.now();
        const result = await drill.run(engine, cluster?.adminUrl ?? null, quick);
        result.figures['drill time (s)'] = Math.round((Date.now() - started) / 100) / 10;
        printResult(result);
        results.push(result);
      }
    }
  } finally {
    cluster?.stop();
    await drillAgent.close();
  }
  const failed = results.filter((r) => r.violations.length > 0);
  console.log(
    `\n${results.length} drill runs, ${failed.length} with violations${failed.length ? `: ${failed.map((r) => `${r.drill} (${r.engine})`).join(', ')}` : ''}`,
  );
  process.exitCode = failed.length > 0 ? 1 : 0;
}

await main();
