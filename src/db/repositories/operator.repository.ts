import { sql } from 'kysely';
import type { DbOrTrx } from '../database.js';
import { deleteInBatches } from '../batches.js';
import { newId } from '../../domain/ids.js';

// The provisioning API's tokens and request log (docs/admin-api.md): tables of the
// service, never of a hotel.

export interface OperatorToken {
  tokenId: string;
  name: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

type TokenRow = { id: string; name: string; created_at: string; revoked_at: string | null; last_used_at: string | null };

const toToken = (r: TokenRow): OperatorToken => ({ tokenId: r.id, name: r.name, createdAt: r.created_at, revokedAt: r.revoked_at, lastUsedAt: r.last_used_at });

export async function insertToken(db: DbOrTrx, name: string, tokenSha256: string, now: string): Promise<string> {
  const id = newId('opt');
  await db.insertInto('operator_tokens').values({ id, name, token_sha256: tokenSha256, created_at: now, revoked_at: null, last_used_at: null }).execute();
  return id;
}

/** Every token, the oldest first. */
export async function listTokens(db: DbOrTrx): Promise<OperatorToken[]> {
  const rows = await db
    .selectFrom('operator_tokens')
    .select(['id', 'name', 'created_at', 'revoked_at', 'last_used_at'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toToken);
}

/** Revokes the token (once: a revoked token keeps its first revocation time); false when no token has this id. */
export async function revokeToken(db: DbOrTrx, id: string, now: string): Promise<boolean> {
  const found = await db.selectFrom('operator_tokens').select('id').where('id', '=', id).executeTakeFirst();
  if (!found) return false;
  await db.updateTable('operator_tokens').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  return true;
}

/** The unrevoked token with this SHA-256, or null. */
export async function findActiveToken(db: DbOrTrx, tokenSha256: string): Promise<OperatorToken | null> {
  const row = await db
    .selectFrom('operator_tokens')
    .select(['id', 'name', 'created_at', 'revoked_at', 'last_used_at'])
    .where('token_sha256', '=', tokenSha256)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row ? toToken(row) : null;
}

export async function markTokenUsed(db: DbOrTrx, id: string, now: string): Promise<void> {
  await db.updateTable('operator_tokens').set({ last_used_at: now }).where('id', '=', id).execute();
}

export interface OperatorRequest {
  at: string;
  tokenId: string | null;
  method: string;
  route: string;
  status: number;
  durationMs: number;
  clientIp: string;
}

export async function insertOperatorRequest(db: DbOrTrx, r: OperatorRequest): Promise<void> {
  await db
    .insertInto('operator_request_log')
    .values({
      id: newId('oreq'),
      at: r.at,
      token_id: r.tokenId,
      method: r.method,
      route: r.route,
      status: r.status,
      duration_ms: r.durationMs,
      client_ip: r.clientIp,
    })
    .execute();
}

/** The latest `limit` requests, the newest first. */
export async function latestOperatorRequests(db: DbOrTrx, limit: number): Promise<OperatorRequest[]> {
  const rows = await db.selectFrom('operator_request_log').selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({
    at: r.at,
    tokenId: r.token_id,
    method: r.method,
    route: r.route,
    status: Number(r.status),
    durationMs: Number(r.duration_ms),
    clientIp: r.client_ip,
  }));
}

/** Deletes the rows older than `before`, a batch at a time (db/batches.ts); returns how many. */
export async function purgeOperatorRequests(db: DbOrTrx, before: string): Promise<number> {
  return deleteInBatches(async (limit) => {
    const res = await sql`delete from operator_request_log where id in
      (select id from operator_request_log where at < ${before} order by at limit ${limit})`.execute(db);
    return Number(res.numAffectedRows ?? 0);
  });
}
