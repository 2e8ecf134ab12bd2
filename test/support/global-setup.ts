import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startPostgresCluster, type PostgresCluster } from './postgres-cluster.js';
import { pgBouncerInstalled, startPgBouncer, type PgBouncer } from './pgbouncer.js';
import { testEngines } from './engines.js';
import { describeProcess, killAll, markedProcesses, RUN_MARK, waitGone } from './test-run.js';

// Once per run (docs/testing.md, "What a test leaves behind"): the run's mark and temporary
// folder, inherited by every test process and everything they start, and the shared
// PostgreSQL cluster. At the end, whatever is still running with the run's mark is killed
// (a test process killed by a timeout cannot clean up after itself) and the folder removed.

let cluster: PostgresCluster | null = null;
let bouncer: PgBouncer | null = null;
let runDir: string | null = null;
let runId = '';

export async function setup(project: TestProject): Promise<void> {
  runId = randomBytes(6).toString('hex');
  runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-test-run-'));
  fs.chmodSync(runDir, 0o711); // PostgreSQL (another user) must pass through to its cluster folder
  process.env[RUN_MARK] = runId;
  process.env.INNSYNC_TEST_RUN_DIR = runDir;
  process.on('exit', teardown); // a run stopped early (Ctrl-C) still sweeps
  if (testEngines().includes('postgres')) {
    cluster = await startPostgresCluster();
    project.provide('pgAdminUrl', cluster.adminUrl);
    // PgBouncer in transaction mode in front of it, for the files that go through it (engines.ts).
    if (process.env.TEST_PG_POOLER !== 'none') {
      if (!pgBouncerInstalled())
        throw new Error('PgBouncer is not installed (the PostgreSQL tests run partly through it): apt-get install pgbouncer, or run with TEST_PG_POOLER=none');
      bouncer = await startPgBouncer(cluster.adminUrl);
    }
    project.provide('pgBouncerPort', bouncer?.port ?? 0);
  } else {
    project.provide('pgAdminUrl', '');
    project.provide('pgBouncerPort', 0);
  }
}

export function teardown(): void {
  try {
    bouncer?.stop();
  } finally {
    bouncer = null;
    try {
      cluster?.stop();
    } finally {
      cluster = null;
    }
  }
  if (!runId) return;
  // The test processes themselves (vitest's workers) carry the mark too; they are not leftovers.
  const left = markedProcesses(RUN_MARK, runId, (p) => /vitest/.test(p.command));
  if (left.length > 0) {
    killAll(left);
    waitGone(left);
    process.stderr.write(`\nThe run left ${left.length} process(es) running; killed: ${left.map(describeProcess).join('; ')}\n`);
  }
  if (runDir) fs.rmSync(runDir, { recursive: true, force: true });
  runDir = null;
  runId = '';
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    /** The run's PgBouncer (transaction mode) in front of that cluster; 0: none. */
    pgBouncerPort: number;
  }
}
