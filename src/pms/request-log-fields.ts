// What a request-log row keeps of the text a client chooses besides the bodies (README.md,
// "Logs"; docs/dashboard.md, request explorer): pure functions, no I/O.
//
// - The path and the query string are kept up to FIELD_CAP_BYTES each, the User-Agent and
//   the Idempotency-Key header up to FIELD_CAP_BYTES, the slug up to SLUG_CAP_BYTES. A
//   longer one keeps its beginning (cut on a character boundary) followed by `…`, and its
//   column `<field>_bytes` holds the full size in bytes as sent (null: stored whole).
// - Without this, one request without a key could leave some 60 KB of its own text (a
//   19 KB query, User-Agent and Idempotency-Key) in a row kept 90 days.

/** The most bytes of a path, of a query string, of a User-Agent or of an idempotency key a row keeps. */
const FIELD_CAP_BYTES = 256;

/** A slug is at most 63 characters (domain/accounts.ts): a longer one names no hotel. */
export const SLUG_CAP_BYTES = 64;

/** Appended to a field that was cut: no slug, key or path of the service's own contains it. */
const CUT_MARK = '…';

/** A field as stored, and its full size in bytes when it was cut (null: stored whole). */
export interface CappedText {
  text: string;
  bytes: number | null;
}

/** `text` whole up to `max` bytes of UTF-8, else its first part (at most `max` bytes, a character never split) and `…`. */
function capText(text: string, max = FIELD_CAP_BYTES): CappedText {
  // A string of n UTF-16 units takes at most 3n bytes: most fields need no encoding at all.
  if (text.length * 3 <= max) return { text, bytes: null };
  const size = Buffer.byteLength(text, 'utf8');
  if (size <= max) return { text, bytes: null };
  const bytes = Buffer.from(text, 'utf8');
  // Back off to the first byte of the character that would be cut (10xxxxxx continues one).
  let end = max;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: `${bytes.subarray(0, end).toString('utf8')}${CUT_MARK}`, bytes: size };
}

/** A nullable field capped as capText does. */
export function capOptional(text: string | null, max = FIELD_CAP_BYTES): { text: string | null; bytes: number | null } {
  return text === null ? { text: null, bytes: null } : capText(text, max);
}

/**
 * The request target (path and query string) as stored: the path and the query each
 * capped at FIELD_CAP_BYTES; `bytes` is the whole target's size when either was cut.
 * The stored path still starts with the path as sent, so the explorer's endpoint filters
 * (path prefixes) find it.
 */
export function capTarget(url: string): CappedText {
  const q = url.indexOf('?');
  const path = capText(q === -1 ? url : url.slice(0, q));
  const query = q === -1 ? null : capText(url.slice(q + 1));
  if (path.bytes === null && (query?.bytes ?? null) === null) return { text: url, bytes: null };
  return { text: query === null ? path.text : `${path.text}?${query.text}`, bytes: Buffer.byteLength(url, 'utf8') };
}
