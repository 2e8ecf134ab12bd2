import type { Selectable } from 'kysely';
import type { DbOrTrx } from '../database.js';
import type { RequestLogTable } from '../schema.js';
import type { PmsEndpoint } from '../../rate-limit/limits.js';
import { BODY_CAP_BYTES, isRosterDigest, readStoredBody, ROSTER_DIGEST } from '../../pms/request-log-body.js';

/** One PMS API request as the request log keeps it (spec 8.3, decisions.md). */
export interface LoggedRequest {
  id: string;
  at: string;
  hotelId: string | null;
  slug: string | null;
  keyId: string | null;
  mode: 'live' | 'test' | null;
  method: string;
  path: string;
  statusCode: number;
  requestBody: string | null;
  responseBody: string | null;
  requestBytes: number | null;
  responseBytes: number | null;
  clientIp: string;
  userAgent: string | null;
  durationMs: number;
  idempotencyKey: string | null;
  /** Full sizes in bytes of the path and query, User-Agent and Idempotency-Key when they were cut (null: stored whole). */
  pathBytes: number | null;
  userAgentBytes: number | null;
  idempotencyKeyBytes: number | null;
  /** An answer replayed from the idempotency store: the id of the request whose answer it is. */
  replayOf?: string | null;
  /** Not stored: the PMS endpoint that answered, and whether its answer was replayed (the go-live checklist, pms/key-checklist.ts). */
  endpoint?: PmsEndpoint | null;
  replayed?: boolean;
}

// SQLite allows 32,766 bound values per statement; 21 columns per row.
const ROWS_PER_STATEMENT = 500;

/** Rows one statement of the retention purge deletes (a few milliseconds on SQLite). */
export const PURGE_BATCH_ROWS = 2000;

export async function insertLoggedRequests(db: DbOrTrx, rows: LoggedRequest[]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    await db
      .insertInto('request_log')
      .values(
        rows.slice(i, i + ROWS_PER_STATEMENT).map((r) => ({
          id: r.id,
          created_at: r.at,
          hotel_id: r.hotelId,
          slug: r.slug,
          api_key_id: r.keyId,
          key_mode: r.mode,
          method: r.method,
          path: r.path,
          status_code: r.statusCode,
          request_body: r.requestBody,
          response_body: r.responseBody,
          request_bytes: r.requestBytes,
          response_bytes: r.responseBytes,
          client_ip: r.clientIp,
          user_agent: r.userAgent,
          duration_ms: r.durationMs,
          idempotency_key: r.idempotencyKey,
          path_bytes: r.pathBytes,
          user_agent_bytes: r.userAgentBytes,
          idempotency_key_bytes: r.idempotencyKeyBytes,
          replay_of: r.replayOf ?? null,
        })),
      )
      .execute();
  }
}

/** Deletes rows created before `cutoff`; returns how many. */
/**
 * Deletes the rows older than `cutoff` in batches of `batchRows` (oldest first), one
 * statement each, giving the event loop a turn between two: a purge of hundreds of
 * thousands of rows never holds SQLite's one writer, nor the process, for longer than
 * one batch (docs/architecture.md).
 */
