import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, PROJECT_ROOT } from '../cli/cli-helpers.js';

// docs/testing.md, "What a test leaves behind": the suite's own setup, run over two test files
// made to misbehave (test/suite/fixtures): one times out with `innsync serve` and an orphaned
// process running, the other's test process is killed outright. Neither cleans up; the setup
// must, and the run's temporary folder must be gone afterwards.

interface Report {
  pids: number[];
  folders: string[];
}

const alive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z'); // a zombie has ended
  } catch {
    return false;
  }
};

describe("the suite's cleanup", () => {
  const reportDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-leftover-report-'));
  afterAll(() => fs.rmSync(reportDir, { recursive: true, force: true }));

  it('kills what a timed-out or killed test file left running and removes its folders', async () => {
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [path.join(PROJECT_ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test/suite/fixtures/vitest.config.ts'],
        {
          cwd: PROJECT_ROOT,
          env: childEnv({ LEFTOVER_REPORT: reportDir, TEST_ENGINES: 'sqlite', NO_COLOR: '1' }),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, output }));
    });
    expect(run.code, run.output).toBe(1); // both fixture files fail, as they are made to

    const reports = ['timed-out', 'killed'].map((name) => JSON.parse(fs.readFileSync(path.join(reportDir, `${name}.json`), 'utf8')) as Report);
    for (const report of reports) {
      expect(report.pids).toHaveLength(2);
      await expect.poll(() => report.pids.filter(alive), { timeout: 5_000 }).toEqual([]);
      for (const folder of report.folders) expect(fs.existsSync(folder), folder).toBe(false);
    }
    expect(run.output).toMatch(/left 2 process\(es\) running; killed: \d+ .*innsync\.js serve/);
  });
});
