import { describe, expect, it } from 'vitest';
import { outageDrill } from './outage.js';
import { printResult } from '../support/drill-report.js';
import { testEngines } from '../support/engines.js';

// The database may restart; the service stays: a PostgreSQL cluster of the
// drill's own, stopped (fast shutdown) and started again under load, three times.

describe.skipIf(!testEngines().includes('postgres'))('drills: PostgreSQL outage (postgres)', () => {
  it('PostgreSQL stopped and started 3 times under load with two instances: no process exits, 503 meanwhile (never 500), recovery without a restart, nothing acknowledged lost or doubled, dashboard streams resume', async () => {
    const result = await outageDrill({ outages: 3, downMs: [1_000, 2_000], clients: 8 });
    printResult(result);
    expect(result.violations).toEqual([]);
    expect(result.figures['process exits during outages']).toBe(0);
    expect(result.figures['5xx other than 503']).toBe(0);
  }, 180_000);
});
