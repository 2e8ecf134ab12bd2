import type { DbOrTrx } from '../db/database.js';
import { listKeyPairs } from '../db/repositories/api-key.repository.js';

/**
 * A hotel's API key pairs as `innsync key list` and the dashboard's Keys page show them,
 * newest first: never a key, and one last use for both keys of a pair.
 */
export async function keyPairViews(
  db: DbOrTrx,
  hotelId: string,
): Promise<Array<{ keyId: string; createdAt: string; revokedAt: string | null; lastUsedAt: string | null }>> {
  const pairs = await listKeyPairs(db, hotelId);
  return pairs.map((p) => ({ keyId: p.pairId, createdAt: p.createdAt, revokedAt: p.revokedAt, lastUsedAt: lastUse(p) }));
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
