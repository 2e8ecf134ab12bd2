import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';

// PostgreSQL for Kysely, directly or through a pooler in transaction mode
// (docs/deployment.md, "Through PgBouncer"). Nothing here depends on the session a
// connection had before: the limits of a transaction are set in the transaction itself,
// no statement is prepared by name, and locks are taken for the transaction only.

/**
 * PostgreSQL: the longest any statement in a transaction waits for a lock (a row another
 * transaction holds, the idempotency record of a duplicate still in progress, a hotel's
 * lock). Past it the statement fails with 55P03: 409 IDEMPOTENCY_KEY_IN_USE at the claim,
 * 503 elsewhere, never an unbounded wait.
 */
export const LOCK_TIMEOUT_MS = 5_000;

/**
 * PostgreSQL ends a session whose transaction sits idle this long (a frozen or partitioned
 * instance): its uncommitted claim and locks are released, so a hotel or a key is never
 * blocked by a process that stopped answering (docs/pms-interface.md,
 * "Idempotency": a request that never finished stops blocking its key after 60 seconds).
 */
const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

/**
 * Sent with every BEGIN, in the same round trip: both limits hold for that transaction
 * alone (SET LOCAL), whichever server connection a pooler gave it. Startup options or a
 * session's SET would be refused by a pooler, or kept on a server connection that other
 * clients then use.
 */
const TRANSACTION_LIMITS = `set local lock_timeout = ${LOCK_TIMEOUT_MS}; set local idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_TIMEOUT_MS}`;

/**
 * SQLSTATE 25006: the server refused a write because it is a standby (a demoted primary,
 * or an address that still leads to the replica during a failover). The request is
 * answered 503; the connection is not used again, so the next one is made through the
 * address anew and reaches the new primary.
 */
const READ_ONLY_TRANSACTION = '25006';

/** Kysely's PostgreSQL dialect over a node-postgres pool, with PostgresDriver below. */
export function postgresDialect(pool: pg.Pool): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new PostgresDriver(pool),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}

class PostgresDriver implements Driver {
  constructor(private readonly pool: pg.Pool) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PostgresConnection(await this.pool.connect());
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const mode = [settings.isolationLevel ? `isolation level ${settings.isolationLevel}` : '', settings.accessMode ?? ''].filter(Boolean).join(' ');
    // Sent with the transaction's first statement (PostgresConnection): one message holding three statements.
    (connection as PostgresConnection).begin(`begin ${mode}; ${TRANSACTION_LIMITS}`);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PostgresConnection).commit();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as PostgresConnection).rollback();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PostgresConnection).release();
  }

  async destroy(): Promise<void> {
    await this.pool.end();
  }
}

/** A statement sent later, with the transaction's next round trip, and what became of it. */
export class Deferred {
  sent = false;
  readonly answered: Promise<QueryResult<unknown>>;
  resolve!: (result: QueryResult<unknown>) => void;
  reject!: (err: unknown) => void;

  constructor(readonly query: CompiledQuery) {
    this.answered = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Never rejects unheard: the round trip that carried it throws the same error.
    this.answered.catch(() => undefined);
  }
}

/**
 * Deferred statements are sent at once when this many are queued, or when they carry this
 * many parameters: a long write (a sync's thousands of activity rows) still goes in
 * bounded round trips, and the event loop turns between them.
 */
const MAX_DEFERRED_STATEMENTS = 32;
const MAX_DEFERRED_PARAMETERS = 10_000;

/** A number for each pool connection, for observeRoundTrips. */
const connectionNumbers = new WeakMap<pg.PoolClient, number>();
let connections = 0;

/** What observeRoundTrips reports: one round trip to the server and the statements it carried, in order. */
export interface RoundTrip {
  /** The same number for every round trip of one pool connection (a transaction never changes connection). */
  connection: number;
  statements: string[];
}

const roundTripObservers = new Set<(trip: RoundTrip) => void>();

