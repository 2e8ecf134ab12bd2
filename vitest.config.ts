import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    // expect.poll waits for something asynchronous (a live event, a batched log row); on a
    // loaded two-core machine one second is not always enough. It still fails, just later.
    expect: { poll: { timeout: 10_000, interval: 50 } },
    hookTimeout: 60_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
