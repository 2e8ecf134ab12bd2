import fs from 'node:fs';
import os from 'node:os';

// What a test run owns, so that it can remove all of it whatever the outcome (docs/testing.md):
// every process a test starts carries the run's mark (and its file's mark) in its environment,
// inherited from the test process, so it is found in /proc even after its parent died; every
// folder a test makes is under the run's own temporary folder (TMPDIR), removed at the end.

/** In the environment of everything a test run starts: the run's id. */
export const RUN_MARK = 'INNSYNC_TEST_RUN';
/** In the environment of everything one test file starts: `<run id>:<test process pid>`. */
export const FILE_MARK = 'INNSYNC_TEST_FILE';
/** The factor every timeout of the suite is multiplied by (set once per run, see timeScale). */
const SCALE_VAR = 'INNSYNC_TEST_TIME_SCALE';

/**
 * The factor timeouts get on this machine now: TEST_TIME_SCALE when set, else the load per
 * core (1 on a quiet machine, at most 4 on one loaded several times over).
 */
function machineTimeScale(env: NodeJS.ProcessEnv = process.env): number {
  const set = Number(env.TEST_TIME_SCALE);
  if (Number.isFinite(set) && set > 0) return set;
  const perCore = os.loadavg()[0]! / Math.max(1, os.availableParallelism());
  return Math.round(Math.min(4, Math.max(1, perCore)) * 10) / 10;
}

/** Fixes the run's factor (vitest.config.ts): every test process started afterwards inherits it. */
export function fixTimeScale(): number {
  const scale = machineTimeScale();
  process.env[SCALE_VAR] = String(scale);
  return scale;
}

/** The run's factor (fixed when the run started; 1 outside a run). */
export function timeScale(): number {
  const value = Number(process.env[SCALE_VAR]);
  return Number.isFinite(value) && value > 0 ? value : 1;
}

/** `ms` scaled to this run's machine. */
export const scaled = (ms: number): number => Math.round(ms * timeScale());

export interface MarkedProcess {
  pid: number;
  command: string;
}

function readEnviron(pid: number): string[] | null {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
  } catch {
    return null; // gone, or not ours to read
  }
}

function commandLine(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Living processes whose environment holds `name=value`, other than this one and `except`. */
export function markedProcesses(name: string, value: string, except: (p: MarkedProcess) => boolean = () => false): MarkedProcess[] {
  const wanted = `${name}=${value}`;
  const found: MarkedProcess[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return found; // no /proc: nothing to sweep
  }
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    if (!readEnviron(pid)?.includes(wanted) || isZombie(pid)) continue;
    const p = { pid, command: commandLine(pid) };
    if (!except(p)) found.push(p);
  }
  return found;
}

/** SIGKILLs each process (they are leftovers: their test is over). Returns those it killed. */
export function killAll(list: MarkedProcess[]): MarkedProcess[] {
  const killed: MarkedProcess[] = [];
  for (const p of list) {
    try {
      process.kill(p.pid, 'SIGKILL');
      killed.push(p);
    } catch {
      // already gone
    }
  }
  return killed;
}

/** Waits (synchronously, briefly) until none of `list` is alive, so their files can be removed. */
export function waitGone(list: MarkedProcess[], ms = 2_000): void {
  const deadline = Date.now() + ms;
  const shared = new Int32Array(new SharedArrayBuffer(4));
  while (Date.now() < deadline && list.some((p) => !isZombie(p.pid))) Atomics.wait(shared, 0, 0, 20);
}

/** A readable line for a leftover process (its command cut short). */
export const describeProcess = (p: MarkedProcess): string => `${p.pid} ${p.command.length > 120 ? `${p.command.slice(0, 119)}…` : p.command}`;
