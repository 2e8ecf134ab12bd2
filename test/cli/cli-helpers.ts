import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { readResponse, type ReadResponse } from '../support/http-response.js';
import { scaled } from '../support/test-run.js';
import { CONFIG_VARIABLES } from '../../src/config.js';

// Helpers for running the real `innsync` command (bin/innsync.js → dist/) as a child
// process. The build must be current: `npm test` builds first.

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = path.join(PROJECT_ROOT, 'bin', 'innsync.js');

/** The test process's environment without any service variable, plus `env`. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARIABLES) delete base[name];
  return { ...base, ...env };
}

export interface Storage {
  dataDir: string;
  databaseUrl: string | null;
  databaseListenUrl?: string | null;
}

/** DATA_DIR and (for PostgreSQL) DATABASE_URL and DATABASE_LISTEN_URL of a test storage or configuration. */
export function storageEnv(storage: Storage): Record<string, string> {
  if (!storage.databaseUrl) return { DATA_DIR: storage.dataDir };
  const env: Record<string, string> = { DATA_DIR: storage.dataDir, DATABASE_URL: storage.databaseUrl };
  if (storage.databaseListenUrl && storage.databaseListenUrl !== storage.databaseUrl) env.DATABASE_LISTEN_URL = storage.databaseListenUrl;
  return env;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string>;
  /** Written to stdin, which is then closed (stdin is always a pipe, never a TTY). */
  input?: string;
  /** The command, default `node bin/innsync.js`. */
  command?: [string, ...string[]];
  cwd?: string;
}

/** Runs the command to completion; a hung process is killed after 25 s (scaled to the machine's load). */
export function runCli(args: string[], opts: RunOptions = {}): Promise<CliResult> {
  const [file, ...pre] = opts.command ?? [process.execPath, BIN];
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...pre, ...args], {
      cwd: opts.cwd ?? PROJECT_ROOT,
      env: childEnv({ LOG_LEVEL: 'silent', ...opts.env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), scaled(25_000));
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => undefined); // the command may exit before reading stdin
    child.stdin.end(opts.input ?? '');
  });
}

/** Lines of `text` without the final newline. */
export const lines = (text: string): string[] => text.replace(/\n$/, '').split('\n');

/** The stdout of a --json command: exactly one line holding one JSON object. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary members
export function parseJsonOutput(r: CliResult): any {
  if (r.code !== 0) throw new Error(`exit ${String(r.code)}: ${r.stderr}`);
  if (!r.stdout.endsWith('\n') || lines(r.stdout).length !== 1) throw new Error(`expected one line on stdout, got ${JSON.stringify(r.stdout)}`);
  const value: unknown = JSON.parse(r.stdout);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`not a JSON object: ${r.stdout}`);
  return value;
}

/** An HTTPS client that trusts the certificate in `certPem` for the name localhost. */
export function trustingAgent(certPem: string): Agent {
  return new Agent({ connect: { ca: certPem, servername: 'localhost' } });
}

export type HttpResult = ReadResponse;

let idemCounter = 0;

/** POST a JSON body with a Bearer key and a fresh Idempotency-Key. */
export async function postJson(agent: Agent, url: string, key: string, body: unknown): Promise<HttpResult> {
  const res = await request(url, {
    method: 'POST',
    dispatcher: agent,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': `cli-${process.pid}-${++idemCounter}-${Date.now()}`,
    },
    body: JSON.stringify(body),
  });
  return readResponse(res);
}

/** GET with a Bearer key (or none). */
export async function getJson(agent: Agent | undefined, url: string, key?: string): Promise<HttpResult> {
  return readResponse(await request(url, { method: 'GET', ...(agent ? { dispatcher: agent } : {}), headers: key ? { authorization: `Bearer ${key}` } : {} }));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** True when something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface ServeProcess {
  child: ChildProcess;
  /** Everything written to stdout / stderr so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
}

/** Spawns `node bin/innsync.js serve` with `env` (merged over the storage env by the caller). */
export function spawnServe(env: Record<string, string>): ServeProcess {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: PROJECT_ROOT,
    env: childEnv({ LOG_LEVEL: 'silent', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let done = false;
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  return { child, output: () => ({ stdout, stderr }), exited, hasExited: () => done };
}

/**
 * Polls until the server answers HTTPS (its certificate, read from DATA_DIR/tls, is
 * trusted by the returned agent). Fails early when the process exits.
 */
export async function waitForHttps(
  proc: ServeProcess,
  dataDir: string,
  httpsPort: number,
  timeoutMs = scaled(20_000),
): Promise<{ agent: Agent; cert: string }> {
  const certFile = path.join(dataDir, 'tls', 'cert.pem');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.hasExited()) throw new Error(`serve exited before accepting HTTPS: ${proc.output().stderr}`);
    if ((await accepts(httpsPort)) && fs.existsSync(certFile)) {
      const cert = fs.readFileSync(certFile, 'utf8');
      const agent = trustingAgent(cert);
      try {
        const res = await getJson(agent, `https://127.0.0.1:${httpsPort}/no-such-path`);
        if (res.status === 404) return { agent, cert };
      } catch {
        // not ready yet
      }
      await agent.close();
    }
    await sleep(50);
  }
  throw new Error(`serve did not accept HTTPS within ${timeoutMs} ms: ${proc.output().stderr}`);
}

/** Waits for exit; SIGKILLs a process that does not exit in time (and fails). */
export async function waitForExit(proc: ServeProcess, timeoutMs = scaled(20_000)): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      proc.child.kill('SIGKILL');
      reject(new Error(`process did not exit within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([proc.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
