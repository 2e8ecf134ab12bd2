import { describe, expect, inject, it } from 'vitest';
import { roomRaceDrill } from './room-race.js';
import { sameKeyDrill } from './same-key.js';
import { printResult } from '../support/drill-report.js';
import { testEngines, viaPgBouncer } from '../support/engines.js';

// Races across two instances on one PostgreSQL database (SQLite: one process),
// the short versions of `npm run drill`.

describe.each(testEngines())('drills: races (%s)', (engine) => {
  const pgAdminUrl = () => (engine === 'postgres' ? inject('pgAdminUrl') : null);
  // The drills' PostgreSQL runs go through the run's PgBouncer in transaction mode (engines.ts).
  const pgBouncerPort = () => (engine === 'postgres' && viaPgBouncer() ? inject('pgBouncerPort') : null);
  const instances = engine === 'postgres' ? 2 : 1;

  it('exactly one is processed: 100 rounds of 10-20 concurrent requests with one key (check-in, move, checkout, sync, different bodies): one processed, the others replays, IN_USE or REUSED', async () => {
    const result = await sameKeyDrill({ engine, pgAdminUrl: pgAdminUrl(), pgBouncerPort: pgBouncerPort(), rounds: 100, instances });
    printResult(result);
    expect(result.violations).toEqual([]);
  }, 180_000);

  it('"no 5xx from concurrency": 100 rounds of concurrent moves, swaps, check-ins into one room and check-outs; every answer set is explained by a serial order, never a 5xx', async () => {
    const result = await roomRaceDrill({ engine, pgAdminUrl: pgAdminUrl(), pgBouncerPort: pgBouncerPort(), rounds: 100, instances });
    printResult(result);
    expect(result.violations).toEqual([]);
    expect(result.figures['5xx']).toBe(0);
  }, 180_000);
});