/**
 * Calls `observer` with every round trip the service's PostgreSQL connections make from now
 * on (tests count a write's round trips with it: docs/architecture.md, "Round trips on
 * PostgreSQL"). Returns the function that stops it.
 */
export function observeRoundTrips(observer: (trip: RoundTrip) => void): () => void {
  roundTripObservers.add(observer);
  return () => roundTripObservers.delete(observer);
}

/**
 * One pool connection. Its client runs in node-postgres's pipeline mode: the statements of
 * one round trip are written together and their answers read in order (each has its own
 * Sync, so a failed one fails those after it inside the transaction, never the next
 * transaction). Inside a transaction (docs/architecture.md, "Round trips on PostgreSQL"):
 *
 * - BEGIN (with its limits) is not sent alone: it goes with the transaction's first statement.
 * - `defer` queues a statement whose result is not needed at once (a write, the hotel's
 *   lock, a read wanted later); it goes, in order, with the next statement, `flush` or the
 *   COMMIT. An error it meets is thrown there, and the transaction rolls back as before.
 */
export class PostgresConnection implements DatabaseConnection {
  /** Set when the server proved to be a standby: the connection is closed at its release. */
  #onStandby = false;
  /** BEGIN and its limits, until they are sent with the first statement. */
  #begin: string | null = null;
  /** A transaction is open on the server (BEGIN sent, no COMMIT or ROLLBACK since). */
  #inTransaction = false;
  #deferred: Deferred[] = [];
  readonly #id: number;

