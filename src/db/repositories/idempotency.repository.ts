import type { Selectable } from 'kysely';
import type { DbOrTrx } from '../database.js';
import type { IdempotencyRecordTable } from '../schema.js';

export type IdempotencyRow = Selectable<IdempotencyRecordTable>;

/** Inserts an in-progress record; throws the unique violation when the key has a record. */
export async function insertInProgress(
  db: DbOrTrx,
  r: { apiKeyId: string; key: string; fingerprint: string; token: string; now: string; expiresAt: string },
): Promise<void> {
  await db
    .insertInto('idempotency_records')
    .values({
      api_key_id: r.apiKeyId,
      idempotency_key: r.key,
      fingerprint: r.fingerprint,
      state: 'in_progress',
      claim_token: r.token,
      status_code: null,
      response_body: null,
      created_at: r.now,
      expires_at: r.expiresAt,
    })
    .execute();
}

export async function findRecord(db: DbOrTrx, apiKeyId: string, key: string): Promise<IdempotencyRow | null> {
  const row = await db
    .selectFrom('idempotency_records')
    .selectAll()
    .where('api_key_id', '=', apiKeyId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
  return row ?? null;
}

/**
 * Takes over a stale or expired record, only if it is still the one the caller read
 * (compare-and-set on the claim token). True when the caller now holds the key.
 */
export async function takeOverRecord(
  db: DbOrTrx,
  r: { apiKeyId: string; key: string; expectedToken: string; fingerprint: string; token: string; now: string; expiresAt: string },
): Promise<boolean> {
  const res = await db
    .updateTable('idempotency_records')
    .set({ fingerprint: r.fingerprint, state: 'in_progress', claim_token: r.token, status_code: null, response_body: null, created_at: r.now, expires_at: r.expiresAt })
    .where('api_key_id', '=', r.apiKeyId)
    .where('idempotency_key', '=', r.key)
    .where('claim_token', '=', r.expectedToken)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Stores the response; true when the caller still held the claim. Runs in the change's transaction. */
export async function completeRecord(
  trx: DbOrTrx,
  r: { apiKeyId: string; key: string; token: string; statusCode: number; body: string; now: string; expiresAt: string },
): Promise<boolean> {
  const res = await trx
    .updateTable('idempotency_records')
    .set({ state: 'done', status_code: r.statusCode, response_body: r.body, created_at: r.now, expires_at: r.expiresAt })
    .where('api_key_id', '=', r.apiKeyId)
    .where('idempotency_key', '=', r.key)
    .where('claim_token', '=', r.token)
    .where('state', '=', 'in_progress')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Frees the key after a non-2xx answer (spec 7: a 4xx does not consume the key). */
export async function deleteInProgress(db: DbOrTrx, apiKeyId: string, key: string, token: string): Promise<void> {
  await db
    .deleteFrom('idempotency_records')
    .where('api_key_id', '=', apiKeyId)
    .where('idempotency_key', '=', key)
    .where('claim_token', '=', token)
    .where('state', '=', 'in_progress')
    .execute();
}

/** Deletes records past their lifetime; returns how many. */
export async function purgeExpired(db: DbOrTrx, now: string): Promise<number> {
  const res = await db.deleteFrom('idempotency_records').where('expires_at', '<', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}
