import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import {
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';

/** How a connection a worker opens is set up: its pragmas, in order. */
export interface WorkerConnectionSetup {
  file: string;
  pragmas: string[];
}

/** A plain read: the only statements the read connection is offered. */
const READ_SQL = /^\s*(select|with)\b/i;

/** SQLITE_GROUP_COMMIT_MS's default (docs/architecture.md, "SQLite: group commit"). */
export const DEFAULT_SQLITE_GROUP_COMMIT_MS = 2;

/**
 * Statements longer than this (a sync's batch of many rows) are prepared afresh each time;
 * compiled inserts of up to 32 rows of the widest table (db/shapes.ts) fit under it.
 */
const CACHEABLE_SQL_LENGTH = 4096;
const STATEMENT_CACHE_SIZE = 200;

/**
 * A text longer than this crosses to or from a worker thread as its UTF-8 bytes, moved
 * (not copied) with the message. A 2.3 MB sync answer with names such as "Müller" copied
 * into a message held the event loop 11-13 ms (a text of ASCII only: under 1 ms); encoded
 * and moved, under 2 ms either way. SQLite stores a text as UTF-8 in any case, so the
 * value stored and read back is the same.
 */
const LONG_TEXT_CHARS = 65_536;

/**
 * How a transaction begins: with the write lock taken at once. Another process writing the
 * database (an `innsync` command beside the server) then waits for the transaction (its
 * busy_timeout) instead of committing between the transaction's first read and its first
 * write, which SQLite answers by refusing that write at once ("database is locked").
 */
const BEGIN = 'begin immediate';

/** The longest run of the writer's statements in this thread before the event loop gets a turn (InlineSqlite). */
const INLINE_TURN_MS = 10;

/** A checkpoint asked for by a statement (`pragma wal_checkpoint(…)`): it runs in the checkpoints' thread (WalCheckpointer). */
const CHECKPOINT = /^\s*pragma\s+wal_checkpoint\b/i;

/**
 * The worker's program (run with `eval`, so it needs no file of its own beside the
 * compiled service or the test runner's sources): it opens one better-sqlite3
 * connection, then runs each statement it is sent and answers with its rows, or what it
 * changed, or the error's message and code. Prepared statements are kept by SQL text (a
 * bounded LRU, as Kysely prepares every query it runs).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
for (const p of workerData.pragmas) db.pragma(p);
const cache = new Map();
function prepare(sql) {
  if (sql.length > ${CACHEABLE_SQL_LENGTH}) return db.prepare(sql);
  const cached = cache.get(sql);
  if (cached) { cache.delete(sql); cache.set(sql, cached); return cached; }
  const stmt = db.prepare(sql);
  cache.set(sql, stmt);
  if (cache.size > ${STATEMENT_CACHE_SIZE}) cache.delete(cache.keys().next().value);
  return stmt;
}
const encoder = new TextEncoder();
const decoder = new TextDecoder();
parentPort.on('message', (m) => {
  if (m.close) { cache.clear(); db.close(); parentPort.postMessage({ id: m.id, closed: true }); return; }
  try {
    const stmt = prepare(m.sql);
    if (m.texts) for (const i of m.texts) m.parameters[i] = decoder.decode(m.parameters[i]);
    if (stmt.reader) {
      const rows = stmt.all(m.parameters);
      const texts = [];
      const moved = [];
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        for (const key in row) {
          const v = row[key];
          if (typeof v === 'string' && v.length > ${LONG_TEXT_CHARS}) {
            const bytes = encoder.encode(v);
            row[key] = bytes;
            texts.push([i, key]);
            moved.push(bytes.buffer);
          }
        }
      }
      parentPort.postMessage(texts.length ? { id: m.id, rows, texts } : { id: m.id, rows }, moved);
    } else {
      const r = stmt.run(m.parameters);
      parentPort.postMessage({ id: m.id, changes: r.changes, lastInsertRowid: BigInt(r.lastInsertRowid) });
    }
  } catch (err) {
    parentPort.postMessage({ id: m.id, error: { message: String(err && err.message), code: err && err.code, sqlite: err instanceof Database.SqliteError } });
  }
});
`;

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

interface WorkerAnswer {
  id: number;
  rows?: unknown[];
  /** The row and column of each text sent as UTF-8 bytes (LONG_TEXT_CHARS). */
  texts?: Array<[number, string]>;
  changes?: number;
  lastInsertRowid?: bigint;
  closed?: boolean;
  error?: { message: string; code: unknown; sqlite: boolean };
}

