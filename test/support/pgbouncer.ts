import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './postgres-cluster.js';

// A throwaway PgBouncer in transaction mode in front of a throwaway PostgreSQL cluster, for
// tests and drills: the settings docs/deployment.md recommends ("Through PgBouncer"), on a
// free port of 127.0.0.1, stopped and deleted afterwards. PgBouncer refuses to run as root,
// so as root it runs as the `postgres` user.

const BIN = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export interface PgBouncer {
  /** The same URL as `serverUrl` (user, database), with PgBouncer's host and port. */
  urlFor(serverUrl: string): string;
  port: number;
  /** The server's own log (what PgBouncer refused, the pools it opened). */
  logFile: string;
  stop(): void;
}

/** `serverUrl` (user, database) through the PgBouncer on `port` of 127.0.0.1. */
export function throughPgBouncer(serverUrl: string, port: number): string {
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

/** True when the PgBouncer binary is installed (`.ci/run` installs Debian's package). */
export function pgBouncerInstalled(): boolean {
  return fs.existsSync(BIN);
}

/**
 * Starts PgBouncer in front of the PostgreSQL server of `adminUrl`: every database name
 * is passed through to it, as the superuser of the test cluster. `settings` are added to
 * (or override) the [pgbouncer] section.
 */
export async function startPgBouncer(adminUrl: string, settings: Record<string, string> = {}): Promise<PgBouncer> {
  // Again on a fresh port when the one picked free was taken before PgBouncer could bind it.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startPgBouncerOnce(adminUrl, settings);
    } catch (err) {
      if (attempt >= 3 || !/address already in use/i.test(String((err as Error).message))) throw err;
    }
  }
}

async function startPgBouncerOnce(adminUrl: string, settings: Record<string, string>): Promise<PgBouncer> {
  const server = new URL(adminUrl);
  const asPostgres = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-pgbouncer-'));
  const port = await freePort();
  const logFile = path.join(dir, 'pgbouncer.log');
  const pidFile = path.join(dir, 'pgbouncer.pid');
  const config = pgBouncerConfig({
    server: { host: server.hostname, port: Number(server.port), user: decodeURIComponent(server.username) },
    port,
    logFile,
    pidFile,
    settings,
  });
  const configFile = path.join(dir, 'pgbouncer.ini');
  fs.writeFileSync(configFile, config);
  if (asPostgres) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const [file, argv] = asPostgres ? ['runuser', ['-u', 'postgres', '--', BIN, configFile]] : [BIN, [configFile]];
  const child = spawn(file, argv, { stdio: ['ignore', 'ignore', 'pipe'], detached: false });
  let stderr = '';
  child.on('error', (err) => (stderr += `${err.message}\n`));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    await waitForPort(port, 10_000, () => child.exitCode !== null);
  } catch (err) {
    child.kill('SIGKILL');
    const log = fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '';
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`PgBouncer did not start: ${(err as Error).message}\n${stderr}\n${log}`);
  }
  return {
    port,
    logFile,
    urlFor: (serverUrl: string) => throughPgBouncer(serverUrl, port),
    stop() {
      // Throwaway: PgBouncer itself (its pid file), then runuser above it.
      try {
        process.kill(Number(fs.readFileSync(pidFile, 'utf8').trim()), 'SIGKILL');
      } catch {
        // not running any more
      }
      child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface PgBouncerConfig {
  server: { host: string; port: number; user: string };
  port: number;
  logFile: string;
  pidFile: string;
  settings?: Record<string, string>;
}

/**
 * The configuration file: transaction pooling with the limits docs/deployment.md gives
 * (a client waits for a server connection at most query_wait_timeout; a transaction left
 * idle is ended after idle_transaction_timeout, as the service's own limit does; a server
 * that cannot be reached fails the waiting clients at once for server_login_retry).
 */
function pgBouncerConfig(c: PgBouncerConfig): string {
  const settings: Record<string, string> = {
    listen_addr: '127.0.0.1',
    listen_port: String(c.port),
    unix_socket_dir: '',
    auth_type: 'any',
    pool_mode: 'transaction',
    max_client_conn: '2000',
    default_pool_size: '20',
    server_login_retry: '1',
    query_wait_timeout: '10',
    idle_transaction_timeout: '60',
    server_idle_timeout: '10',
    autodb_idle_timeout: '30',
    logfile: c.logFile,
    pidfile: c.pidFile,
    ...c.settings,
  };
  const lines = ['[databases]', `* = host=${c.server.host} port=${c.server.port} user=${c.server.user}`, '', '[pgbouncer]'];
  for (const [key, value] of Object.entries(settings)) lines.push(`${key} = ${value}`);
  return `${lines.join('\n')}\n`;
}

function waitForPort(port: number, timeoutMs: number, gaveUp: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      if (gaveUp()) return reject(new Error('the process exited'));
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listens on port ${port} after ${timeoutMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}
