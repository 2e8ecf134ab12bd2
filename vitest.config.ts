import { defineConfig } from 'vitest/config';
import { fixTimeScale } from './test/support/test-run.js';

// Timeouts grow with the machine's load (docs/testing.md): measured once when the run starts,
// passed to every test process, and used by the suite's own waits too (test/support/test-run.ts).
const scale = fixTimeScale();
const scaled = (ms: number): number => Math.round(ms * scale);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/file-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: scaled(30_000),
    // expect.poll waits for something asynchronous (a live event, a batched log row); on a
    // loaded two-core machine one second is not always enough. It still fails, just later.
    expect: { poll: { timeout: scaled(10_000), interval: 50 } },
    hookTimeout: scaled(60_000),
    teardownTimeout: scaled(30_000),
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