/**
 * One better-sqlite3 connection in a worker thread of its own: a statement runs there
 * while the event loop goes on serving requests. Statements are answered in the order
 * they were sent. The worker keeps the process alive only while a statement is pending.
 */
class SqliteWorker implements SqliteConnection {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (a: WorkerAnswer) => void; reject: (err: Error) => void }>();
  #next = 0;
  #failure: Error | null = null;

  constructor(setup: WorkerConnectionSetup) {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    this.#worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module, file: setup.file, pragmas: setup.pragmas } });
    this.#worker.unref();
    this.#worker.on('message', (answer: WorkerAnswer) => {
      const waiting = this.#pending.get(answer.id);
      if (!waiting) return;
      this.#pending.delete(answer.id);
      if (this.#pending.size === 0) this.#worker.unref();
      waiting.resolve(answer);
    });
    const fail = (err: Error): void => {
      this.#failure = err;
      for (const waiting of this.#pending.values()) waiting.reject(err);
      this.#pending.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', () => fail(Object.assign(new Error('The SQLite connection is closed.'), { code: 'SQLITE_MISUSE' })));
  }

  #send(message: Record<string, unknown>, moved: ArrayBuffer[] = []): Promise<WorkerAnswer> {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ id, ...message }, moved);
    });
  }

  /** Statements sent and not yet answered. */
  get pending(): number {
    return this.#pending.size;
  }

  async execute<R>(sql: string, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    let sent = parameters;
    const texts: number[] = [];
    const moved: ArrayBuffer[] = [];
    parameters.forEach((p, i) => {
      if (typeof p !== 'string' || p.length <= LONG_TEXT_CHARS) return;
      const bytes = textEncoder.encode(p);
      if (sent === parameters) sent = [...parameters];
      (sent as unknown[])[i] = bytes;
      texts.push(i);
      moved.push(bytes.buffer);
    });
    const answer = await this.#send(texts.length ? { sql, parameters: sent, texts } : { sql, parameters }, moved);
    if (answer.error) {
      const { message, code, sqlite } = answer.error;
      throw sqlite && typeof code === 'string' ? new SqliteDatabase.SqliteError(message, code) : new Error(message);
    }
    if (answer.rows) {
      for (const [i, key] of answer.texts ?? []) {
        const row = answer.rows[i] as Record<string, unknown>;
        row[key] = textDecoder.decode(row[key] as Uint8Array);
      }
      return { rows: answer.rows as R[] };
    }
    return { numAffectedRows: BigInt(answer.changes ?? 0), insertId: answer.lastInsertRowid, rows: [] };
  }

  async close(): Promise<void> {
    if (!this.#failure) await this.#send({ close: true });
    await this.#worker.terminate();
  }
}

/** A connection statements are sent to: in a worker thread (SqliteWorker) or in this one (InlineSqlite). */
interface SqliteConnection {
  execute<R>(sql: string, parameters: readonly unknown[]): Promise<QueryResult<R>>;
  close(): Promise<void>;
}

/**
 * A better-sqlite3 connection in this thread: each statement runs on the event loop, at
 * once, without a message to another thread. The writer is one (docs/architecture.md):
 * a transaction holds it from BEGIN to COMMIT, so its statements must not wait for a
 * thread between them.
 */
class InlineSqlite implements SqliteConnection {
  readonly #statements: StatementCache;
  /** Milliseconds the open transaction's statements have run since it began or last gave the event loop a turn (null: no transaction open). */
  #spentMs: number | null = null;

  constructor(private readonly sqlite: SqliteDatabase.Database) {
    this.#statements = new StatementCache(sqlite);
  }

