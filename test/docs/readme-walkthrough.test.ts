import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/postgres-cluster.js';
import { BIN, PROJECT_ROOT, childEnv, getJson, runCli, waitForHttps, type ServeProcess } from '../cli/cli-helpers.js';
import { scaled } from '../support/test-run.js';

// README.md, "Five minutes: from start to a first check-in": the walkthrough works when
// pasted as it is written. Its shell blocks are marked for this test with an HTML comment
// (invisible on the rendered page): `<!-- walkthrough: server -->` before the block that
// starts the service (in the first terminal), `<!-- walkthrough -->` before each block
// pasted, in order, into the second. The server is started as `npm start` starts it
// (`innsync serve`, after the build `npm test` has done) on a free port and a throwaway
// data directory; the blocks run in one bash, as one terminal, in the project's folder,
// with that PORT and DATA_DIR in their environment, which their commands honour. The
// password `user create` asks for is typed on its stdin.

const SECTION = '## Five minutes: from start to a first check-in';
const PASSWORD = 'walkthrough-password-1';

interface Block {
  kind: 'server' | 'run';
  text: string;
}

/** The walkthrough's ```sh blocks, each with its marker; fails on a block without one. */
function walkthroughBlocks(readme: string): Block[] {
  const start = readme.indexOf(SECTION);
  if (start < 0) throw new Error(`README.md has no section "${SECTION}"`);
  const rest = readme.slice(start + SECTION.length);
  const next = rest.search(/^## /m);
  const section = next < 0 ? rest : rest.slice(0, next);
  const lines = section.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    const indent = open[1] ?? '';
    let end = i + 1;
    while (end < lines.length && (lines[end] ?? '').trim() !== '```') end++;
    const body = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
    const lang = open[2];
    let j = i - 1;
    while (j >= 0 && (lines[j] ?? '').trim() === '') j--;
    const marker = /^\s*<!-- walkthrough(: server)? -->\s*$/.exec(lines[j] ?? '');
    if (lang === 'sh' || lang === 'bash') {
      if (!marker) throw new Error(`a shell block of the walkthrough has no <!-- walkthrough --> marker:\n${body.join('\n')}`);
      blocks.push({ kind: marker[1] ? 'server' : 'run', text: body.join('\n') });
    }
    i = end;
  }
  return blocks;
}

/** Ends a process group (a detached child and all it started), if it still runs. */
function killGroup(child: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

async function stopGroup(child: ChildProcess | undefined, exited: Promise<unknown> | undefined): Promise<void> {
  if (!child?.pid) return;
  killGroup(child, 'SIGTERM');
  const stopped = await Promise.race([exited?.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 10_000))]);
  if (!stopped) killGroup(child, 'SIGKILL');
  // Whatever else the group started (npx, node): gone too.
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // no process left in the group
  }
}