export async function purgeRequestLog(db: DbOrTrx, cutoff: string, batchRows = PURGE_BATCH_ROWS): Promise<number> {
  let total = 0;
  for (;;) {
    const res = await db
      .deleteFrom('request_log')
      .where('id', 'in', (eb) => eb.selectFrom('request_log').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(batchRows))
      .executeTakeFirst();
    const n = Number(res.numDeletedRows);
    total += n;
    if (n < batchRows) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export interface RequestLogFilter {
  /**
   * `key` (the default): requests a key of the hotel sent. `none`: requests addressed to
   * its slug that no valid key sent (401, 429 by IP, unknown path…), whose text is the
   * sender's own.
   */
  sender?: 'key' | 'none';
  /** `2xx`, `4xx` (429 included), `429` or `5xx`. */
  status?: '2xx' | '4xx' | '429' | '5xx';
  /** Path prefix below the hotel's API root, e.g. `/guests/checkin`. */
  pathPrefix?: string;
  /** Exact path below the hotel's API root, with or without a query string (GET /guests). */
  pathExact?: string;
  mode?: 'live' | 'test';
  since?: string;
  until?: string;
  /** Rows strictly older than this (created_at, id) position. */
  before?: { at: string; id: string };
  limit: number;
}

export interface RequestLogSummary {
  id: string;
  at: string;
  method: string;
  path: string;
  statusCode: number;
  mode: 'live' | 'test' | null;
  durationMs: number;
  idempotencyKey: string | null;
  keyId: string | null;
  /** A key of the hotel sent it; false: no valid key did (its path, User-Agent and idempotency key are the sender's own text). */
  authenticated: boolean;
  /** A replay of a stored answer: the id of the original request (its row in this log); null: not a replay. */
  replayOf: string | null;
}

export interface RequestLogDetail extends RequestLogSummary {
  requestBody: string | null;
  responseBody: string | null;
  clientIp: string;
  userAgent: string | null;
  /** Full sizes of the bodies as sent and answered (null: no body, or a row older than the cap). */
  requestBytes: number | null;
  responseBytes: number | null;
  /** The stored body is the first 64 KiB of it, then the cut marker (pms/request-log-body.ts). */
  requestCut: boolean;
  responseCut: boolean;
  /** SHA-256 of the whole body (for a roster digest: of the whole digest) when it was cut. */
  requestSha256: string | null;
  responseSha256: string | null;
  /** `count-and-ids`: the response stored is a GET /guests roster's count and guest ids, not the roster. */
  responseDigest: typeof ROSTER_DIGEST | null;
  /** `unattributed`: no key of the hotel was given, so only the sizes of the bodies were kept. */
  bodyWithheld: 'unattributed' | null;
  /** Full sizes in bytes of the path (with its query), User-Agent and idempotency key as sent when the row keeps them cut (pms/request-log-fields.ts); null: stored whole. */
  pathBytes: number | null;
  userAgentBytes: number | null;
  idempotencyKeyBytes: number | null;
}

/**
 * A hotel's requests, newest first: those attributed to one of its keys, or (`sender:
 * 'none'`) those refused before a key was known (401, 429 by IP) that were addressed to
 * its slug. The two are never mixed in one list.
 */
export async function listHotelRequests(db: DbOrTrx, hotel: { id: string; slug: string }, f: RequestLogFilter): Promise<RequestLogSummary[]> {
  const root = `/api/pms/v1/${hotel.slug}`;
  let q = db
    .selectFrom('request_log')
    .select(['id', 'created_at', 'hotel_id', 'method', 'path', 'status_code', 'key_mode', 'duration_ms', 'idempotency_key', 'api_key_id', 'replay_of'])
    .where((eb) => (f.sender === 'none' ? eb.and([eb('hotel_id', 'is', null), eb('slug', '=', hotel.slug)]) : eb('hotel_id', '=', hotel.id)));
  if (f.status === '2xx') q = q.where('status_code', '>=', 200).where('status_code', '<', 300);
  if (f.status === '4xx') q = q.where('status_code', '>=', 400).where('status_code', '<', 500);
  if (f.status === '429') q = q.where('status_code', '=', 429);
  if (f.status === '5xx') q = q.where('status_code', '>=', 500);
  if (f.pathPrefix !== undefined) q = q.where('path', 'like', `${root}${f.pathPrefix}%`);
  if (f.pathExact !== undefined) {
    const exact = `${root}${f.pathExact}`;
    q = q.where((eb) => eb.or([eb('path', '=', exact), eb('path', 'like', `${exact}?%`)]));
  }
  if (f.mode) q = q.where('key_mode', '=', f.mode);
  if (f.since) q = q.where('created_at', '>=', f.since);
  if (f.until) q = q.where('created_at', '<', f.until);
  if (f.before) {
    const b = f.before;
    q = q.where((eb) => eb.or([eb('created_at', '<', b.at), eb.and([eb('created_at', '=', b.at), eb('id', '<', b.id)])]));
  }
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
  return rows.map(toSummary);
}

type SummaryColumns = Pick<
  Selectable<RequestLogTable>,
  'id' | 'created_at' | 'hotel_id' | 'method' | 'path' | 'status_code' | 'key_mode' | 'duration_ms' | 'idempotency_key' | 'api_key_id' | 'replay_of'
>;

export function toSummary(r: SummaryColumns): RequestLogSummary {
  return {
    id: r.id,
    at: r.created_at,
    method: r.method,
    path: r.path,
    statusCode: Number(r.status_code),
    mode: r.key_mode,
    durationMs: Math.round(Number(r.duration_ms) * 10) / 10,
    idempotencyKey: r.idempotency_key,
    keyId: r.api_key_id,
    authenticated: r.hotel_id !== null,
    replayOf: r.replay_of ?? null,
  };
}

const sizeOrNull = (n: number | null | undefined): number | null => (n === null || n === undefined ? null : Number(n));

export async function findHotelRequest(db: DbOrTrx, hotel: { id: string; slug: string }, id: string): Promise<RequestLogDetail | null> {
  const r = await db
    .selectFrom('request_log')
    .selectAll()
    .where('id', '=', id)
    .where((eb) => eb.or([eb('hotel_id', '=', hotel.id), eb.and([eb('hotel_id', 'is', null), eb('slug', '=', hotel.slug)])]))
    .executeTakeFirst();
  if (!r) return null;
  const requestBytes = r.request_bytes === null || r.request_bytes === undefined ? null : Number(r.request_bytes);
  const responseBytes = r.response_bytes === null || r.response_bytes === undefined ? null : Number(r.response_bytes);
  // A client's body could end with a marker of its own: only a body longer than the cap was cut.
  const requestMarker = readStoredBody(r.request_body).cut;
  const requestCut =
    requestMarker !== null && requestBytes !== null && requestBytes > BODY_CAP_BYTES && requestMarker.bytes > BODY_CAP_BYTES ? requestMarker : null;
  // Responses are JSON documents of the service's own (ending in `}`): a marker is the cut's.
  const responseCut = readStoredBody(r.response_body).cut;
  const unattributed = r.hotel_id === null && r.request_body === null && r.response_body === null && (requestBytes ?? responseBytes) !== null;
  return {
    ...toSummary(r),
    requestBody: r.request_body,
    responseBody: r.response_body,
    clientIp: r.client_ip,
    userAgent: r.user_agent,
    requestBytes,
    responseBytes,
    requestCut: requestCut !== null,
    responseCut: responseCut !== null,
    requestSha256: requestCut?.sha256 ?? null,
    responseSha256: responseCut?.sha256 ?? null,
    responseDigest: isRosterDigest(r) ? ROSTER_DIGEST : null,
    bodyWithheld: unattributed ? 'unattributed' : null,
    pathBytes: sizeOrNull(r.path_bytes),
    userAgentBytes: sizeOrNull(r.user_agent_bytes),
    idempotencyKeyBytes: sizeOrNull(r.idempotency_key_bytes),
  };
}
