import { describe, expect, inject, it } from 'vitest';
import { stallDrill } from './stall.js';
import { printResult } from '../support/drill-report.js';
import { testEngines, viaPgBouncer } from '../support/engines.js';

// The claim lives and dies with the change's transaction: a request stalled
// inside its transaction past the lock timeout while its retry arrives (on the other
// instance with PostgreSQL), then finishing or dying. The full drill stalls 65 s.

describe.each(testEngines())('drills: stalled request (%s)', (engine) => {
  it('a request stalled 7 s in its transaction, retried meanwhile, then resumed or killed, is processed exactly once; retries get 409 IDEMPOTENCY_KEY_IN_USE or the stored response', async () => {
    const result = await stallDrill({
      engine,
      pgAdminUrl: engine === 'postgres' ? inject('pgAdminUrl') : null,
      pgBouncerPort: engine === 'postgres' && viaPgBouncer() ? inject('pgBouncerPort') : null,
      stallSeconds: 7,
      variants: [
        { then: 'resume', at: 'mid' },
        { then: 'crash', at: 'commit' },
      ],
    });
    printResult(result);
    expect(result.violations).toEqual([]);
  }, 180_000);
});
