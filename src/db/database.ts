import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresAdapter, SqliteDialect, sql, type CompiledQuery, type Dialect, type SqliteDialectConfig, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { createPrivateFile, secureDataDir } from './data-dir.js';
import { holdShared } from './data-dir-lock.js';
import { PostgresConnection, postgresDialect, postgresPool, type Deferred } from './postgres-driver.js';
import { DEFAULT_SQLITE_GROUP_COMMIT_MS, StatementCache, WorkerSqliteDialect, type CommitStats } from './sqlite-driver.js';
import { inSpan } from '../tracing/spans.js';
export { asLongWork } from './sqlite-driver.js';

export type Db = Kysely<Database>;
/** A database handle or an open transaction: repositories accept either. */
export type DbOrTrx = Kysely<Database> | Transaction<Database>;
export type Engine = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Db;
  /** SQLite with the readers on: the writer's commits so far, shared or not (docs/architecture.md, "SQLite: group commit"); else null. */
  commitStats(): CommitStats | null;
  /**
   * For work off the request path (the request-log writer): on PostgreSQL a pool of its
   * own, so a batch never queues behind the requests' queries; on SQLite the same handle
   * (one writer serves every write: sqlite-driver.ts).
   */
  background: Db;
  engine: Engine;
  close(): Promise<void>;
}

/** How long a request waits for a pool connection before it is answered 503. */
const CONNECT_TIMEOUT_MS = 5_000;

export interface DatabaseOptions {
  databaseUrl: string | null;
  dataDir: string;
  sqliteSynchronous?: 'normal' | 'full';
  /**
   * SQLite: plain reads outside a transaction on a read connection of their own, and long
   * transactions yielding the event loop (sqlite-driver.ts); true unless false is given.
   * False: one connection serves everything, in turn (Kysely's own SQLite driver).
   */
  sqliteReader?: boolean;
  /**
   * SQLite: the longest a commit waits for more transactions to share it, in ms (0: each
   * transaction commits alone). By default DEFAULT_SQLITE_GROUP_COMMIT_MS.
   */
  sqliteGroupCommitMs?: number;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** Told about connection errors outside any query (the database went away). */
  onConnectionError?: (err: Error) => void;
}

/** Opens SQLite in DATA_DIR, or PostgreSQL when DATABASE_URL is set (README.md, "Operating it"). */
export function openDatabase(opts: DatabaseOptions): DatabaseHandle {
  if (opts.databaseUrl) {
    const db = new Kysely<Database>({
      dialect: postgresDialect(postgresPool(opts.databaseUrl, opts.poolSize ?? 10, CONNECT_TIMEOUT_MS, opts.onConnectionError)),
    });
    const background = new Kysely<Database>({ dialect: postgresDialect(postgresPool(opts.databaseUrl, 2, CONNECT_TIMEOUT_MS, opts.onConnectionError)) });
    return {
      db,
      background,
      commitStats: () => null,
      engine: 'postgres',
      close: async () => {
        await Promise.all([db.destroy(), background.destroy()]);
      },
    };
  }
  secureDataDir(opts.dataDir);
  // Held while the database is open: `innsync restore` refuses to swap it meanwhile (data-dir-lock.ts).
  const lock = holdShared(opts.dataDir);
  let dialect: Dialect;
  let commitStats: () => CommitStats | null = () => null;
  try {
    const file = sqliteFile(opts.dataDir);
    createPrivateFile(file);
    // Opened here first, so a database that cannot be opened fails now, and WAL is on before any worker opens it.
    const sqlite = openSqlite(file, opts.sqliteSynchronous);
    if (opts.sqliteReader === false) {
      dialect = new SqliteDialect({ database: withStatementCache(sqlite) });
    } else {
      const writer = { file, pragmas: writerPragmas(opts.sqliteSynchronous) };
      const worker = new WorkerSqliteDialect(
        sqlite,
        writer,
        { file, pragmas: READER_PRAGMAS },
        openSqliteReader(file),
        opts.sqliteGroupCommitMs ?? DEFAULT_SQLITE_GROUP_COMMIT_MS,
      );
      commitStats = () => worker.commitStats();
      dialect = worker;
    }
  } catch (err) {
    lock.release();
    throw err;
  }
  const db = new Kysely<Database>({ dialect });
  const close = async (): Promise<void> => {
    try {
      await db.destroy();
    } finally {
      lock.release();
    }
  };
  return { db, background: db, commitStats, engine: 'sqlite', close };
}

