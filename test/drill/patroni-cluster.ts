import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../support/postgres-cluster.js';
import { sleep } from '../support/drill-instance.js';

// A throwaway highly available PostgreSQL for the failover drill (bench/README.md, Drills:
// failover), built from the usual parts: two Patroni nodes (a primary and a synchronous
// streaming replica) that elect their leader in a one-member etcd, and HAProxy in front as
// the one address the service connects to, sending connections to whichever node's Patroni
// answers 200 to GET /primary. Everything lives in a temp folder and on free ports of
// 127.0.0.1, and is killed and deleted by stop(). PostgreSQL refuses to run as root, so as
// root Patroni (which runs postgres) runs as the `postgres` user.

const PATRONI_BIN = process.env.PATRONI_BIN ?? '/usr/bin/patroni';
const ETCD_BIN = process.env.ETCD_BIN ?? '/usr/bin/etcd';
const HAPROXY_BIN = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy';
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** The binaries this cluster needs that are not installed (empty when it can run). */
export function missingBinaries(): string[] {
  return [PATRONI_BIN, ETCD_BIN, HAPROXY_BIN, path.join(PG_BIN, 'postgres')].filter((f) => !fs.existsSync(f));
}

/**
 * Patroni's timing (its dynamic configuration, kept in etcd). Patroni's documentation
 * ("Dynamic Configuration Settings") gives the smallest values it allows, ttl 20,
 * loop_wait 1, retry_timeout 3, and the rule loop_wait + 2 × retry_timeout ≤ ttl.
 * ttl bounds both how long a dead primary keeps the leader key (the failover starts when
 * it expires) and how long a dead replica stays a member.
 */
export const PATRONI_TIMING = { ttl: 20, loopWait: 1, retryTimeout: 3 };

interface NodePorts {
  name: string;
  /** PostgreSQL's port. */
  pg: number;
  /** Patroni's REST API. */
  rest: number;
  /** The node's folder: data/, the socket, pgpass. */
  dir: string;
}

/** One node's Patroni configuration (YAML). */
function patroniConfig(node: NodePorts, etcdClientPort: number, timing = PATRONI_TIMING): string {
  return `scope: innsync
name: ${node.name}

restapi:
  listen: 127.0.0.1:${node.rest}
  connect_address: 127.0.0.1:${node.rest}

etcd3:
  hosts: 127.0.0.1:${etcdClientPort}

log:
  level: INFO

bootstrap:
  # Written to etcd by the first node; the same for every node from then on.
  dcs:
    ttl: ${timing.ttl}
    loop_wait: ${timing.loopWait}
    retry_timeout: ${timing.retryTimeout}
    maximum_lag_on_failover: 1048576
    # A commit is acknowledged once the synchronous standby has it too; only that standby
    # may be promoted. Not strict: with the standby gone, the primary goes on alone.
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        synchronous_commit: 'on'
        fsync: 'on'
        wal_level: replica
        wal_log_hints: 'on'
        hot_standby: 'on'
        max_connections: 300
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
  initdb:
    - encoding: UTF8
    - locale: C

postgresql:
  listen: 127.0.0.1:${node.pg}
  connect_address: 127.0.0.1:${node.pg}
  data_dir: ${path.join(node.dir, 'data')}
  bin_dir: ${PG_BIN}
  pgpass: ${path.join(node.dir, 'pgpass')}
  # The old primary, back after a failover, is rewound (pg_rewind) to follow the new one;
  # when that fails, it is cloned again from the new primary.
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    superuser:
      username: postgres
    replication:
      username: replicator
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: '${node.dir}'
  # A test cluster on 127.0.0.1 only: no passwords.
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
`;
}

/**
 * HAProxy in front of the nodes: TCP, every connection to the node whose Patroni answers
 * 200 to GET /primary (checked every second, down after two failed checks); connections
 * still open to a node marked down are closed, so no client keeps talking to a former
 * primary.
 */
function haproxyConfig(port: number, nodes: NodePorts[]): string {
  return `global
    maxconn 1000

defaults
    mode tcp
    retries 2
    timeout connect 4s
    timeout client 30m
    timeout server 30m
    timeout check 2s

listen postgres_primary
    bind 127.0.0.1:${port}
    option httpchk GET /primary
    http-check expect status 200
    default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
${nodes.map((n) => `    server ${n.name} 127.0.0.1:${n.pg} maxconn 300 check port ${n.rest}`).join('\n')}
`;
}

