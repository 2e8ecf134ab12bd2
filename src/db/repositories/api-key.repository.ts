import type { DbOrTrx } from '../database.js';
import { compiledShape } from '../shapes.js';

export interface ApiKeyIdentity {
  /** Row id of this one key: the scope of its idempotency records and rate counters. */
  keyId: string;
  /** The pair's id, shown to operators and written to the logs. */
  pairId: string;
  mode: 'live' | 'test';
  hotelId: string;
  hotelSlug: string;
  /** When the pair's rate-limit counts were last reset (epoch ms), or null: counts before it are forgotten. */
  limitsResetAt: number | null;
}

export interface ApiKeyPairSummary {
  pairId: string;
  createdAt: string;
  revokedAt: string | null;
  liveLastUsedAt: string | null;
  testLastUsedAt: string | null;
}

/** The hotel's key pairs not revoked (each pair has one live row). */
export async function countActiveKeyPairs(db: DbOrTrx, hotelId: string): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('hotel_id', '=', hotelId)
    .where('mode', '=', 'live')
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertKeyPair(db: DbOrTrx, p: { pairId: string; hotelId: string; liveHash: string; testHash: string; now: string }): Promise<void> {
  await db
    .insertInto('api_keys')
    .values([
      {
        id: `${p.pairId}_live`,
        pair_id: p.pairId,
        hotel_id: p.hotelId,
        mode: 'live',
        key_hash: p.liveHash,
        created_at: p.now,
        revoked_at: null,
        last_used_at: null,
      },
      {
        id: `${p.pairId}_test`,
        pair_id: p.pairId,
        hotel_id: p.hotelId,
        mode: 'test',
        key_hash: p.testHash,
        created_at: p.now,
        revoked_at: null,
        last_used_at: null,
      },
    ])
    .execute();
}

/** The unrevoked key with this hash, with its hotel; null when none. */
export async function findActiveKeyByHash(db: DbOrTrx, keyHash: string): Promise<ApiKeyIdentity | null> {
  const [row] = (await db.executeQuery(activeKeyQuery(db, keyHash))).rows;
  if (!row) return null;
  const limitsResetAt = row.rate_limits_reset_at === null ? null : Date.parse(row.rate_limits_reset_at);
  return { keyId: row.id, pairId: row.pair_id, mode: row.mode, hotelId: row.hotel_id, hotelSlug: row.slug, limitsResetAt };
}

/** findActiveKeyByHash's read (every PMS request makes it), compiled once (db/shapes.ts). */
const activeKeyQuery = compiledShape((db: DbOrTrx, keyHash: string) =>
  db
    .selectFrom('api_keys')
    .innerJoin('hotels', 'hotels.id', 'api_keys.hotel_id')
    .select(['api_keys.id', 'api_keys.pair_id', 'api_keys.mode', 'api_keys.hotel_id', 'api_keys.rate_limits_reset_at', 'hotels.slug'])
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.revoked_at', 'is', null),
);

/** Records that the pair's rate-limit counts before `now` no longer count; returns the ids of its keys (none: no such pair). */
export async function markRateLimitsReset(db: DbOrTrx, pairId: string, now: string): Promise<string[]> {
  const rows = await db.updateTable('api_keys').set({ rate_limits_reset_at: now }).where('pair_id', '=', pairId).returning('id').execute();
  return rows.map((r) => r.id);
}

/** Revokes both keys of a pair; returns how many keys were newly revoked. */
export async function revokeKeyPair(db: DbOrTrx, pairId: string, now: string, hotelId?: string): Promise<number> {
  let q = db.updateTable('api_keys').set({ revoked_at: now }).where('pair_id', '=', pairId).where('revoked_at', 'is', null);
  if (hotelId) q = q.where('hotel_id', '=', hotelId);
  const res = await q.executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export async function keyPairExists(db: DbOrTrx, pairId: string): Promise<boolean> {
  const row = await db.selectFrom('api_keys').select('id').where('pair_id', '=', pairId).executeTakeFirst();
  return row !== undefined;
}

/** Records last use (key id → its hotel and the time); called in batches off the request path. */
export async function touchKeys(db: DbOrTrx, lastUsed: Map<string, { hotelId: string; at: string }>): Promise<void> {
  for (const [keyId, { hotelId, at }] of lastUsed) {
    await db.updateTable('api_keys').set({ last_used_at: at }).where('hotel_id', '=', hotelId).where('id', '=', keyId).execute();
  }
}

export async function listKeyPairs(db: DbOrTrx, hotelId: string): Promise<ApiKeyPairSummary[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(['pair_id', 'mode', 'created_at', 'revoked_at', 'last_used_at'])
    .where('hotel_id', '=', hotelId)
    .orderBy('created_at', 'desc')
    .execute();
  const pairs = new Map<string, ApiKeyPairSummary>();
  for (const r of rows) {
    const p = pairs.get(r.pair_id) ?? { pairId: r.pair_id, createdAt: r.created_at, revokedAt: r.revoked_at, liveLastUsedAt: null, testLastUsedAt: null };
    if (r.mode === 'live') p.liveLastUsedAt = r.last_used_at;
    else p.testLastUsedAt = r.last_used_at;
    pairs.set(r.pair_id, p);
  }
  return [...pairs.values()];
}