  constructor(private readonly client: pg.PoolClient) {
    this.#id = connectionNumbers.get(client) ?? ++connections;
    connectionNumbers.set(client, this.#id);
  }

  begin(statement: string): void {
    this.#begin = statement;
  }

  /** True inside a transaction: `defer` then queues, else there is nothing to send with. */
  get inTransaction(): boolean {
    return this.#begin !== null || this.#inTransaction;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const results = await this.#roundTrip([query]);
    return results[results.length - 1] as QueryResult<R>;
  }

  /**
   * Queues `query` for the transaction's next round trip (above). Its `answered` settles
   * when it has been answered; it never rejects unheard (the round trip that carried it
   * throws the same error).
   */
  async defer(query: CompiledQuery): Promise<Deferred> {
    const d = new Deferred(query);
    this.#deferred.push(d);
    const parameters = this.#deferred.reduce((n, q) => n + q.query.parameters.length, 0);
    if (this.#deferred.length >= MAX_DEFERRED_STATEMENTS || parameters >= MAX_DEFERRED_PARAMETERS) await this.flush();
    return d;
  }

  /** Sends what `defer` queued, now (nothing when the queue is empty). */
  async flush(): Promise<void> {
    if (this.#deferred.length > 0) await this.#roundTrip([]);
  }

  async commit(): Promise<void> {
    if (!this.#inTransaction && this.#deferred.length === 0) {
      // Nothing was ever sent: there is no transaction on the server to end.
      this.#begin = null;
      return;
    }
    try {
      await this.#roundTrip([CompiledQuery.raw('commit')]);
    } finally {
      // A COMMIT ends the transaction whatever the answer (after a failed statement it rolls back).
      this.#inTransaction = false;
    }
  }

  async rollback(): Promise<void> {
    const unsent = this.#deferred.splice(0);
    for (const d of unsent) d.reject(new Error('not sent: the transaction rolled back'));
    this.#begin = null;
    if (!this.#inTransaction) return;
    this.#inTransaction = false;
    await this.#send(['rollback'], [CompiledQuery.raw('rollback')]);
  }

  /** One round trip: the pending BEGIN, the deferred statements and `last`, in that order. Returns `last`'s results. */
  async #roundTrip(last: CompiledQuery[]): Promise<Array<QueryResult<unknown>>> {
    const deferred = this.#deferred.splice(0);
    const queries = [...deferred.map((d) => d.query), ...last];
    const texts = queries.map((q) => q.sql);
    if (this.#begin !== null) {
      texts.unshift(this.#begin);
      queries.unshift(CompiledQuery.raw(this.#begin));
      this.#begin = null;
      this.#inTransaction = true;
    }
    let results: Array<QueryResult<unknown>>;
    try {
      results = await this.#send(texts, queries);
    } catch (err) {
      for (const d of deferred) {
        d.sent = true;
        d.reject(err);
      }
      throw err;
    }
    const skip = queries.length - deferred.length - last.length;
    deferred.forEach((d, i) => {
      d.sent = true;
      d.resolve(results[skip + i] as QueryResult<unknown>);
    });
    return results.slice(skip + deferred.length);
  }

  /** Writes every query at once (pipeline mode) and waits for every answer; throws the first error. */
  async #send(texts: string[], queries: CompiledQuery[]): Promise<Array<QueryResult<unknown>>> {
    for (const observer of roundTripObservers) observer({ connection: this.#id, statements: texts });
    // node-postgres writes each message of each statement (parse, bind, describe, execute,
    // sync) to the socket by itself, and in pipeline mode writes them at once, within
    // query(): held back (cork) until all are queued, they leave in one write, not one
    // system call each (docs/architecture.md, "Round trips on PostgreSQL").
    const socket = (this.client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
    socket?.cork?.();
    let sent: Array<Promise<pg.QueryResult | pg.QueryResult[]>>;
    try {
      // No name: node-postgres prepares each statement unnamed, which a pooler in transaction mode allows.
      sent = queries.map((q) => this.client.query(q.sql, [...q.parameters]));
    } finally {
      socket?.uncork?.();
    }
    const answers = await Promise.allSettled(sent);
    const failed = answers.find((a) => a.status === 'rejected');
    if (failed) {
      const err: unknown = failed.reason;
      if ((err as { code?: unknown }).code === READ_ONLY_TRANSACTION) this.#onStandby = true;
      throw err;
    }
    return answers.map((a) => toQueryResult((a as PromiseFulfilledResult<pg.QueryResult | pg.QueryResult[]>).value));
  }

  // eslint-disable-next-line require-yield -- no query streams rows (the interface requires the method)
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming PostgreSQL results is not supported: read in pages');
  }

  release(): void {
    this.client.release(this.#onStandby ? new Error('the server is a standby (read-only): connect again through the address') : undefined);
  }
}

/** Kysely's result of one query (several statements in one message, as BEGIN and its limits, answer with one result each: the last counts). */
function toQueryResult(result: pg.QueryResult | pg.QueryResult[]): QueryResult<unknown> {
  const last = Array.isArray(result) ? result[result.length - 1] : result;
  const counted = last?.command === 'INSERT' || last?.command === 'UPDATE' || last?.command === 'DELETE' || last?.command === 'MERGE';
  return { rows: last?.rows ?? [], numAffectedRows: counted ? BigInt(last.rowCount ?? 0) : undefined };
}

/**
 * A pool whose connections may all die (PostgreSQL restarted, a failover, a fast shutdown)
 * without ending the process. pg emits 'error' on a client whose connection fails, idle or
 * not; the pool listens only while a client is idle, and an unheard 'error' ends the
 * process. So every client gets a listener of its own: a query in flight fails with the
 * error (answered 503), and the pool discards the broken client when it is released.
 */
export function postgresPool(connectionString: string, max: number, connectTimeoutMs: number, onConnectionError?: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    // A connection is waited for at most this long (then 503), never for the OS's connect timeout.
    connectionTimeoutMillis: connectTimeoutMs,
    // The statements of one round trip are written together (PostgresConnection).
    pipeline: true,
    // A dead peer (a partition, a host gone) is noticed by TCP keepalive, not after hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  pool.on('error', (err) => onConnectionError?.(err));
  pool.on('connect', (client) => {
    client.on('error', (err) => onConnectionError?.(err));
  });
  return pool;
}
