import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, vi } from 'vitest';
import { describeProcess, FILE_MARK, killAll, markedProcesses, RUN_MARK, scaled, waitGone } from './test-run.js';

// Runs before each test file, in the file's own process (docs/testing.md, "What a test leaves
// behind"): marks what the file starts, gives it a temporary folder of its own, and after the
// file (its own afterAll hooks first) or when the process exits, kills what it left running
// and removes the folder.

const runId = process.env[RUN_MARK];
const fileMark = `${runId ?? 'none'}:${process.pid}`;
process.env[FILE_MARK] = fileMark;

// The run's folder is made by the global setup; a file run outside it keeps the usual TMPDIR.
const runDir = process.env.INNSYNC_TEST_RUN_DIR;
let fileDir: string | null = null;
if (runDir && fs.existsSync(runDir)) {
  fileDir = path.join(runDir, `file-${process.pid}`);
  fs.mkdirSync(fileDir, { recursive: true, mode: 0o711 }); // PostgreSQL (another user) must pass through
  process.env.TMPDIR = fileDir;
}

// Files that start browsers, CLI processes or servers get more room than the default.
const testPath = expect.getState().testPath ?? '';
// Which file this is decides whether its PostgreSQL databases are reached through PgBouncer (engines.ts).
process.env.INNSYNC_TEST_PATH = testPath;
if (/\/test\/(browser|cli|drill)\//.test(testPath) || /cli-and-restart|two-instances/.test(testPath)) {
  vi.setConfig({ testTimeout: scaled(90_000), hookTimeout: scaled(120_000) });
}

let cleaned = false;
function cleanUp(): void {
  if (cleaned) return;
  cleaned = true;
  const left = markedProcesses(FILE_MARK, fileMark);
  if (left.length > 0) {
    killAll(left);
    waitGone(left);
    process.stderr.write(
      `${path.relative(process.cwd(), testPath)} left ${left.length} process(es) running; killed: ${left.map(describeProcess).join('; ')}\n`,
    );
  }
  if (fileDir) fs.rmSync(fileDir, { recursive: true, force: true });
}

afterAll(cleanUp);
process.once('exit', cleanUp);
