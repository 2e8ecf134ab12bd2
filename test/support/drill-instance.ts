import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { freePort } from './postgres-cluster.js';
import { CONFIG_VARIABLES } from '../../src/config.js';

/** The checkout this file belongs to (it runs from test/support/ in tests and from dist/test/support/ when built). */
function projectRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'bin', 'innsync.js'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error('bin/innsync.js not found above the drills');
    dir = up;
  }
  return dir;
}

/** bin/innsync.js of this checkout; DRILL_SERVER_BIN runs the drills against another build (a baseline). */
export const SERVER_BIN = process.env.DRILL_SERVER_BIN ?? path.join(projectRoot(), 'bin', 'innsync.js');

/**
 * The environment of an `innsync` process on `storage`: this process's own, without any
 * variable the service reads, then DATA_DIR, DATABASE_URL, LOG_LEVEL=warn and `vars`.
 */
export function serviceEnv(storage: InstanceStorage, vars: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CONFIG_VARIABLES) delete env[name];
  return Object.assign(env, {
    DATA_DIR: storage.dataDir,
    LOG_LEVEL: 'warn',
    ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : {}),
    ...(storage.databaseListenUrl ? { DATABASE_LISTEN_URL: storage.databaseListenUrl } : {}),
    ...vars,
  });
}

/** An HTTPS client for the drills. The service's self-signed certificate is not what they test. */
export const drillAgent = new Agent({ connect: { rejectUnauthorized: false }, keepAliveTimeout: 10_000, connections: 128, pipelining: 1 });

export interface InstanceOptions {
  label: string;
  dataDir: string;
  databaseUrl: string | null;
  databaseListenUrl?: string | null;
  env?: Record<string, string>;
}

/**
 * One `innsync serve` process, as an operator runs it (HTTPS on a free port, plain HTTP
 * off). The drills kill it, stop it and read its memory.
 */
export class Instance {
  private readonly output: string[] = [];
  /** Set when the process has exited: how, and whether the drill asked for it. */
  exit: { code: number | null; signal: NodeJS.Signals | null; expected: boolean } | null = null;
  private expectExit = false;
  readonly exited: Promise<void>;

  private constructor(
    readonly label: string,
    readonly child: ChildProcess,
    readonly port: number,
  ) {
    const keep = (chunk: Buffer) => {
      this.output.push(chunk.toString('utf8'));
      if (this.output.length > 200) this.output.splice(0, this.output.length - 200);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal, expected: this.expectExit };
        resolve();
      });
    });
  }

  get baseUrl(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return this.exit === null;
  }

  /** The last lines the process wrote (warnings and errors: LOG_LEVEL=warn). */
  tail(lines = 20): string {
    return this.output.join('').split('\n').slice(-lines).join('\n');
  }

  static async start(opts: InstanceOptions): Promise<Instance> {
    const port = await freePort();
    const env = serviceEnv(opts, { PORT: String(port), HTTP_PORT: 'off', HOST: '127.0.0.1', ...opts.env });
    const child = spawn(process.execPath, [SERVER_BIN, 'serve'], { env, cwd: path.dirname(path.dirname(SERVER_BIN)), stdio: ['ignore', 'pipe', 'pipe'] });
    const instance = new Instance(opts.label, child, port);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!instance.alive) throw new Error(`${opts.label} exited while starting:\n${instance.tail()}`);
      try {
        const res = await request(`${instance.baseUrl}/api/pms/v1/ready-probe/guests`, { dispatcher: drillAgent, headersTimeout: 2_000, bodyTimeout: 2_000 });
        await res.body.dump();
        return instance;
      } catch {
        if (Date.now() > deadline) {
          instance.kill('SIGKILL');
          throw new Error(`${opts.label} did not answer within 30 s:\n${instance.tail()}`);
        }
        await sleep(50);
      }
    }
  }

  /** Sends `signal`; the exit that follows counts as asked for (not a crash). */
  kill(signal: NodeJS.Signals): void {
    if (signal === 'SIGKILL' || signal === 'SIGTERM' || signal === 'SIGINT') this.expectExit = true;
    this.child.kill(signal);
  }

  /** SIGTERM, then waits for the exit (SIGKILL after 20 s). */
  async stop(): Promise<void> {
    if (!this.alive) return;
    this.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** Resident memory of the process, in bytes (Linux /proc); null once it has exited. */
  rssBytes(): number | null {
    try {
      const status = fs.readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
      return kb ? Number(kb) * 1024 : null;
    } catch {
      return null;
    }
  }
}

/** Where instances keep their data: DATA_DIR and, for PostgreSQL, DATABASE_URL (and DATABASE_LISTEN_URL when it differs). */
export interface InstanceStorage {
  dataDir: string;
  databaseUrl: string | null;
  databaseListenUrl?: string | null;
}

/** One instance on `storage`, with `env` added to its environment. */
export function startOn(storage: InstanceStorage, label: string, env?: Record<string, string>): Promise<Instance> {
  return Instance.start({ label, dataDir: storage.dataDir, databaseUrl: storage.databaseUrl, databaseListenUrl: storage.databaseListenUrl ?? null, env });
}

/** `count` instances on one storage ("instance 1", "instance 2"…), one after another; none left running if one fails to start. */
export async function startInstances(storage: InstanceStorage, count: number, env?: Record<string, string>): Promise<Instance[]> {
  const started: Instance[] = [];
  try {
    for (let i = 0; i < count; i++) started.push(await startOn(storage, `instance ${i + 1}`, env));
    return started;
  } catch (err) {
    await Promise.all(started.map((i) => i.stop()));
    throw err;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
