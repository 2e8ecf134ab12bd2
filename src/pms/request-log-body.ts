// What a request-log row keeps of a request's bodies (README.md, Personal data;
// docs/pms-interface.md, "Request and activity logs"): pure functions, no I/O.
// pms/hooks/request-log.ts builds each row's body columns here; the dashboard's request
// explorer reads them back with readStoredBody().
//
// - A body is stored as sent up to BODY_CAP_BYTES (64 KiB of UTF-8). A longer one keeps
//   its first part, cut on a character boundary (at most 64 KiB), followed by the marker
//   `\n…[cut: <full size> bytes in all, sha256 <hex of the whole body>]`. When the cut falls
//   directly inside an object that names no guest (a roster's guest whose `pmsGuestId`
//   comes after the cut), and no object around it names one, the first part ends before
//   that object: erasure finds a body's guests by the ids it names
//   (pms/request-log-guests.ts), so a name kept without its id could never be erased.
// - A 200 answer of GET /guests is stored as `{"count":n,"ids":["guest_…",…]}`: the
//   roster's count and each guest's `guestId` (in the roster's order), never the roster;
//   the cap then applies to this digest.
// - A request not attributed to a hotel (no valid key: 401, unknown path, 405, 429 by
//   IP, plain HTTP…) keeps no body, only the sizes.
// - `request_bytes` / `response_bytes` always hold the full size of the body as sent or
//   answered (null: no body).

import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants as zlibConstants } from 'node:zlib';
import { namesAGuest, objectSpans, ownText } from './request-log-guests.js';

/** The most bytes of a body a row keeps (docs/pms-interface.md, "Request and activity logs": 64 KiB). */
export const BODY_CAP_BYTES = 64 * 1024;

/** The route whose 200 answers are stored as a digest (PMS_PREFIX + '/guests'). */
const ROSTER_ROUTE = '/api/pms/v1/:slug/guests';

/** Names the digest a stored GET /guests answer is (the dashboard's `responseDigest`). */
export const ROSTER_DIGEST = 'count-and-ids';

const MARKER = /\n…\[cut: (\d+) bytes in all, sha256 ([0-9a-f]{64})\]$/;

/** What logResponse knows of a finished request. */
export interface LoggedExchange {
  /** The request was authenticated by a key of a hotel (req.auth set). */
  attributed: boolean;
  /** The route pattern that answered (req.routeOptions.url), if any. */
  route: string | undefined;
  statusCode: number;
  /** The request body as read (the whole of it, or what was read before a refusal); null if none was read. */
  requestBody: string | null;
  /** The SHA-256 of the whole request body's bytes, when the parser took it as they arrived (http/json-body.ts); else null. */
  requestSha256: string | null;
  /** The Content-Length header as sent, if any. */
  contentLength: string | string[] | undefined;
  /** The response body as answered; null if none. */
  responseBody: string | null;
  /** Its size in bytes and SHA-256, when they were taken as it was sent in pieces; else null. */
  responseDigest: { bytes: number; sha256: string } | null;
}

/** What a request-log row keeps of the bodies. */
export interface LoggedBodies {
  requestBody: string | null;
  responseBody: string | null;
  requestBytes: number | null;
  responseBytes: number | null;
}

/** The body columns of a request-log row for this exchange. */
export function loggedBodies(x: LoggedExchange): LoggedBodies {
  const requestBytes = requestSize(x.requestBody, x.contentLength);
  const responseBytes = x.responseBody === null ? null : (x.responseDigest?.bytes ?? Buffer.byteLength(x.responseBody, 'utf8'));
  if (!x.attributed) return { requestBody: null, responseBody: null, requestBytes, responseBytes };
  let response = x.responseBody;
  let digest = x.responseDigest;
  if (response !== null && x.route === ROSTER_ROUTE && x.statusCode === 200) {
    response = rosterDigest(response);
    digest = null;
  }
  return {
    requestBody: x.requestBody === null ? null : capBody(x.requestBody, x.requestSha256),
    responseBody: response === null ? null : capBody(response, digest?.sha256 ?? null, digest?.bytes ?? null),
    requestBytes,
    responseBytes,
  };
}

/**
 * The full size of the request body: its Content-Length as declared (also when the body
 * was refused before it was read, or read only in part), else the bytes read; null when
 * there was no body.
 */
function requestSize(body: string | null, contentLength: string | string[] | undefined): number | null {
  const declared = Array.isArray(contentLength) ? contentLength[0] : contentLength;
  if (declared !== undefined && /^\s*\d{1,15}\s*$/.test(declared)) return Number(declared);
  return body === null ? null : Buffer.byteLength(body, 'utf8');
}

/**
 * `text` as stored: whole up to BODY_CAP_BYTES, else its first part, the marker, the full
 * size and the SHA-256 (`sha256` and `bytes` when the caller has them: taken as the bytes
 * arrived or left).
 */
export function capBody(text: string, sha256: string | null = null, bytes: number | null = null): string {
  // A string of n UTF-16 units takes at most 3n bytes: most bodies need no encoding at all.
  if (text.length * 3 <= BODY_CAP_BYTES) return text;
  const size = bytes ?? Buffer.byteLength(text, 'utf8');
  if (size <= BODY_CAP_BYTES) return text;
  // Only the kept part is encoded here (its first BODY_CAP_BYTES + 1 UTF-16 units take more
  // than BODY_CAP_BYTES bytes, the same ones as in the whole text's encoding); the hash
  // encodes the whole text itself: a 4 MB sync body is not copied into a buffer of its own.
  const kept = Buffer.from(text.slice(0, BODY_CAP_BYTES + 1), 'utf8');
  // Back off to the first byte of the character that would be cut (10xxxxxx continues one).
  let end = BODY_CAP_BYTES;
  while (end > 0 && ((kept[end] ?? 0) & 0xc0) === 0x80) end--;
  const whole = sha256 ?? createHash('sha256').update(text, 'utf8').digest('hex');
  return `${withoutUnnamedTail(kept.subarray(0, end).toString('utf8'))}\n…[cut: ${size} bytes in all, sha256 ${whole}]`;
}

