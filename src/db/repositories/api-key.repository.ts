import type { DbOrTrx } from '../database.js';
import { compiledShape } from '../shapes.js';
import type { KeyRestrictions } from '../../keys/restrictions.js';

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
  /** What the pair may do (keys/restrictions.ts). */
  restrictions: KeyRestrictions;
}

export interface ApiKeyPairSummary {
  pairId: string;
  createdAt: string;
  revokedAt: string | null;
  liveLastUsedAt: string | null;
  testLastUsedAt: string | null;
  restrictions: KeyRestrictions;
}

/** The restriction columns of a row as the pair's restrictions. */
function restrictionsOf(row: { allowed_networks: string | null; expires_on: string | null; read_only: number }): KeyRestrictions {
  return {
    networks: row.allowed_networks === null ? null : (JSON.parse(row.allowed_networks) as string[]),
    expiresOn: row.expires_on,
    readOnly: Number(row.read_only) === 1,
  };
}

/** The restrictions as their columns; only the members given. */
function restrictionColumns(r: Partial<KeyRestrictions>) {
  return {
    ...(r.networks !== undefined ? { allowed_networks: r.networks === null ? null : JSON.stringify(r.networks) } : {}),
    ...(r.expiresOn !== undefined ? { expires_on: r.expiresOn } : {}),
    ...(r.readOnly !== undefined ? { read_only: r.readOnly ? 1 : 0 } : {}),
  };
}

const RESTRICTION_COLUMNS = ['api_keys.allowed_networks', 'api_keys.expires_on', 'api_keys.read_only'] as const;

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

export async function insertKeyPair(
  db: DbOrTrx,
  p: { pairId: string; hotelId: string; liveHash: string; testHash: string; now: string; restrictions: KeyRestrictions },
): Promise<void> {
  const row = (mode: 'live' | 'test', hash: string) => ({
    id: `${p.pairId}_${mode}`,
    pair_id: p.pairId,
    hotel_id: p.hotelId,
    mode,
    key_hash: hash,
    created_at: p.now,
    revoked_at: null,
    last_used_at: null,
    ...restrictionColumns(p.restrictions),
  });
  await db
    .insertInto('api_keys')
    .values([row('live', p.liveHash), row('test', p.testHash)])
    .execute();
}

/** Sets what both keys of the pair may do; only the members given. */
export async function updateKeyPairRestrictions(db: DbOrTrx, hotelId: string, pairId: string, changes: Partial<KeyRestrictions>): Promise<void> {
  const set = restrictionColumns(changes);
  if (Object.keys(set).length === 0) return;
  await db.updateTable('api_keys').set(set).where('hotel_id', '=', hotelId).where('pair_id', '=', pairId).execute();
}

/** One pair's hotel, revocation and restrictions (its live row), or null when no such pair (of this hotel, when given). */
export async function findKeyPair(
  db: DbOrTrx,
  pairId: string,
  hotelId?: string,
): Promise<{ hotelId: string; revokedAt: string | null; restrictions: KeyRestrictions } | null> {
  let q = db
    .selectFrom('api_keys')
    .select(['api_keys.hotel_id', 'api_keys.revoked_at', ...RESTRICTION_COLUMNS])
    .where('pair_id', '=', pairId)
    .where('mode', '=', 'live');
  if (hotelId) q = q.where('hotel_id', '=', hotelId);
  const row = await q.executeTakeFirst();
  return row ? { hotelId: row.hotel_id, revokedAt: row.revoked_at, restrictions: restrictionsOf(row) } : null;
}

/** The unrevoked key with this hash, with its hotel; null when none. */
export async function findActiveKeyByHash(db: DbOrTrx, keyHash: string): Promise<ApiKeyIdentity | null> {
  const [row] = (await db.executeQuery(activeKeyQuery(db, keyHash))).rows;
  if (!row) return null;
  const limitsResetAt = row.rate_limits_reset_at === null ? null : Date.parse(row.rate_limits_reset_at);
  return { keyId: row.id, pairId: row.pair_id, mode: row.mode, hotelId: row.hotel_id, hotelSlug: row.slug, limitsResetAt, restrictions: restrictionsOf(row) };
}

/** findActiveKeyByHash's read (every PMS request makes it), compiled once (db/shapes.ts). */
const activeKeyQuery = compiledShape((db: DbOrTrx, keyHash: string) =>
  db
    .selectFrom('api_keys')
    .innerJoin('hotels', 'hotels.id', 'api_keys.hotel_id')
    .select(['api_keys.id', 'api_keys.pair_id', 'api_keys.mode', 'api_keys.hotel_id', 'api_keys.rate_limits_reset_at', 'hotels.slug', ...RESTRICTION_COLUMNS])
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

/** Records last use (key id → its hotel and the time); called in batches off the request path. */
export async function touchKeys(db: DbOrTrx, lastUsed: Map<string, { hotelId: string; at: string }>): Promise<void> {
  for (const [keyId, { hotelId, at }] of lastUsed) {
    await db.updateTable('api_keys').set({ last_used_at: at }).where('hotel_id', '=', hotelId).where('id', '=', keyId).execute();
  }
}

export async function listKeyPairs(db: DbOrTrx, hotelId: string): Promise<ApiKeyPairSummary[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select(['pair_id', 'mode', 'created_at', 'revoked_at', 'last_used_at', ...RESTRICTION_COLUMNS])
    .where('hotel_id', '=', hotelId)
    .orderBy('created_at', 'desc')
    .execute();
  const pairs = new Map<string, ApiKeyPairSummary>();
  for (const r of rows) {
    const p = pairs.get(r.pair_id) ?? {
      pairId: r.pair_id,
      createdAt: r.created_at,
      revokedAt: r.revoked_at,
      liveLastUsedAt: null,
      testLastUsedAt: null,
      restrictions: restrictionsOf(r),
    };
    if (r.mode === 'live') p.liveLastUsedAt = r.last_used_at;
    else p.testLastUsedAt = r.last_used_at;
    pairs.set(r.pair_id, p);
  }
  return [...pairs.values()];
}
