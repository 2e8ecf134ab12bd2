import { describe, expect, inject, it } from 'vitest';
import { killDrill } from './kill.js';
import { syncKillDrill } from './sync-kill.js';
import { printResult } from '../support/drill-report.js';
import { testEngines, viaPgBouncer } from '../support/engines.js';

// The drills live in the project: the short versions of `npm run drill`
// (bench/README.md, "Drills"), against the built service (`npm test` builds first). Each
// drill returns every violation it saw: lost acknowledged changes, double processing,
// broken invariants, integrity-check failures.

describe.each(testEngines())('drills: SIGKILL (%s)', (engine) => {
  const pgAdminUrl = () => (engine === 'postgres' ? inject('pgAdminUrl') : null);
  // The drills' PostgreSQL runs go through the run's PgBouncer in transaction mode (engines.ts).
  const pgBouncerPort = () => (engine === 'postgres' && viaPgBouncer() ? inject('pgBouncerPort') : null);

  it('SIGKILL under mixed load at 3 random points, every unanswered request sent again with its key: nothing acknowledged lost, nothing processed twice, invariants and integrity hold, request-log loss bounded to the last second', async () => {
    // Load runs 1-2 s between kills (most of a short drill is the restarts): enough acknowledged
    // operations that losing or doubling one would show, on a loaded machine too.
    const result = await killDrill({
      engine,
      pgAdminUrl: pgAdminUrl(),
      pgBouncerPort: pgBouncerPort(),
      kills: 3,
      clients: 8,
      pairsPerHotel: 4,
      runMs: [1000, 2000],
      logLossWindowMs: 1000,
    });
    printResult(result);
    expect(result.violations).toEqual([]);
    expect(result.figures['operations acknowledged (2xx)']).toBeGreaterThan(60);
  }, 180_000);

  it('one transaction: SIGKILL during a 2,000-guest sync leaves the roster as before or as the list, never half applied; the sync sent again is applied once', async () => {
    const result = await syncKillDrill({ engine, pgAdminUrl: pgAdminUrl(), pgBouncerPort: pgBouncerPort(), guests: 2_000, kills: 3 });
    printResult(result);
    expect(result.violations).toEqual([]);
  }, 180_000);
});
