import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

// A throwaway PostgreSQL 15 cluster for tests, benchmarks and drills: initdb into a temp
// folder, a free port on 127.0.0.1, fsync off, stopped and deleted afterwards. initdb
// refuses to run as root, so as root every server command runs as the `postgres` user.

const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PostgresCluster {
  /** Superuser URL of the `postgres` database. */
  adminUrl: string;
  /** e.g. "PostgreSQL 15.18; fsync=off, synchronous_commit=off" */
  description: string;
  /** The server's log file (pg_ctl -l): what `settings` such as log_statement=all write to. Gone after stop(). */
  logPath: string;
  /** Stops the server, keeping its data (to test an unreachable database). */
  pause(): void;
  /** Starts it again on the same port. */
  resume(): void;
  stop(): void;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], asPostgres: boolean): void {
  const [file, argv] = asPostgres ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  execFileSync(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * `durable`: PostgreSQL's defaults (fsync, synchronous commit) instead of the fast, unsafe settings tests use.
 * `settings`: more server settings, each `name=value` passed as `-c name=value` (e.g. `log_statement=all`);
 * a value holding spaces is quoted for the server's option parser.
 */
export async function startPostgresCluster(opts: { durable?: boolean; settings?: string[] } = {}): Promise<PostgresCluster> {
  const asPostgres = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-pg-'));
  const data = path.join(dir, 'data');
  const sock = path.join(dir, 'sock');
  const log = path.join(dir, 'server.log');
  fs.mkdirSync(sock);
  const port = await freePort();
  const settings = opts.durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off';
  const extra = (opts.settings ?? []).map((setting) => ` -c ${/\s/.test(setting) ? `'${setting.replace(/'/g, "'\\''")}'` : setting}`).join('');
  const serverOpts = `-p ${port} -k ${sock} -c listen_addresses=127.0.0.1 -c max_connections=300${settings}${extra}`;
  const start = (): void => run(path.join(BIN, 'pg_ctl'), ['-D', data, '-o', serverOpts, '-l', log, '-w', 'start'], asPostgres);
  try {
    if (asPostgres) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
    run(path.join(BIN, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'], asPostgres);
    start();
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  let version = 'PostgreSQL';
  try {
    version = execFileSync(path.join(BIN, 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // the description only
  }
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    description: opts.durable ? `${version}; fsync and synchronous_commit on` : `${version}; fsync=off, synchronous_commit=off`,
    logPath: log,
    pause: () => run(path.join(BIN, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'], asPostgres),
    resume: start,
    stop() {
      try {
        run(path.join(BIN, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], asPostgres);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Creates an empty database named `<prefix>_<random>` with the superuser URL `adminUrl`
 * and returns its URL (the same server, the new database).
 */
export async function createDatabase(adminUrl: string, prefix: string): Promise<string> {
  const name = `${prefix}_${Math.random().toString(36).slice(2, 12)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
