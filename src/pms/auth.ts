import type { Db } from '../db/database.js';
import { findActiveKeyByHash, type ApiKeyIdentity } from '../db/repositories/api-key.repository.js';
import { sha256Hex } from '../domain/ids.js';
import { checksumHolds } from '../keys/key-format.js';
import { hasExpired } from '../keys/restrictions.js';

// RFC 9110 11.1: the scheme name is case-insensitive; the key itself is compared by hash.
const BEARER = /^bearer +(pms_(?:live|test)_[A-Za-z0-9_-]{16,128})$/i;

/**
 * docs/pms-interface.md, "Keys and authentication": Bearer key → its checksum (a key of
 * the checksummed shape that fails it is refused before the key is looked up) → SHA-256 →
 * the key's hotel must be the slug's hotel; revoked and expired keys refused. Null for
 * every failure: the caller answers one identical 401.
 */
export async function authenticate(db: Db, authorization: string | undefined, slug: string): Promise<ApiKeyIdentity | null> {
  if (!authorization) return null;
  const m = BEARER.exec(authorization.trim());
  if (!m?.[1] || !checksumHolds(m[1])) return null;
  const identity = await findActiveKeyByHash(db, sha256Hex(m[1]));
  if (!identity || identity.hotelSlug !== slug || hasExpired(identity.restrictions.expiresOn)) return null;
  return identity;
}