/** The pragmas of a connection that writes (in order). */
function writerPragmas(synchronous: DatabaseOptions['sqliteSynchronous']): string[] {
  return [
    'journal_mode = WAL',
    // README.md, "Operating it": SQLITE_SYNCHRONOUS normal (WAL) or full (fsync per commit)
    `synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`,
    // The CLI may write while the server runs: wait for the lock rather than fail.
    'busy_timeout = 5000',
    'foreign_keys = ON',
    // Erased personal data (README.md, Personal data) must not linger in freed pages or cells: SQLite
    // overwrites deleted content with zeros (the WAL is truncated after an erasure).
    'secure_delete = ON',
  ];
}

/** A connection that only reads: it can never write. */
const READER_PRAGMAS = ['busy_timeout = 5000', 'query_only = ON'];

function openSqlite(file: string, synchronous: DatabaseOptions['sqliteSynchronous']): SqliteDatabase.Database {
  const sqlite = new SqliteDatabase(file);
  try {
    for (const pragma of writerPragmas(synchronous)) sqlite.pragma(pragma);
  } catch (err) {
    sqlite.close();
    throw err;
  }
  return sqlite;
}

/** A connection that only reads (sqlite-driver.ts): it can never write. */
function openSqliteReader(file: string): SqliteDatabase.Database {
  const sqlite = new SqliteDatabase(file, { fileMustExist: true });
  try {
    for (const pragma of READER_PRAGMAS) sqlite.pragma(pragma);
  } catch (err) {
    sqlite.close();
    throw err;
  }
  return sqlite;
}

/** The SQLite database file in DATA_DIR. */
export function sqliteFile(dataDir: string): string {
  return path.join(dataDir, 'innsync.sqlite');
}

/** A backup step's page count that is every page (better-sqlite3's largest; SQLite copies what there is). */
const ALL_PAGES = 0x7fffffff;

/**
 * `innsync backup` (README.md, "Backup and restore"): a consistent copy of the SQLite
 * database while the service keeps serving. SQLite's online backup, all pages in one
 * step: one read transaction, so the copy is one committed state (WAL: writers go on
 * meanwhile). The step asks for every page there is (ALL_PAGES), not the count the step
 * before saw: the database grows while a large copy runs, and a step sized by the old
 * count started over and fell short again for as long as writes went on. The copy is
 * readable by its owner alone.
 */
export async function backupSqlite(dataDir: string, target: string): Promise<{ file: string; bytes: number }> {
  const source = sqliteFile(dataDir);
  if (!fs.existsSync(source)) throw new Error(`no database at ${source}: check DATA_DIR`);
  const file = path.resolve(target);
  if (fs.existsSync(file)) throw new Error(`${file} already exists: name a new file`);
  // Created 0600 before a byte is written (and refused if it exists, atomically).
  fs.closeSync(fs.openSync(file, 'wx', 0o600));
  // A restore does not swap the database while it is being copied.
  const lock = holdShared(dataDir);
  try {
    const sqlite = new SqliteDatabase(source, { fileMustExist: true });
    try {
      sqlite.pragma('busy_timeout = 5000');
      await sqlite.backup(file, { progress: () => ALL_PAGES });
    } finally {
      sqlite.close();
    }
  } finally {
    lock.release();
  }
  return { file, bytes: fs.statSync(file).size };
}

