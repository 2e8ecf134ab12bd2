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
export const IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;

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
    // One simple-protocol message holding three statements: one round trip, as a plain BEGIN.
    await connection.executeQuery(CompiledQuery.raw(`begin ${mode}; ${TRANSACTION_LIMITS}`));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PostgresConnection).release();
  }

  async destroy(): Promise<void> {
    await this.pool.end();
  }
}

class PostgresConnection implements DatabaseConnection {
  /** Set when the server proved to be a standby: the connection is closed at its release. */
  #onStandby = false;

  constructor(private readonly client: pg.PoolClient) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let result: pg.QueryResult | pg.QueryResult[];
    try {
      // No name: node-postgres prepares each statement unnamed, which a pooler in transaction mode allows.
      result = await this.client.query(query.sql, [...query.parameters]);
    } catch (err) {
      if ((err as { code?: unknown }).code === READ_ONLY_TRANSACTION) this.#onStandby = true;
      throw err;
    }
    // Several statements in one message (BEGIN and its limits) answer with one result each.
    const last = Array.isArray(result) ? result[result.length - 1] : result;
    const counted = last?.command === 'INSERT' || last?.command === 'UPDATE' || last?.command === 'DELETE' || last?.command === 'MERGE';
    return { rows: (last?.rows ?? []) as R[], numAffectedRows: counted ? BigInt(last.rowCount ?? 0) : undefined };
  }

  // eslint-disable-next-line require-yield -- no query streams rows (the interface requires the method)
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming PostgreSQL results is not supported: read in pages');
  }

  release(): void {
    this.client.release(this.#onStandby ? new Error('the server is a standby (read-only): connect again through the address') : undefined);
  }
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
