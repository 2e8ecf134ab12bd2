import { sql } from 'kysely';
import { writeLater, type DbOrTrx } from '../database.js';
import { deleteInBatches, PURGE_BATCH_ROWS } from '../batches.js';
import { compiledShape } from '../shapes.js';

/**
 * Inserts the record of (API key, key) inside the caller's transaction, or takes over a
 * record past its lifetime. False when a live record exists: the caller reads it.
 *
 * The primary key holds "one record per key": on PostgreSQL a concurrent insert of the
 * same key waits here until the other transaction ends (a commit: false; a rollback: the
 * insert goes ahead), at most lock_timeout. Runs inside the change's transaction, so the
 * record commits with the change or not at all.
 */
export async function insertRecord(trx: DbOrTrx, r: { apiKeyId: string; key: string; fingerprint: string; now: string; expiresAt: string }): Promise<boolean> {
  const { rows } = await trx.executeQuery(claimQuery(trx, r.apiKeyId, r.key, r.fingerprint, r.now, r.expiresAt));
  return rows.length > 0;
}

/** insertRecord's statement, compiled once (db/shapes.ts). */
const claimQuery = compiledShape((trx: DbOrTrx, apiKeyId: string, key: string, fingerprint: string, now: string, expiresAt: string) =>
  trx
    .insertInto('idempotency_records')
    .values({
      api_key_id: apiKeyId,
      idempotency_key: key,
      fingerprint,
      status_code: null,
      response_body: null,
      created_at: now,
      expires_at: expiresAt,
    })
    .onConflict((oc) =>
      oc
        .columns(['api_key_id', 'idempotency_key'])
        .doUpdateSet({ fingerprint, status_code: null, response_body: null, created_at: now, expires_at: expiresAt })
        .where('idempotency_records.expires_at', '<=', now),
    )
    .returning('api_key_id'),
);

/** A committed record as the code above the repository reads it; `response` null only inside the transaction that inserted it. */
export interface IdempotencyRecord {
  fingerprint: string;
  statusCode: number | null;
  response: string | null;
}

export async function findRecord(db: DbOrTrx, apiKeyId: string, key: string): Promise<IdempotencyRecord | null> {
  const row = await db
    .selectFrom('idempotency_records')
    .select(['fingerprint', 'status_code', 'response_body'])
    .where('api_key_id', '=', apiKeyId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row ? { fingerprint: row.fingerprint, statusCode: row.status_code === null ? null : Number(row.status_code), response: row.response_body } : null;
}

/** Stores the response on the record this transaction inserted (on PostgreSQL sent with the COMMIT: writeLater). */
export async function storeResponse(
  trx: DbOrTrx,
  r: { apiKeyId: string; key: string; statusCode: number; body: string; now: string; expiresAt: string },
): Promise<void> {
  await writeLater(trx, storeResponseQuery(trx, r.statusCode, r.body, r.now, r.expiresAt, r.apiKeyId, r.key));
}

/** storeResponse's statement, compiled once (db/shapes.ts). */
const storeResponseQuery = compiledShape((trx: DbOrTrx, statusCode: number, body: string, now: string, expiresAt: string, apiKeyId: string, key: string) =>
  trx
    .updateTable('idempotency_records')
    .set({ status_code: statusCode, response_body: body, created_at: now, expires_at: expiresAt })
    .where('api_key_id', '=', apiKeyId)
    .where('idempotency_key', '=', key),
);

/** Deletes records past their lifetime; returns how many. */
export async function purgeExpired(db: DbOrTrx, now: string, batchRows = PURGE_BATCH_ROWS): Promise<number> {
  // In batches (db/batches.ts): a day of a fleet's answers expires every day.
  return deleteInBatches(async (limit) => {
    const res = await sql`delete from idempotency_records where (api_key_id, idempotency_key) in
      (select api_key_id, idempotency_key from idempotency_records where expires_at < ${now} order by expires_at limit ${limit})`.execute(db);
    return Number(res.numAffectedRows ?? 0);
  }, batchRows);
}
