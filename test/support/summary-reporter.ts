import type { Reporter, TestModule } from 'vitest/node';
import { timeScale } from './test-run.js';

const SLOWEST = 8;

/**
 * Ends the run with the slowest test files and one plain line, "N passed, N failed, N skipped",
 * for CI logs (docs/testing.md).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const durations: { file: string; ms: number }[] = [];
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file that failed to load has no tests to count: count it as a failure.
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) failed++;
      durations.push({ file: m.relativeModuleId, ms: m.diagnostic().duration });
    }
    failed += unhandledErrors.length;
    const slowest = durations.sort((a, b) => b.ms - a.ms).slice(0, SLOWEST);
    if (slowest.length > 1) {
      process.stdout.write(`\nslowest test files (timeouts × ${timeScale()} for this machine's load):\n`);
      for (const s of slowest) process.stdout.write(`  ${(s.ms / 1000).toFixed(1).padStart(7)} s  ${s.file}\n`);
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
