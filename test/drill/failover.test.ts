import { describe, expect, it } from 'vitest';
import { failoverDrill } from './failover.js';
import { missingBinaries } from './patroni-cluster.js';
import { printResult } from '../support/drill-report.js';
import { testEngines } from '../support/engines.js';

// The primary's machine may die; the service stays: Patroni (etcd) fails over to the
// synchronous standby, HAProxy sends the connections there, and the service goes on
// without a restart (bench/README.md, Drills: failover). Needs patroni, etcd and haproxy
// installed (CI: apt-get install patroni etcd-server haproxy).

const missing = missingBinaries();
const skip = !testEngines().includes('postgres') || missing.length > 0;
const why = !testEngines().includes('postgres')
  ? ' [skipped: postgres not in TEST_ENGINES]'
  : missing.length > 0
    ? ` [skipped: not installed: ${missing.join(', ')}]`
    : '';

// A missing binary is said out loud: the drill would otherwise vanish from CI unnoticed.
if (testEngines().includes('postgres') && missing.length > 0) console.warn(`test/drill/failover.test.ts${why}`);

describe.skipIf(skip)(`drills: PostgreSQL failover (postgres)${why}`, () => {
  it('the primary killed under load with two instances: Patroni promotes the synchronous standby, 503 meanwhile (never 500), no process exits, nothing acknowledged lost or doubled, dashboard streams and webhook deliveries resume, the old primary rejoins; the standby killed stops writes no longer than Patroni allows', async () => {
    const result = await failoverDrill({ failovers: 1, clients: 8, standbyLoss: ['kill'], lastStandbyReturns: false });
    printResult(result);
    expect(result.violations).toEqual([]);
    expect(result.figures['process exits']).toBe(0);
    expect(result.figures['5xx other than 503']).toBe(0);
    expect(result.figures['acknowledged lost']).toBe(0);
    expect(result.figures['processed twice']).toBe(0);
  }, 400_000);
});
