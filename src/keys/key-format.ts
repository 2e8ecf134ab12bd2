import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

// README.md, "The API": a key is `pms_live_` or `pms_test_`, 32
// random base62 characters, then the base62 CRC32 of everything before it in 6
// characters, so a scanner tells a real key from a random string offline.

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;

/** The shape of every key issued now; the README gives the same expression to secret scanners. */
const KEY_PATTERN = /^pms_(?:live|test)_[0-9A-Za-z]{38}$/;

/** `n` as base62, left-padded with 0 to `width` characters. */
function base62(n: number, width: number): string {
  let out = '';
  for (let rest = n; rest > 0; rest = Math.floor(rest / 62)) out = BASE62[rest % 62] + out;
  return out.padStart(width, '0');
}

/** The 6-character checksum of a key's text before it. */
function checksum(body: string): string {
  return base62(crc32(body), CHECKSUM_LENGTH);
}

/** 32 base62 characters, each uniform (bytes of 248 and above are drawn again: 248 = 4 × 62). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** `prefix`, 32 random base62 characters and the checksum of both. */
function checksummed(prefix: string): string {
  const body = `${prefix}${randomBase62(RANDOM_LENGTH)}`;
  return body + checksum(body);
}

/** A new plain key of this mode, checksummed. */
export function newPlainKey(mode: 'live' | 'test'): string {
  return checksummed(`pms_${mode}_`);
}

/** docs/admin-api.md, "Operator tokens": `op_`, 32 base62 characters and the same checksum as a key's. */
const OPERATOR_TOKEN_PATTERN = /^op_[0-9A-Za-z]{38}$/;

/** A new operator token (shown once; stored as its SHA-256). */
export function newOperatorToken(): string {
  return checksummed('op_');
}

/** True when `token` has the operator token's shape and its checksum holds: anything else is refused without a lookup. */
export function operatorTokenChecksumHolds(token: string): boolean {
  return OPERATOR_TOKEN_PATTERN.test(token) && tailHolds(token);
}

/** The last CHECKSUM_LENGTH characters are the checksum of the rest. */
function tailHolds(key: string): boolean {
  const cut = key.length - CHECKSUM_LENGTH;
  return checksum(key.slice(0, cut)) === key.slice(cut);
}

/**
 * False only for a key of the new shape whose checksum does not match: such a key cannot
 * have been issued, so it is refused without a database lookup. Keys of the earlier shape
 * (32 base64url characters) and anything else are left to the lookup.
 */
export function checksumHolds(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return true;
  return tailHolds(key);
}
