import { createHash, createHmac, randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

// A request makes several ids; one call into the CSPRNG per id costs more than the id.
// Ids take their bytes from a buffer refilled by the same CSPRNG (as crypto.randomUUID
// does); every byte is used once.
const POOL_SIZE = 4096;
const pool = Buffer.alloc(POOL_SIZE);
let poolOffset = POOL_SIZE;

/** A random id of `length` base-36 characters (about 5.2 bits each). */
export function randomId(length = 20): string {
  let bytes: Buffer;
  let at: number;
  if (length > POOL_SIZE) {
    bytes = randomFillSync(Buffer.alloc(length));
    at = 0;
  } else {
    if (poolOffset + length > POOL_SIZE) {
      randomFillSync(pool);
      poolOffset = 0;
    }
    bytes = pool;
    at = poolOffset;
    poolOffset += length;
  }
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[(bytes[at + i] ?? 0) % 36];
  return out;
}

/** Characters of an id's time part: milliseconds since 1970 in base 36, enough until the year 5138. */
const TIME_CHARS = 9;

/**
 * A new row's id: `prefix_`, the time in milliseconds (TIME_CHARS base-36 characters, so
 * ids sort by when they were made), then `randomLength` random characters (16: about 82
 * bits, unguessable). Ids made one after another land side by side at the right edge of
 * their table's and indexes' B-trees, so a write dirties the same few pages as the writes
 * just before it instead of a page anywhere in the index (docs/architecture.md,
 * "Identifiers").
 */
export function newId(prefix: string, randomLength = 16): string {
  return `${prefix}_${Date.now().toString(36).padStart(TIME_CHARS, '0')}${randomId(randomLength)}`;
}

/**
 * An id of newId's form made from `value` rather than chance: HMAC-SHA-256 keyed with
 * `scope`, its first `length` bytes in base 36. The same scope and value give the same id
 * (a test key's fake guestId for one pmsGuestId, pms/modes.ts); another scope another one.
 */
export function derivedId(prefix: string, scope: string, value: string, length = 20): string {
  const bytes = createHmac('sha256', scope).update(value).digest();
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[(bytes[i % bytes.length] ?? 0) % 36];
  return `${prefix}_${out}`;
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