/**
 * The first part of a cut body, ending before the object the cut fell in when neither it
 * nor an object around it names a guest: nothing is kept that erasure could not find.
 */
function withoutUnnamedTail(head: string): string {
  const spans = objectSpans(head);
  const tail = spans.find((s) => s.tail);
  if (!tail) return head;
  for (let s: (typeof spans)[number] | undefined = tail; s !== undefined; s = spans[s.parent]) if (namesAGuest(ownText(head, s))) return head;
  return head.slice(0, tail.start);
}

/**
 * A GET /guests answer (`{guests: [...], count, requestId}`) as `{"count":n,"ids":[...]}`:
 * the count and each guest's `guestId`, the roster's own key for the stay, which the
 * guests table maps to its pmsGuestId (and erasure and export search by). The pmsGuestId
 * is not kept: it is the PMS's identifier, chosen by the client, and may carry personal
 * data. An answer that is not such a document is kept as it is (then capped).
 */
function rosterDigest(response: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(response);
  } catch {
    return response;
  }
  if (parsed === null || typeof parsed !== 'object' || !Array.isArray((parsed as { guests?: unknown }).guests)) return response;
  const { guests, count } = parsed as { guests: unknown[]; count?: unknown };
  const ids = guests.map((g) =>
    g !== null && typeof g === 'object' && typeof (g as { guestId?: unknown }).guestId === 'string' ? (g as { guestId: string }).guestId : null,
  );
  return JSON.stringify({ count: typeof count === 'number' ? count : guests.length, ids });
}

/** A stored body read back: whether it was cut, and if so the full size and SHA-256 its marker gives. */
export interface StoredBody {
  cut: { bytes: number; sha256: string } | null;
}

/** Reads the cut marker at the end of a stored body, if there is one. */
export function readStoredBody(stored: string | null): StoredBody {
  const m = stored === null ? null : MARKER.exec(stored);
  return { cut: m ? { bytes: Number(m[1]), sha256: m[2] ?? '' } : null };
}

/** A stored text split into the body kept and its cut marker ('' when it was not cut). */
export function splitCutMarker(stored: string): { kept: string; marker: string } {
  const m = MARKER.exec(stored);
  return m ? { kept: stored.slice(0, m.index), marker: m[0] } : { kept: stored, marker: '' };
}

/** Says whether a stored text is a GET /guests digest (`{"count":n,"ids":[…]}`, perhaps cut). */
export function isDigestText(stored: string): boolean {
  return /^\{"count":\d+,"ids":\[/.test(stored);
}

/** Says whether a stored response body is a GET /guests digest (not the answer as sent). */
export function isRosterDigest(row: { method: string; path: string; status_code: number; response_body: string | null }): boolean {
  return (
    (row.method === 'GET' || row.method === 'HEAD') &&
    Number(row.status_code) === 200 &&
    /^\/api\/pms\/v1\/[^/?]+\/guests(\?|$)/.test(row.path) &&
    row.response_body !== null &&
    row.response_body.startsWith('{"count":')
  );
}

// ---------------------------------------------------------------- storage of a body
//
// A row does not hold its bodies: it names each by the SHA-256 of its stored text (the
// body as sent, or its capped form above), and the text lives once per hotel in
// request_log_bodies, brotli-compressed (docs/architecture.md, "Request log storage"). A PMS that
// sends the same roster every 5 minutes costs a row of metadata per sync, not a body.

/** Brotli at quality 5: ~10-11x on full-roster syncs at ~1 ms per 64 KiB; quality 9 gains ~10% for ~100x the time. */
const BROTLI_QUALITY = 5;

/** A stored text as the bodies table keeps it. */
export interface PackedBody {
  /** SHA-256 (hex) of the text's UTF-8 bytes: the body's address. */
  sha256: string;
  /** Size in bytes of the text (uncompressed). */
  bytes: number;
  /** The text's UTF-8 bytes, brotli-compressed. */
  data: Buffer;
}

/** The address of a stored text: SHA-256 of its UTF-8 bytes. */
export function bodyAddress(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Compresses a stored text for the bodies table. */
export function packBody(text: string): PackedBody {
  const raw = Buffer.from(text, 'utf8');
  const data = brotliCompressSync(raw, {
    params: {
      [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
      // A window no larger than the text (at least brotli's 1 KiB): the same size for a
      // capped body, and a 200-byte check-in compressed in about half the time (the
      // encoder no longer sets up a 4 MiB window for it).
      [zlibConstants.BROTLI_PARAM_LGWIN]: Math.min(24, Math.max(10, Math.ceil(Math.log2(raw.length + 1)))),
    },
  });
  return { sha256: createHash('sha256').update(raw).digest('hex'), bytes: raw.length, data };
}

/** The text of a packed body, exactly as it was stored. */
export function unpackBody(data: Uint8Array): string {
  return brotliDecompressSync(data).toString('utf8');
}