  /** Whether a transaction is open (false after SQLite rolled one back on its own: a full disk, an I/O error). */
  get inTransaction(): boolean {
    return this.sqlite.inTransaction;
  }

  execute<R>(sql: string, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    if (sql === BEGIN) this.#spentMs = 0;
    else if (sql === 'commit' || sql === 'rollback') this.#spentMs = null;
    const started = performance.now();
    let result: QueryResult<R>;
    try {
      const stmt = this.#statements.prepare(sql);
      if (stmt.reader) result = { rows: stmt.all(parameters) as R[] };
      else {
        const r = stmt.run(parameters);
        result = { numAffectedRows: BigInt(r.changes), insertId: BigInt(r.lastInsertRowid), rows: [] };
      }
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    // A long transaction (a 20,000-guest sync, an erasure) runs statement after statement
    // without the event loop taking a turn: past INLINE_TURN_MS of its own statements, the
    // next waits for one, so requests that need no writer are answered meanwhile. A short
    // transaction never waits for a turn while it holds the writer.
    if (this.#spentMs === null) return Promise.resolve(result);
    this.#spentMs += performance.now() - started;
    if (this.#spentMs < INLINE_TURN_MS) return Promise.resolve(result);
    this.#spentMs = 0;
    return new Promise((resolve) => setImmediate(() => resolve(result)));
  }

  close(): Promise<void> {
    this.#statements.close();
    return Promise.resolve();
  }
}

/**
 * Prepared statements of a connection in this thread, kept by SQL text (a bounded LRU, as
 * Kysely prepares every query it runs); a statement still iterating is prepared afresh.
 */
export class StatementCache {
  readonly #cache = new Map<string, SqliteDatabase.Statement>();

  constructor(private readonly sqlite: SqliteDatabase.Database) {}

  prepare(sql: string): SqliteDatabase.Statement {
    if (sql.length > CACHEABLE_SQL_LENGTH) return this.sqlite.prepare(sql);
    const cached = this.#cache.get(sql);
    if (cached && !cached.busy) {
      this.#cache.delete(sql); // most recently used last
      this.#cache.set(sql, cached);
      return cached;
    }
    if (cached) return this.sqlite.prepare(sql);
    const stmt = this.sqlite.prepare(sql);
    this.#cache.set(sql, stmt);
    if (this.#cache.size > STATEMENT_CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value as string);
    return stmt;
  }

  close(): void {
    this.#cache.clear();
    this.sqlite.close();
  }
}

/** A read answered within this is short (RoutedConnection): it may run in this thread next time. */
const SHORT_READ_MS = 2;

/**
 * What reads took, by SQL text: those the reader answered quickly (short), and those that
 * once took long in this thread (long, for good). Bounded: forgotten all at once past 1,000.
 */
class ReadTimes {
  readonly #short = new Set<string>();
  readonly #long = new Set<string>();

  /** Known short, and never seen long. */
  isShort(sql: string): boolean {
    return this.#short.has(sql) && !this.#long.has(sql);
  }

  record(sql: string, ms: number, inline: boolean): void {
    if (this.#short.size >= 1000 || this.#long.size >= 1000) {
      this.#short.clear();
      this.#long.clear();
    }
    if (ms > SHORT_READ_MS) {
      if (inline) this.#long.add(sql);
    } else if (!this.#long.has(sql)) this.#short.add(sql);
  }
}

class Mutex {
  #held: Promise<void> | null = null;
  #release: (() => void) | null = null;
  #waiting = 0;

  async lock(): Promise<void> {
    if (this.#held) {
      this.#waiting++;
      try {
        while (this.#held) await this.#held;
      } finally {
        this.#waiting--;
      }
    }
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  get held(): boolean {
    return this.#held !== null;
  }

  /** Held, or wanted by someone waiting for it. */
  get busy(): boolean {
    return this.#held !== null || this.#waiting > 0;
  }

  unlock(): void {
    const release = this.#release;
    this.#held = null;
    this.#release = null;
    release?.();
  }
}

/** Whether a statement only reads: SQLite's own answer, from a statement prepared (never run) on a query-only connection here. */
class ReadClassifier {
  readonly #cache = new Map<string, boolean>();
  /**
   * The same query-only connection, to run short reads in this thread while a commit group
   * is open (RoutedConnection): the last commit, as a reader has it, without a message to
   * a thread.
   */
  readonly inline: InlineSqlite;

  constructor(private readonly sqlite: SqliteDatabase.Database) {
    this.inline = new InlineSqlite(sqlite);
  }

  isPlainRead(sql: string): boolean {
    if (!READ_SQL.test(sql)) return false;
    const known = this.#cache.get(sql);
    if (known !== undefined) return known;
    let read: boolean;
    try {
      const stmt = this.sqlite.prepare(sql);
      read = stmt.reader && stmt.readonly;
    } catch {
      // A statement SQLite cannot prepare here (a table a migration has still to create): the writer says why.
      return false;
    }
    if (sql.length <= CACHEABLE_SQL_LENGTH) {
      this.#cache.set(sql, read);
      if (this.#cache.size > STATEMENT_CACHE_SIZE * 5) this.#cache.clear();
    }
    return read;
  }

  close(): void {
    this.#cache.clear();
    this.sqlite.close();
  }
}

/** Read connections, each in a worker thread of its own: a long read (a request-log search, an export) occupies one. */
const SQLITE_READERS = 3;

/**
 * The readers; a read goes to the one with the fewest statements pending (the first of
 * those), so a short read does not queue behind a long one while another reader is free.
 * Their threads start with the first read: Kysely closes a driver only once it has run a
 * statement, and a thread started for a database never read would keep the process alive.
 */
class ReaderPool implements SqliteConnection {
  #readers: SqliteWorker[] | null = null;

  constructor(
    private readonly open: () => SqliteWorker,
    private readonly count: number,
  ) {}

  execute<R>(sql: string, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    this.#readers ??= Array.from({ length: this.count }, () => this.open());
    let best = this.#readers[0] as SqliteWorker;
    for (const r of this.#readers) if (r.pending < best.pending) best = r;
    return best.execute<R>(sql, parameters);
  }

  /** Reads sent to the readers and not yet answered. */
  get pending(): number {
    let n = 0;
    for (const r of this.#readers ?? []) n += r.pending;
    return n;
  }

  async close(): Promise<void> {
    await Promise.all((this.#readers ?? []).map((r) => r.close()));
  }
}

/** How often the WAL is copied into the database file when something was written (WalCheckpointer). */
const WAL_CHECKPOINT_EVERY_MS = 1000;

/**
 * Copies the WAL into the database file from a connection in a worker thread of its own
 * (`wal_checkpoint(PASSIVE)`: it never waits for, nor stops, the writer or a reader), once a
 * second when something was written. The writer in this thread has SQLite's automatic
 * checkpoint off: it ran in the commit that took the WAL past 1,000 pages, and copying the
 * pages of a 20,000-guest sync held the event loop for about 100 ms (docs/architecture.md).
 * Its thread starts with the first write.
 */
class WalCheckpointer {
  #worker: SqliteWorker | null = null;
  #due = false;
  #running: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(private readonly setup: WorkerConnectionSetup) {}

  /** Something was committed: the next tick copies it. */
  wrote(): void {
    this.#due = true;
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.#run(), WAL_CHECKPOINT_EVERY_MS);
    this.#timer.unref();
  }

  #run(): Promise<void> {
    if (this.#running || !this.#due) return this.#running ?? Promise.resolve();
    this.#due = false;
    this.#worker ??= new SqliteWorker(this.setup);
    const worker = this.#worker;
    this.#running = worker
      .execute('pragma wal_checkpoint(PASSIVE)', [])
      .then(
        () => undefined,
        // A checkpoint that could not run now (another holds the checkpoint lock) runs at the next tick.
        () => void (this.#due = true),
      )
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  /**
   * A checkpoint the service asks for (`wal_checkpoint(TRUNCATE)` after an erasure), run in
   * this thread's connection after any periodic one under way: copying the WAL into the
   * file takes tens of milliseconds, and the event loop turns meanwhile.
   */
  async execute<R>(sql: string, parameters: readonly unknown[]): Promise<QueryResult<R>> {
    await this.#running;
    this.#worker ??= new SqliteWorker(this.setup);
    return this.#worker.execute<R>(sql, parameters);
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#running;
    // The writer, closed last, copies what is left (SQLite checkpoints when its last connection closes).
    await this.#worker?.close();
  }
}

/**
 * Marks the transactions begun inside `work` as long work (a 20,000-guest sync, an
 * erasure): on SQLite they run on the long writer, a connection in a worker thread of its
 * own, so their statements and their commit run beside the event loop, not on it
 * (docs/architecture.md, SQLite: long work beside short requests). Elsewhere it only runs
 * `work`.
 */
export async function asLongWork<T>(work: () => Promise<T>): Promise<T> {
  // Open while `work` runs: a timer or callback created inside it that begins a
  // transaction later finds it closed, and runs on the writer here.
  const mark = { open: true };
  try {
    return await longWork.run(mark, work);
  } finally {
    mark.open = false;
  }
}

const longWork = new AsyncLocalStorage<{ open: boolean }>();

/**
 * The long writer: a second writing connection, in a worker thread of its own, opened with
 * the first long transaction. It writes only while it holds the write lock, as the writer
 * does, so the two never wait for each other inside SQLite.
 */
class LongWriter {
  #worker: SqliteWorker | null = null;

  constructor(private readonly setup: WorkerConnectionSetup) {}

  get connection(): SqliteConnection {
    this.#worker ??= new SqliteWorker(this.setup);
    return this.#worker;
  }

  async close(): Promise<void> {
    await this.#worker?.close();
  }
}

/** Transactions one shared commit serves at most (CommitGroups). */
const GROUP_MAX_TRANSACTIONS = 64;

/** Each transaction of a group runs inside this savepoint of the group's transaction (CommitGroups). */
const MEMBER_SAVEPOINT = 'member';

/** One open group: a write transaction on the writer that several short transactions ran in (CommitGroups). */
class CommitGroup {
  /** Transactions that joined. */
  members = 0;
  /** Settled when the group's COMMIT is done: resolved, or rejected with why nothing of it was committed. */
  readonly done: Promise<void>;
  #settle!: (failure: Error | null) => void;
  timer: NodeJS.Timeout | null = null;
  failed = false;

  constructor() {
    this.done = new Promise<void>((resolve, reject) => {
      this.#settle = (failure) => (failure ? reject(failure) : resolve());
    });
    // A group with no one left waiting on it (every member rolled back and gone) must not
    // report its failure as unhandled.
    this.done.catch(() => undefined);
  }

  settle(failure: Error | null): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.failed = failure !== null;
    this.#settle(failure);
  }
}

/** What the writers' commits have done since the service started (the metrics' innsync_sqlite_* counters). */
export interface CommitStats {
  /** COMMITs of transactions on the writers (shared or not; long work's included). */
  commits: number;
  /** Transactions those commits made durable (more than `commits` when they were shared). */
  transactions: number;
}

/**
 * Group commit (docs/architecture.md, "SQLite: group commit"): short transactions that
 * reach the writer while another's commit is pending share one COMMIT. The first opens a
 * write transaction on the writer (the group); each transaction, the first included, runs
 * inside a savepoint of it, released when the transaction commits and rolled back to when
 * it rolls back (a 409 or 422 of one undoes only its own writes). A transaction that
 * committed is not told so until the group's COMMIT is done (CommitGroup.done), so no
 * answer leaves before its change is durable; a transaction that rolled back waits for it
 * too (what it read came from the group). If the COMMIT fails, or SQLite rolls the whole
 * group back on its own (a full disk, an I/O error), every transaction of the group gets
 * the error and nothing of any of them was stored.
 *
 * The group commits at the first of: GROUP_MAX_TRANSACTIONS transactions; `windowMs`
 * after it opened; a turn of the event loop after a transaction left it with no one
 * holding or waiting for the writer and no read in flight on a reader (no request about
 * to join). Everything is called with the writer's mutex held, except the timers, which
 * take it.
 */
class CommitGroups {
  #open: CommitGroup | null = null;
  readonly stats: CommitStats = { commits: 0, transactions: 0 };

  constructor(
    private readonly writer: InlineSqlite,
    private readonly writeLock: Mutex,
    /** The longest a group stays open for more transactions; 0: none is shared (each commits alone). */
    private readonly windowMs: number,
    /** Reads in flight on the readers: requests that may be about to write. */
    private readonly readsInFlight: () => number,
  ) {}

  /** A COMMIT that made `transactions` durable (here, or a transaction of its own: RoutedConnection). */
  counted(transactions: number): void {
    this.stats.commits++;
    this.stats.transactions += transactions;
  }

  get enabled(): boolean {
    return this.windowMs > 0;
  }

  /** A group is open: the writer holds changes not yet committed. */
  get open(): boolean {
    return this.#open !== null;
  }

  /** Joins the open group, or opens one; the transaction then runs in its own savepoint. */
  async join(): Promise<CommitGroup> {
    let group = this.#open;
    if (!group) {
      await this.writer.execute(BEGIN, []);
      group = new CommitGroup();
      this.#open = group;
      const opened = group;
      group.timer = setTimeout(() => void this.#commitInTurn(opened), this.windowMs);
    }
    await this.writer.execute(`savepoint ${MEMBER_SAVEPOINT}`, []);
    group.members++;
    return group;
  }

  /**
   * The transaction is over: its savepoint is released (`commit`) or rolled back to
   * (`rollback`). Its outcome is `group.done`.
   */
  async leave(group: CommitGroup, how: 'commit' | 'rollback'): Promise<void> {
    if (group !== this.#open) return; // the group already failed
    try {
      if (how === 'rollback') await this.writer.execute(`rollback to ${MEMBER_SAVEPOINT}`, []);
      await this.writer.execute(`release ${MEMBER_SAVEPOINT}`, []);
    } catch (err) {
      await this.#fail(group, this.writer.inTransaction && err instanceof Error ? err : groupLost());
      return;
    }
    if (!this.writer.inTransaction) {
      // SQLite rolled the whole transaction back itself (SQLITE_FULL, SQLITE_IOERR…): every member's work is gone.
      await this.#fail(group, groupLost());
      return;
    }
    if (group.members >= GROUP_MAX_TRANSACTIONS) await this.commitNow();
    else setImmediate(() => this.#commitIfIdle(group));
  }

  /** Commits the open group now (the writer's mutex held): before long work, a write outside a transaction, a checkpoint, closing. */
  async commitNow(): Promise<void> {
    const group = this.#open;
    if (!group) return;
    this.#open = null;
    try {
      await this.writer.execute('commit', []);
    } catch (err) {
      const failure = err instanceof Error ? err : new Error(String(err));
      await this.#rollbackWhatIsOpen();
      group.settle(failure);
      return;
    }
    this.counted(group.members);
    group.settle(null);
  }

  #commitIfIdle(group: CommitGroup): void {
    if (group !== this.#open || this.writeLock.busy || this.readsInFlight() > 0) return;
    void this.#commitInTurn(group);
  }

  async #commitInTurn(group: CommitGroup): Promise<void> {
    await this.writeLock.lock();
    try {
      if (group === this.#open) await this.commitNow();
    } finally {
      this.writeLock.unlock();
    }
  }

  async #fail(group: CommitGroup, failure: Error): Promise<void> {
    if (this.#open === group) this.#open = null;
    await this.#rollbackWhatIsOpen();
    group.settle(failure);
  }

  async #rollbackWhatIsOpen(): Promise<void> {
    if (!this.writer.inTransaction) return;
    try {
      await this.writer.execute('rollback', []);
    } catch {
      // Nothing more to undo: SQLite rolls back what a failed rollback leaves when the connection closes.
    }
  }
}

/** What every transaction of a group gets when SQLite rolled the group back on its own: nothing of it was stored. */
function groupLost(): Error {
  return new SqliteDatabase.SqliteError(
    'The database rolled back a shared commit after a storage failure; nothing of this request was stored.',
    'SQLITE_ABORT_ROLLBACK',
  );
}

/**
 * SQLite beside the event loop (docs/architecture.md, SQLite: long work beside short
 * requests). better-sqlite3 connections:
 * - the writer, in this thread, runs every transaction and every statement that writes,
 *   one at a time (a mutex here, as Kysely's own SQLite driver has for its single
 *   connection), except long work's transactions (asLongWork), which the long writer in a
 *   worker thread runs, holding the same mutex;
 * - SQLITE_READERS readers, each in a worker thread of its own, run the plain reads
 *   outside a transaction (`select`/`with` that SQLite reports read-only), each on the
 *   least busy reader: WAL lets them read the last committed state beside an open write
 *   transaction, so a probe or a dashboard read never queues behind a long sync or purge,
 *   nor behind one long read. A read they answered quickly runs on the writer next time
 *   while no transaction is open (ReadTimes).
 */
class WorkerSqliteDriver implements Driver {
  readonly #writeLock = new Mutex();
  readonly #readTimes = new ReadTimes();
  readonly groups: CommitGroups;

  constructor(
    private readonly writer: InlineSqlite,
    private readonly longWriter: LongWriter,
    private readonly reader: ReaderPool,
    private readonly classifier: ReadClassifier,
    private readonly checkpointer: WalCheckpointer,
    groupCommitMs: number,
  ) {
    // The checkpointer hears of a group's commit from its transactions' commitTransaction.
    this.groups = new CommitGroups(writer, this.#writeLock, groupCommitMs, () => reader.pending);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this.writer, this.longWriter, this.reader, this.classifier, this.#writeLock, this.#readTimes, this.checkpointer, this.groups);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).begin();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).end('commit');
    this.checkpointer.wrote();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).end('rollback');
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as RoutedConnection).release();
  }

  async destroy(): Promise<void> {
    // A write still in progress finishes first, and an open group commits.
    await this.#writeLock.lock();
    try {
      await this.groups.commitNow();
      this.classifier.close();
      await this.checkpointer.close();
      await this.longWriter.close();
      await this.reader.close();
    } finally {
      await this.writer.close();
    }
  }
}

class RoutedConnection implements DatabaseConnection {
  /** The writer the open transaction runs on (null: no transaction open on this connection). */
  #transaction: SqliteConnection | null = null;
  /** The commit group the open transaction runs in (null: none, or a transaction of its own: long work, grouping off). */
  #group: CommitGroup | null = null;

  constructor(
    private readonly writer: InlineSqlite,
    private readonly longWriter: LongWriter,
    private readonly reader: SqliteConnection,
    private readonly classifier: ReadClassifier,
    private readonly writeLock: Mutex,
    private readonly readTimes: ReadTimes,
    private readonly checkpointer: WalCheckpointer,
    private readonly groups: CommitGroups,
  ) {}

  async begin(): Promise<void> {
    await this.writeLock.lock();
    const long = longWork.getStore()?.open === true;
    this.#transaction = long ? this.longWriter.connection : this.writer;
    if (!long && this.groups.enabled) {
      this.#group = await this.groups.join();
      return;
    }
    // A transaction of its own: what the open group wrote is committed first (the long
    // writer cannot write while the writer holds SQLite's write lock).
    await this.groups.commitNow();
    await this.#transaction.execute(BEGIN, []);
  }

  /**
   * Commits or rolls back the open transaction, then lets the writer go: a statement this
   * connection sends afterwards (the migrator's, after a migration's own transaction) takes
   * it again in turn. A commit that failed leaves the transaction open for its rollback.
   * In a group, the transaction's savepoint is released or rolled back to, the writer let
   * go, and the group's COMMIT awaited (CommitGroups): its failure is this transaction's.
   */
  async end(how: 'commit' | 'rollback'): Promise<void> {
    const group = this.#group;
    if (group) {
      this.#group = null;
      try {
        await this.groups.leave(group, how);
      } finally {
        this.release();
      }
      await group.done;
      return;
    }
    // Nothing open: a group's transaction whose shared commit failed, rolled back already.
    if (this.#transaction === null && how === 'rollback') return;
    const writer = this.#transaction ?? this.writer;
    if (how === 'commit') {
      await writer.execute('commit', []);
      this.release();
      this.groups.counted(1);
      return;
    }
    try {
      await writer.execute('rollback', []);
    } finally {
      this.release();
    }
  }

  /** Lets the writer go if this connection's transaction holds it (it holds it from begin() on). */
  release(): void {
    if (this.#transaction === null) return;
    this.#transaction = null;
    this.writeLock.unlock();
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#transaction) return this.#transaction.execute<R>(query.sql, query.parameters);
    if (CHECKPOINT.test(query.sql)) {
      // In the checkpoints' thread, with the writer held meanwhile: the writer in this thread
      // never waits for the checkpoint's lock inside SQLite (its wait would hold the event loop).
      await this.writeLock.lock();
      try {
        await this.groups.commitNow();
        return await this.checkpointer.execute<R>(query.sql, query.parameters);
      } finally {
        this.writeLock.unlock();
      }
    }
    if (this.classifier.isPlainRead(query.sql)) {
      // A read known to be short runs in this thread at once (no message to a thread): on the
      // writer while it holds no uncommitted change; while a transaction holds the writer or
      // a commit group is open, on the query-only connection (the last commit, as a reader
      // sees it: no dirty read). Any other read goes to a reader: one not seen yet, and one
      // that once took long here.
      const inline = this.readTimes.isShort(query.sql);
      const connection = !inline ? this.reader : this.groups.open || this.writeLock.held ? this.classifier.inline : this.writer;
      const started = performance.now();
      const result = await connection.execute<R>(query.sql, query.parameters);
      this.readTimes.record(query.sql, performance.now() - started, inline);
      return result;
    }
    // A write outside a transaction: autocommitted on the writer, in turn, after the open group's commit.
    await this.writeLock.lock();
    try {
      await this.groups.commitNow();
      return await this.writer.execute<R>(query.sql, query.parameters);
    } finally {
      this.writeLock.unlock();
      this.checkpointer.wrote();
    }
  }

  // eslint-disable-next-line require-yield -- no query of the service streams
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('The SQLite driver does not stream queries.');
  }
}

/** Kysely's SQLite dialect over a writer here, a long writer and SQLITE_READERS readers in worker threads (WorkerSqliteDriver). */
export class WorkerSqliteDialect implements Dialect {
  constructor(
    /** The writer, a connection opened here: it runs in this thread. */
    private readonly writer: SqliteDatabase.Database,
    /** How the long writer's worker opens its connection (the writer's pragmas). */
    private readonly longWriter: WorkerConnectionSetup,
    private readonly reader: WorkerConnectionSetup,
    /** A query-only connection here, to ask SQLite whether a statement only reads. */
    private readonly classifier: SqliteDatabase.Database,
    /** The longest a commit waits for more transactions to share it (CommitGroups); 0: each commits alone. */
    private readonly groupCommitMs: number,
  ) {}

  #driver: WorkerSqliteDriver | null = null;

  createDriver(): Driver {
    const readers = new ReaderPool(() => new SqliteWorker(this.reader), SQLITE_READERS);
    // The writers leave checkpoints to a thread of their own (WalCheckpointer).
    this.writer.pragma('wal_autocheckpoint = 0');
    const longWriter = new LongWriter({ ...this.longWriter, pragmas: [...this.longWriter.pragmas, 'wal_autocheckpoint = 0'] });
    this.#driver = new WorkerSqliteDriver(
      new InlineSqlite(this.writer),
      longWriter,
      readers,
      new ReadClassifier(this.classifier),
      new WalCheckpointer(this.reader),
      this.groupCommitMs,
    );
    return this.#driver;
  }

  /** The writer's commits so far (null before the driver exists). */
  commitStats(): CommitStats | null {
    return this.#driver ? { ...this.#driver.groups.stats } : null;
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own signature
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