describe("the README's walkthrough, pasted in order", () => {
  let dir = '';
  let dataDir = '';
  let port = 0;
  let server: ChildProcess | undefined;
  let serverExited: Promise<unknown> | undefined;
  let serve: ServeProcess | undefined;
  let shell: ChildProcess | undefined;
  let shellExited: Promise<unknown> | undefined;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-readme-'));
    dataDir = path.join(dir, 'data');
    port = await freePort();
  });
  afterAll(async () => {
    // Also when the test failed or timed out half-way: the shell's group, the server's, the folder.
    await stopGroup(shell, shellExited);
    await stopGroup(server, serverExited);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every marked block exits 0, and the guest checked in with the live key is on the roster', { timeout: scaled(240_000) }, async () => {
    const blocks = walkthroughBlocks(fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8'));
    const serverBlocks = blocks.filter((b) => b.kind === 'server');
    const runBlocks = blocks.filter((b) => b.kind === 'run');
    expect(serverBlocks).toHaveLength(1);
    expect(runBlocks.length).toBeGreaterThanOrEqual(2);

    // The first terminal: `npm start` is the build and `innsync serve`.
    expect(serverBlocks[0]?.text).toMatch(/\bnpm start\b/);
    const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toMatch(/node bin\/innsync\.js serve$/);
    const env = { PORT: String(port), HTTP_PORT: 'off', DATA_DIR: dataDir };
    server = spawn(process.execPath, [BIN, 'serve'], {
      cwd: PROJECT_ROOT,
      env: childEnv({ LOG_LEVEL: 'silent', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stderr = '';
    let done = false;
    server.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    server.stdout?.resume();
    serverExited = new Promise((resolve) => server?.once('close', () => resolve((done = true))));
    serve = { child: server, output: () => ({ stdout: '', stderr }), exited: serverExited as ServeProcess['exited'], hasExited: () => done };
    const { agent } = await waitForHttps(serve, dataDir, port, scaled(60_000));
    expect(stderr).toContain('/dashboard/#/setup/'); // the first start's setup link, as the README says

    // The second terminal: every block in one bash, in order. A command that fails ends the
    // block (set -e), an unset variable is an error (set -u), and so is an HTTP error answer.
    const script = [
      'set -eu',
      'curl() { command curl --silent --show-error --fail-with-body "$@"; }',
      ...runBlocks.flatMap((b, i) => [`echo "@@ block ${i + 1} begins"`, b.text, `echo; echo "@@ block ${i + 1} ok"`]),
      'printf "@@ LIVE=%s\\n" "$LIVE"',
    ].join('\n');
    const scriptFile = path.join(dir, 'walkthrough.sh');
    fs.writeFileSync(scriptFile, script);
    const bash = spawn('bash', [scriptFile], {
      cwd: PROJECT_ROOT,
      // npx runs the project's own innsync; offline, so it never asks a registry, and with a
      // cache of its own (two npx creating the same folder of the shared cache at once fail).
      env: childEnv({ ...env, npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_cache: path.join(dir, 'npm-cache') }),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    shell = bash;
    let out = '';
    let err = '';
    bash.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    bash.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    bash.stdin.on('error', () => undefined);
    bash.stdin.end(`${PASSWORD}\n`); // typed at the prompt of `user create`
    const exited = new Promise<number | null>((resolve) => bash.once('close', (code) => resolve(code)));
    shellExited = exited;
    const timer = setTimeout(() => killGroup(bash, 'SIGKILL'), 180_000);
    let code: number | null;
    try {
      code = await exited;
    } finally {
      clearTimeout(timer);
      await stopGroup(bash, exited);
    }

    const transcript = `exit ${String(code)}\n--- stdout\n${out}\n--- stderr\n${err}`;
    for (let i = 1; i <= runBlocks.length; i++) expect(out, `block ${i} of ${runBlocks.length} did not finish:\n${transcript}`).toContain(`@@ block ${i} ok`);
    expect(code, transcript).toBe(0);

    // What the blocks showed: the test key's sandbox answer, then the live check-in and list.
    const created = out.split('\n').filter((l) => l.includes('"status":"created"'));
    expect(created.some((l) => l.includes('"_sandbox":true')), transcript).toBe(true); // the test key: nothing stored
    expect(created.some((l) => !l.includes('_sandbox')), transcript).toBe(true); // the live key: stored

    // The final state, asked by the test itself: the live key the README kept lists the guest,
    // and the README's login exists.
    const live = /^@@ LIVE=(pms_live_\S+)$/m.exec(out)?.[1];
    expect(live, transcript).toBeDefined();
    const list = await getJson(agent, `https://127.0.0.1:${port}/api/pms/v1/grand-hotel/guests`, live);
    expect(list.status).toBe(200);
    expect(list.body.guests).toEqual([expect.objectContaining({ pmsGuestId: 'G-1001', lastName: 'Lovelace', roomNumber: '305' })]);
    const users = await runCli(['user', 'list', 'grand-hotel', '--json'], { env: { DATA_DIR: dataDir } });
    expect(users.stdout).toContain('you@grand-hotel.example');
  });
});
