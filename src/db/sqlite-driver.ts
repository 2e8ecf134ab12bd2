import { performance } from 'node:perf_hooks';
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

/** What the driver needs of a better-sqlite3 connection (a statement cache stands in for it). */
export interface SqliteStatements {
  prepare(sql: string): {
    reader: boolean;
    readonly: boolean;
    all(parameters: readonly unknown[]): unknown[];
    run(parameters: readonly unknown[]): { changes: number; lastInsertRowid: number | bigint };
  };
  close(): void;
}

/**
 * The longest a transaction keeps the event loop before it lets other work run
 * (docs/architecture.md, SQLite: long work beside short requests).
 */
export const TRANSACTION_SLICE_MS = 5;

/** A plain read: the only statements a read connection is offered. */
const READ_SQL = /^\s*(select|with)\b/i;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

class Mutex {
  #held: Promise<void> | null = null;
  #release: (() => void) | null = null;

  async lock(): Promise<void> {
    while (this.#held) await this.#held;
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  unlock(): void {
    const release = this.#release;
    this.#held = null;
    this.#release = null;
    release?.();
  }
}

function execute<R>(statements: SqliteStatements, query: CompiledQuery): QueryResult<R> {
  const stmt = statements.prepare(query.sql);
  if (stmt.reader) return { rows: stmt.all(query.parameters) as R[] };
  const { changes, lastInsertRowid } = stmt.run(query.parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/**
 * SQLite with a write connection and a read connection, both in this process
 * (better-sqlite3 runs each statement synchronously):
 * - a transaction, and every statement that writes, runs on the write connection, one
 *   at a time (a mutex, as Kysely's own SQLite driver does for its single connection);
 * - a plain read outside a transaction (`select`/`with` that SQLite reports read-only)
 *   runs on the read connection at once: WAL lets it read the last committed state
 *   beside an open write transaction, so a probe or a dashboard read never queues behind
 *   a long sync or purge;
 * - a transaction gives the event loop a turn between two statements once it has held
 *   it for TRANSACTION_SLICE_MS, so requests are parsed and answered while it runs. A
 *   short transaction (a check-in) never reaches the slice and never yields.
 */
class SplitSqliteDriver implements Driver {
  readonly #writer: SqliteStatements;
  readonly #reader: SqliteStatements;
  readonly #writeLock = new Mutex();

  constructor(writer: SqliteStatements, reader: SqliteStatements) {
    this.#writer = writer;
    this.#reader = reader;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new RoutedConnection(this.#writer, this.#reader, this.#writeLock);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).begin();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).end('commit');
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).end('rollback');
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as RoutedConnection).release();
  }

  async destroy(): Promise<void> {
    // A write still in progress finishes first.
    await this.#writeLock.lock();
    try {
      this.#reader.close();
    } finally {
      this.#writer.close();
    }
  }
}

class RoutedConnection implements DatabaseConnection {
  #holdsWriter = false;
  #sliceStart = 0;

  constructor(
    private readonly writer: SqliteStatements,
    private readonly reader: SqliteStatements,
    private readonly writeLock: Mutex,
  ) {}

  async begin(): Promise<void> {
    await this.writeLock.lock();
    this.#holdsWriter = true;
    this.#sliceStart = performance.now();
    this.writer.prepare('begin').run([]);
  }

  async end(command: 'commit' | 'rollback'): Promise<void> {
    this.writer.prepare(command).run([]);
  }

  release(): void {
    if (!this.#holdsWriter) return;
    this.#holdsWriter = false;
    this.writeLock.unlock();
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#holdsWriter) {
      if (performance.now() - this.#sliceStart > TRANSACTION_SLICE_MS) {
        await nextTurn();
        this.#sliceStart = performance.now();
      }
      return execute<R>(this.writer, query);
    }
    if (READ_SQL.test(query.sql)) {
      const stmt = this.reader.prepare(query.sql);
      if (stmt.reader && stmt.readonly) return { rows: stmt.all(query.parameters) as R[] };
    }
    // A write outside a transaction: autocommitted on the write connection, in turn.
    await this.writeLock.lock();
    try {
      return execute<R>(this.writer, query);
    } finally {
      this.writeLock.unlock();
    }
  }

  // eslint-disable-next-line require-yield -- no query of the service streams
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('The SQLite driver does not stream queries.');
  }
}

/** Kysely's SQLite dialect over a write and a read connection (SplitSqliteDriver). */
export class SplitSqliteDialect implements Dialect {
  constructor(
    private readonly writer: SqliteStatements,
    private readonly reader: SqliteStatements,
  ) {}

  createDriver(): Driver {
    return new SplitSqliteDriver(this.writer, this.reader);
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
