import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, type SqliteDialectConfig, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;
/** A database handle or an open transaction: repositories accept either. */
export type DbOrTrx = Kysely<Database> | Transaction<Database>;
export type Engine = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Db;
  engine: Engine;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  dataDir: string;
  sqliteSynchronous?: 'normal' | 'full';
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** Told about connection errors outside any query (the database went away). */
  onConnectionError?: (err: Error) => void;
}

/** Opens SQLite in DATA_DIR, or PostgreSQL when DATABASE_URL is set (operations.md). */
export function openDatabase(opts: DatabaseOptions): DatabaseHandle {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
    // An idle client whose server went away emits 'error'; unheard, it would end the
    // process. The next query reconnects, or answers 503 while the database is down.
    pool.on('error', (err) => opts.onConnectionError?.(err));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, engine: 'postgres', close: () => db.destroy() };
  }
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const sqlite = new SqliteDatabase(path.join(opts.dataDir, 'innsync.sqlite'));
  sqlite.pragma('journal_mode = WAL');
  // operations.md: SQLITE_SYNCHRONOUS normal (WAL) or full (fsync per commit)
  sqlite.pragma(`synchronous = ${opts.sqliteSynchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  // The CLI may write while the server runs: wait for the lock rather than fail.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { db, engine: 'sqlite', close: () => db.destroy() };
}

/** Statements longer than this (multi-row batch inserts) are prepared afresh each time. */
const CACHEABLE_SQL_LENGTH = 2000;
const STATEMENT_CACHE_SIZE = 200;

/**
 * Kysely prepares every query it runs, and preparing costs better-sqlite3 more than
 * running most of ours. The same SQL text gets the same prepared statement back (a
 * bounded LRU). Kysely runs statements to completion with all()/run() before the next
 * query can take the connection, so a cached statement is never in use twice; one that
 * is still iterating (a streamed query) is not handed out again.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectConfig['database'] {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => {
      cache.clear();
      sqlite.close();
    },
    prepare: (sql: string) => {
      if (sql.length > CACHEABLE_SQL_LENGTH) return sqlite.prepare(sql);
      const cached = cache.get(sql);
      if (cached && !cached.busy) {
        cache.delete(sql); // most recently used last
        cache.set(sql, cached);
        return cached;
      }
      if (cached) return sqlite.prepare(sql);
      const stmt = sqlite.prepare(sql);
      cache.set(sql, stmt);
      if (cache.size > STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next();
        if (!oldest.done) cache.delete(oldest.value);
      }
      return stmt;
    },
  };
}

export function isPostgres(db: DbOrTrx): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Which unique index a write broke, by the names the migrations give them. */
export type UniqueIndex = 'active_room' | 'active_pms_guest' | 'idempotency' | 'other';

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
      default:
        return 'other';
    }
  }
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    const msg = String(e.message);
    if (msg.includes('room_assignments.room_number')) return 'active_room';
    if (msg.includes('guests.pms_guest_id')) return 'active_pms_guest';
    if (msg.includes('idempotency_records.')) return 'idempotency';
    return 'other';
  }
  return null;
}

/** True when the error means storage could not be reached (answered 503, not 500). */
export function isStorageUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  return (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'ETIMEDOUT' ||
    code === '57P01' ||
    code === '57P03' ||
    code === '53300' ||
    code === 'SQLITE_BUSY' ||
    code === 'SQLITE_CANTOPEN' ||
    (err instanceof Error && /^Connection terminated/.test(err.message))
  );
}
