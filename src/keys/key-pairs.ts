import type { Db, DbOrTrx } from '../db/database.js';
import {
  countActiveKeyPairs,
  findKeyPair,
  insertKeyPair,
  listKeyPairs,
  revokeKeyPair,
  updateKeyPairRestrictions,
} from '../db/repositories/api-key.repository.js';
import { lockHotel } from '../db/repositories/hotel.repository.js';
import { insertSecurityEvent, type ChangedBy, type SecurityEvent } from '../db/repositories/security.repository.js';
import { newId, sha256Hex } from '../domain/ids.js';
import { ApiError } from '../errors.js';
import { newPlainKey } from './key-format.js';
import type { KeyRestrictions, RestrictionChanges } from './restrictions.js';

// A hotel's key pairs, the same use cases for the command line and the dashboard's Keys
// page. Each change writes its security entry (docs/dashboard.md, "Keys: what a pair may do") in its
// own transaction.

export interface KeyPairView extends KeyRestrictions {
  keyId: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/**
 * A hotel's API key pairs as `innsync key list` and the dashboard's Keys page show them,
 * newest first: never a key, one last use for both keys of a pair, and what the pair may do.
 */
export async function keyPairViews(db: DbOrTrx, hotelId: string): Promise<KeyPairView[]> {
  const pairs = await listKeyPairs(db, hotelId);
  return pairs.map((p) => ({ keyId: p.pairId, createdAt: p.createdAt, revokedAt: p.revokedAt, lastUsedAt: lastUse(p), ...p.restrictions }));
}

/** The later of the pair's two keys' last uses. */
function lastUse(p: { liveLastUsedAt: string | null; testLastUsedAt: string | null }): string | null {
  return (
    [p.liveLastUsedAt, p.testLastUsedAt]
      .filter((x): x is string => x !== null)
      .sort()
      .pop() ?? null
  );
}

const securityEvent = (by: ChangedBy, hotelId: string, pairId: string, kind: SecurityEvent['kind'], detail: Record<string, unknown> | null): SecurityEvent => ({
  hotelId,
  kind,
  actor: by.actor,
  subjectKeyPairId: pairId,
  clientIp: by.clientIp,
  detail,
});

/**
 * Issues a live/test pair with its restrictions (checked: restrictions.ts); the plain keys
 * exist only in the return value (stored as SHA-256). `maxActive` (MAX_KEY_PAIRS_PER_HOTEL):
 * a hotel that already holds that many active pairs gets 409 KEY_PAIR_LIMIT. They are
 * counted in the transaction that inserts, under the hotel's lock (SQLite: one writer at a
 * time), so two issues at once cannot both take the last place.
 */
export async function issuePair(
  db: Db,
  hotelId: string,
  o: { maxActive?: number; restrictions: KeyRestrictions; by: ChangedBy },
): Promise<{ keyId: string; live: string; test: string }> {
  const keyId = newId('key');
  const live = newPlainKey('live');
  const test = newPlainKey('test');
  await db.transaction().execute(async (trx) => {
    if (o.maxActive !== undefined) {
      await lockHotel(trx, hotelId, 'exclusive');
      const active = await countActiveKeyPairs(trx, hotelId);
      if (active >= o.maxActive) throw new ApiError('KEY_PAIR_LIMIT', { extra: { limit: o.maxActive } });
    }
    await insertKeyPair(trx, {
      pairId: keyId,
      hotelId,
      liveHash: sha256Hex(live),
      testHash: sha256Hex(test),
      now: new Date().toISOString(),
      restrictions: o.restrictions,
    });
    await insertSecurityEvent(trx, securityEvent(o.by, hotelId, keyId, 'key.issued', { ...o.restrictions }));
  });
  return { keyId, live, test };
}

/** Revokes both keys of the pair (of this hotel, when given); false when no such pair. Revoking twice writes one entry. */
export async function revokePair(db: Db, pairId: string, by: ChangedBy, hotelId?: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const pair = await findKeyPair(trx, pairId, hotelId);
    if (!pair) return false;
    const revoked = await revokeKeyPair(trx, pairId, new Date().toISOString(), pair.hotelId);
    if (revoked > 0) await insertSecurityEvent(trx, securityEvent(by, pair.hotelId, pairId, 'key.revoked', null));
    return true;
  });
}

/**
 * Changes what an active pair (of this hotel, when given) may do, with the changes
 * checked (restrictions.ts); its restrictions after, or null when there is no such active
 * pair. The entry holds the values before and after; a change to the values the pair has
 * writes none.
 */
export async function changePair(db: Db, pairId: string, changes: RestrictionChanges, by: ChangedBy, hotelId?: string): Promise<KeyRestrictions | null> {
  return db.transaction().execute(async (trx) => {
    const pair = await findKeyPair(trx, pairId, hotelId);
    if (!pair || pair.revokedAt !== null) return null;
    const after: KeyRestrictions = { ...pair.restrictions, ...changes };
    // Nothing new (a change to the values it has): no write and no entry.
    if (JSON.stringify(after) === JSON.stringify(pair.restrictions)) return after;
    await updateKeyPairRestrictions(trx, pair.hotelId, pairId, changes);
    await insertSecurityEvent(trx, securityEvent(by, pair.hotelId, pairId, 'key.changed', { before: pair.restrictions, after }));
    return after;
  });
}