/**
 * Kysely prepares every query it runs, and preparing costs better-sqlite3 more than
 * running most of ours. The same SQL text gets the same prepared statement back (a
 * bounded LRU). Kysely runs statements to completion with all()/run() before the next
 * query can take the connection, so a cached statement is never in use twice; one that
 * is still iterating (a streamed query) is not handed out again.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectConfig['database'] {
  const cache = new StatementCache(sqlite);
  return { close: () => cache.close(), prepare: (sql: string) => cache.prepare(sql) };
}

/** Resolves when the database answers a trivial query (GET /readyz); throws what the driver throws. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

export function isPostgres(db: DbOrTrx): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** The queued statement, when `db` is a PostgreSQL transaction; null elsewhere (then the caller runs it now). */
async function deferOnPostgres(db: DbOrTrx, query: CompiledQuery): Promise<{ deferred: Deferred; connection: PostgresConnection } | null> {
  if (!db.isTransaction || !isPostgres(db)) return null;
  return db.getExecutor().provideConnection(async (connection) => {
    if (!(connection instanceof PostgresConnection) || !connection.inTransaction) return null;
    return { deferred: await connection.defer(query), connection };
  });
}

/**
 * A write whose answer nobody reads (an insert, an update, the hotel's lock, a NOTIFY),
 * inside the caller's transaction. On PostgreSQL it is sent with the transaction's next
 * statement or its COMMIT, in the same round trip, and an error it meets (a unique
 * violation: 23505) is thrown there: the transaction rolls back all the same
 * (docs/architecture.md, "Round trips on PostgreSQL"). On SQLite, or outside a
 * transaction, it runs now.
 */
export async function writeLater(db: DbOrTrx, query: CompiledQuery): Promise<void> {
  if (await deferOnPostgres(db, query)) return;
  await db.executeQuery(query);
}

/** The rows of a read sent with a later round trip (readLater). */
export interface LaterRows<R> {
  /** The rows; sends the read now if no round trip has carried it yet. */
  rows(): Promise<R[]>;
}

/**
 * A read whose rows are wanted later in the caller's transaction: on PostgreSQL it goes
 * with the next round trip (or `rows()` sends it), so it costs none of its own
 * (docs/architecture.md, "Round trips on PostgreSQL"); on SQLite, or outside a
 * transaction, it runs when `rows()` is first called (never, if it is not).
 */
export async function readLater<R>(db: DbOrTrx, query: CompiledQuery<R>): Promise<LaterRows<R>> {
  const queued = await deferOnPostgres(db, query);
  if (queued) {
    const { deferred, connection } = queued;
    return {
      rows: async () => {
        if (!deferred.sent) await db.getExecutor().provideConnection(() => connection.flush());
        return (await deferred.answered).rows as R[];
      },
    };
  }
  let read: Promise<R[]> | null = null;
  return { rows: () => (read ??= db.executeQuery(query).then((r) => r.rows)) };
}

/** Whether a write broke a foreign key: the row it names was deleted meanwhile (PostgreSQL 23503, SQLite's constraint). */
export function foreignKeyViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

/** Which unique index a write broke, by the names the migrations give them. */
export type UniqueIndex = 'active_room' | 'active_pms_guest' | 'idempotency' | 'room_list' | 'other';

export function uniqueViolation(err: unknown): UniqueIndex | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown };
  if (e.code === '23505') {
    switch (e.constraint) {
      case 'room_assignments_active_room_uq':
        return 'active_room';
      case 'guests_active_pms_guest_uq':
        return 'active_pms_guest';
      case 'idempotency_records_pkey':
        return 'idempotency';
      case 'rooms_hotel_room_uq':
        return 'room_list';
      default:
        return 'other';
    }
  }
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    const msg = String(e.message);
    if (msg.includes('room_assignments.room_number')) return 'active_room';
    if (msg.includes('guests.pms_guest_id')) return 'active_pms_guest';
    if (msg.includes('idempotency_records.')) return 'idempotency';
    if (msg.includes('rooms.room_number')) return 'room_list';
    return 'other';
  }
  return null;
}

function errorCode(err: unknown): string | null {
  if (typeof err !== 'object' || err === null) return null;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : null;
}