/** etcd's command line: one member, on 127.0.0.1, its data in `dataDir`. */
function etcdArgs(dataDir: string, clientPort: number, peerPort: number): string[] {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    '--name=drill',
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=drill=${peer}`,
    '--initial-cluster-state=new',
    '--initial-cluster-token=innsync-drill',
  ];
}

/** A member as GET /cluster of Patroni's REST API describes it. */
export interface PatroniMember {
  name: string;
  role: string;
  state: string;
  timeline?: number;
  lag?: number | string;
}

/** A process the cluster started, its output in a log file. */
class Proc {
  readonly exited: Promise<void>;
  done = false;

  constructor(
    readonly child: ChildProcess,
    readonly logFile: string,
  ) {
    const out = fs.createWriteStream(logFile, { flags: 'a' });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    void this.exited.then(() => (this.done = true));
  }

  tail(lines = 30): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}

export interface PatroniNode extends NodePorts {
  configFile: string;
  patroni: Proc | null;
}

/** Pids of the processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

export class PatroniCluster {
  private readonly procs: Proc[] = [];
  private etcd: Proc | null = null;
  private haproxy: Proc | null = null;

  private constructor(
    readonly dir: string,
    readonly nodes: PatroniNode[],
    readonly haproxyPort: number,
    readonly etcdClientPort: number,
    private readonly user: { uid: number; gid: number } | null,
  ) {}

  /** Superuser URL of the `postgres` database, through HAProxy (always the primary). */
  get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.haproxyPort}/postgres`;
  }

  /**
   * Starts the cluster; again, on fresh ports, when a port picked free was taken by another
   * process before its server could bind it (tests run side by side).
   */
  static async start(): Promise<PatroniCluster> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await PatroniCluster.startOnce();
      } catch (err) {
        if (attempt >= 3 || !/address already in use/i.test(String((err as Error).message))) throw err;
      }
    }
  }

  /** etcd, then the first node (bootstraps, becomes primary), the second (cloned, synchronous standby), then HAProxy. */
  private static async startOnce(): Promise<PatroniCluster> {
    const missing = missingBinaries();
    if (missing.length > 0) throw new Error(`not installed: ${missing.join(', ')}`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-patroni-'));
    const asRoot = process.getuid?.() === 0;
    let user: { uid: number; gid: number } | null = null;
    if (asRoot) {
      const line = fs
        .readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .find((l) => l.startsWith('postgres:'));
      if (!line) throw new Error('running as root needs a `postgres` user to run PostgreSQL');
      const [, , uid, gid] = line.split(':');
      user = { uid: Number(uid), gid: Number(gid) };
    }
    const nodes: PatroniNode[] = [];
    for (const name of ['node1', 'node2']) {
      const nodeDir = path.join(dir, name);
      fs.mkdirSync(nodeDir, { mode: 0o700 });
      nodes.push({ name, pg: await freePort(), rest: await freePort(), dir: nodeDir, configFile: path.join(nodeDir, 'patroni.yml'), patroni: null });
    }
    const etcdClient = await freePort();
    const etcdPeer = await freePort();
    const haproxyPort = await freePort();
    const cluster = new PatroniCluster(dir, nodes, haproxyPort, etcdClient, user);
    try {
      for (const n of nodes) fs.writeFileSync(n.configFile, patroniConfig(n, etcdClient));
      fs.writeFileSync(path.join(dir, 'haproxy.cfg'), haproxyConfig(haproxyPort, nodes));
      if (user) for (const f of [dir, ...nodes.flatMap((n) => [n.dir, n.configFile])]) fs.chownSync(f, user.uid, user.gid);

      cluster.etcd = cluster.spawn(ETCD_BIN, etcdArgs(path.join(dir, 'etcd'), etcdClient, etcdPeer), 'etcd.log', false);
      await cluster.waitFor('etcd answering', 30_000, async () => (await httpStatus(`http://127.0.0.1:${etcdClient}/health`)) === 200, cluster.etcd);

      const [first, second] = nodes as [PatroniNode, PatroniNode];
      cluster.startNode(first);
      await cluster.waitFor(`${first.name} primary`, 90_000, async () => (await cluster.rest(first, '/primary')) === 200, first.patroni);
      cluster.startNode(second);
      cluster.haproxy = cluster.spawn(HAPROXY_BIN, ['-f', path.join(dir, 'haproxy.cfg'), '-db'], 'haproxy.log', false);
      await cluster.waitSynchronous(120_000);
      await cluster.waitFor('HAProxy to the primary', 30_000, () => canWrite(cluster.adminUrl), cluster.haproxy);
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  private spawn(file: string, args: string[], logName: string, asPostgres: boolean): Proc {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PATRONI_') && !k.startsWith('ETCD') && !k.startsWith('PG')) env[k] = v;
    if (asPostgres) env.HOME = this.dir;
    const child = spawn(file, args, {
      cwd: this.dir,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(asPostgres && this.user ? { uid: this.user.uid, gid: this.user.gid } : {}),
    });
    const proc = new Proc(child, path.join(this.dir, logName));
    this.procs.push(proc);
    return proc;
  }

  /** Where HAProxy's log ends now (for haproxyChanges). */
  haproxyLogSize(): number {
    try {
      return fs.statSync(path.join(this.dir, 'haproxy.log')).size;
    } catch {
      return 0;
    }
  }

  /** The servers HAProxy marked up or down since `offset` of its log, in order: "node1 DOWN (Layer4 connection problem)". */
  haproxyChanges(offset: number): string[] {
    let text = '';
    try {
      text = fs.readFileSync(path.join(this.dir, 'haproxy.log'), 'utf8').slice(offset);
    } catch {
      return [];
    }
    return [...text.matchAll(/Server \S+\/(\S+) is (UP|DOWN), reason: ([^,]+)/g)].map((m) => `${m[1]} ${m[2]}${m[2] === 'DOWN' ? ` (${m[3]})` : ''}`);
  }

  /** Starts (or starts again) a node's Patroni: it bootstraps, clones, or rejoins as it sees fit. */
  startNode(node: PatroniNode): void {
    node.patroni = this.spawn(PATRONI_BIN, [node.configFile], `${node.name}.log`, true);
  }

  /** The node's machine freezes (SIGSTOP: Patroni, the postmaster, every backend); its connections stay open. */
  freezeNode(node: PatroniNode): number[] {
    // The parents first, so that none starts a new child meanwhile.
    const pids = this.machinePids(node);
    for (const pid of pids) signal(pid, 'SIGSTOP');
    const all = [...pids, ...pids.flatMap(childrenOf)].filter((pid, i, list) => list.indexOf(pid) === i);
    for (const pid of all) signal(pid, 'SIGSTOP');
    return all;
  }

  /** The frozen machine runs again. */
  thawNode(pids: number[]): void {
    for (const pid of pids) signal(pid, 'SIGCONT');
  }

  private machinePids(node: PatroniNode): number[] {
    const pids: number[] = [];
    if (node.patroni && !node.patroni.done && node.patroni.child.pid) pids.push(node.patroni.child.pid);
    const postmaster = this.postmasterPid(node);
    if (postmaster !== null) pids.push(postmaster);
    return pids;
  }

  /**
   * The node's machine dies: its Patroni and its PostgreSQL (the postmaster and every
   * backend) are stopped at once, then SIGKILLed. Killing only postgres would not do: its
   * Patroni would start it again on the same node, and no failover would happen.
   */
  killNode(node: PatroniNode): void {
    for (const pid of this.freezeNode(node)) signal(pid, 'SIGKILL');
  }

  postmasterPid(node: PatroniNode): number | null {
    try {
      const pid = Number(fs.readFileSync(path.join(node.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 && fs.existsSync(`/proc/${pid}`) ? pid : null;
    } catch {
      return null;
    }
  }

  /** The HTTP status of GET `urlPath` on the node's Patroni REST API (0: no answer). */
  rest(node: PatroniNode, urlPath: string): Promise<number> {
    return httpStatus(`http://127.0.0.1:${node.rest}${urlPath}`);
  }

  /** The members as a live node's Patroni describes them (GET /cluster); empty when none answers. */
  async members(): Promise<PatroniMember[]> {
    for (const n of this.nodes) {
      try {
        const res = await fetch(`http://127.0.0.1:${n.rest}/cluster`, { signal: AbortSignal.timeout(2_000) });
        if (res.ok) return ((await res.json()) as { members: PatroniMember[] }).members;
      } catch {
        // the next node
      }
    }
    return [];
  }

  /** Waits until one node is the leader and the other its synchronous standby, streaming. */
  async waitSynchronous(timeoutMs: number): Promise<void> {
    let last: PatroniMember[] = [];
    await this.waitFor(
      'a leader and a synchronous standby',
      timeoutMs,
      async () => {
        last = await this.members();
        return (
          last.some((m) => m.role === 'leader' && m.state === 'running') &&
          last.some((m) => m.role === 'sync_standby' && (m.state === 'running' || m.state === 'streaming')) &&
          (await Promise.all(this.nodes.map((n) => this.rest(n, '/sync')))).includes(200)
        );
      },
      null,
      () => JSON.stringify(last),
    );
  }

  async waitFor(what: string, timeoutMs: number, test: () => Promise<boolean>, proc: Proc | null, detail?: () => string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await test().catch(() => false)) return;
      if (proc?.done) throw new Error(`waiting for ${what}: the process exited:\n${proc.tail()}`);
      if (Date.now() > deadline)
        throw new Error(
          `no ${what} within ${timeoutMs / 1000} s${detail ? `: ${detail()}` : ''}\n${this.nodes.map((n) => `-- ${n.name}:\n${n.patroni?.tail(15) ?? ''}`).join('\n')}`,
        );
      await sleep(200);
    }
  }

  /** Kills everything it started (SIGKILL: nothing here is kept) and deletes the folder. */
  async stop(): Promise<void> {
    for (const n of this.nodes) this.killNode(n);
    for (const p of this.procs) if (!p.done && p.child.pid) signal(p.child.pid, 'SIGKILL');
    await Promise.race([Promise.all(this.procs.map((p) => p.exited)), sleep(5_000)]);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

async function httpStatus(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/**
 * True when a durable write commits at `url` (a primary, or HAProxy in front of one): a
 * row in a table of the drill's own, acknowledged as the cluster acknowledges commits
 * (by the synchronous standby too, when there is one). A replica refuses it (25006).
 */
export async function canWrite(url: string, timeoutMs = 2_000): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const res = await client.query<{ r: boolean }>('select pg_is_in_recovery() as r');
    if (res.rows[0]?.r !== false) return false;
    await client.query('create table if not exists drill_probe (at timestamptz)');
    await client.query('insert into drill_probe values (now())');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