// Network failures; PostgreSQL's connection exceptions (class 08), insufficient resources
// (class 53: too many connections, disk full, out of memory), operator intervention (57P:
// shutdown, crash, start-up, database dropped, idle-session timeout), its
// idle-in-transaction timeout (25P03) and a write refused by a server still in recovery
// (25006: a standby reached during a failover, before its promotion completed); SQLite's
// I/O failures, a full disk, a file it cannot open.
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '25P03',
  '25006',
  'SQLITE_CANTOPEN',
  'SQLITE_FULL',
  // A shared commit rolled back after another transaction's storage failure (sqlite-driver.ts, CommitGroups).
  'SQLITE_ABORT_ROLLBACK',
]);
const UNREACHABLE_PREFIXES = ['08', '53', '57P', 'SQLITE_IOERR'];
// pg's own messages for a connection that died or a pool that could not get one in time.
const UNREACHABLE_MESSAGES = /^(Connection terminated|Client has encountered a connection error|Client was closed|timeout exceeded when trying to connect)/;

/** True when the error means storage could not be reached (answered 503, not 500). */
export function isStorageUnavailable(err: unknown): boolean {
  const code = errorCode(err);
  if (code !== null && (UNREACHABLE_CODES.has(code) || UNREACHABLE_PREFIXES.some((p) => code.startsWith(p)))) return true;
  return err instanceof Error && UNREACHABLE_MESSAGES.test(err.message);
}

/**
 * True when the transaction lost a race and may simply run again at once: a deadlock
 * (40P01), a serialization failure (40001), or SQLite's snapshot gone stale because
 * another connection wrote first (SQLITE_BUSY_SNAPSHOT).
 */
export function isTransientConflict(err: unknown): boolean {
  const code = errorCode(err);
  return code === '40P01' || code === '40001' || code === 'SQLITE_BUSY_SNAPSHOT';
}

/**
 * True when storage was too busy to finish in time, and running again at once would not
 * help: a PostgreSQL lock held past LOCK_TIMEOUT_MS (55P03), a statement cancelled
 * (57014), SQLite's write lock held by another process past busy_timeout (SQLITE_BUSY).
 */
export function isStorageBusy(err: unknown): boolean {
  const code = errorCode(err);
  return code === '55P03' || code === '57014' || (code !== null && code.startsWith('SQLITE_BUSY') && code !== 'SQLITE_BUSY_SNAPSHOT');
}

/** A storage failure as the metrics count it (innsync_database_errors_total). */
export type StorageErrorKind = 'unavailable' | 'busy' | 'conflict' | 'other';

/** The kind of storage failure `err` is; null when it did not come from the database. */
export function storageErrorKind(err: unknown): StorageErrorKind | null {
  if (isStorageUnavailable(err)) return 'unavailable';
  if (isStorageBusy(err)) return 'busy';
  if (isTransientConflict(err)) return 'conflict';
  return err instanceof pg.DatabaseError || err instanceof SqliteDatabase.SqliteError ? 'other' : null;
}

/** True when a PostgreSQL statement waited longer than LOCK_TIMEOUT_MS for a lock (55P03). */
export function isLockTimeout(err: unknown): boolean {
  return errorCode(err) === '55P03';
}

const RETRIES = 4;

/**
 * Runs `work` in one transaction, and again from the start (at most RETRIES more times,
 * after a short random pause) when it fails with a transient conflict; the last error is
 * thrown as is. `work` must be safe to run again: everything it did rolled back.
 */
export async function runTransaction<T>(db: Db, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  // docs/architecture.md, "Traces": one span for the transaction and its retries.
  const attributes = { 'db.system.name': isPostgres(db) ? 'postgresql' : 'sqlite' };
  return inSpan(
    'db.transaction',
    attributes,
    async (span) => {
      for (let attempt = 0; ; attempt++) {
        span?.setAttribute('innsync.db.retries', attempt);
        try {
          return await db.transaction().execute(work);
        } catch (err) {
          if (attempt >= RETRIES || !isTransientConflict(err)) throw err;
          await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * 2 ** attempt));
        }
      }
    },
    { onlyInside: true },
  );
}
