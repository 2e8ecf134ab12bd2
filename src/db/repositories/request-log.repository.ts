import { sql, type ExpressionBuilder, type Insertable, type Selectable } from 'kysely';
import { isPostgres, runTransaction, writeLater, type Db, type DbOrTrx } from '../database.js';
import type { Database, RequestLogTable } from '../schema.js';
import { dropDaysBefore, ensureDaysOf, isMissingPartition } from '../partitions.js';
import { deleteInBatches, PURGE_BATCH_ROWS } from '../batches.js';
import type { PmsEndpoint } from '../../rate-limit/limits.js';
import { BODY_CAP_BYTES, bodyAddress, isRosterDigest, packBody, readStoredBody, ROSTER_DIGEST, unpackBody } from '../../pms/request-log-body.js';
import { guestKeys, guestRefs } from '../../pms/request-log-guests.js';
import { compiledInsertRows } from '../shapes.js';

/** One PMS API request as the request log keeps it (docs/pms-interface.md, "Request and activity logs"). */
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

const BODIES_PER_STATEMENT = 100;

/** The statements that insert request-log rows: compiled once per row count (db/shapes.ts). */
const insertRows = compiledInsertRows('request_log');

/** A body to store: its hotel, text, address, and the newest time a row of the batch named it. */
interface BodyToStore {
  hotelId: string;
  text: string;
  sha256: string;
  at: string;
  /** Compressed, with the keys of the guests it names, ahead of the transaction (see prepareBodies). */
  prepared?: { data: Buffer; bytes: number; keys: bigint[] };
}

/**
 * Compresses and indexes, before the transaction, the bodies not yet stored: the
 * transaction is then held only for the writes. A body
 * already stored, the usual case of a repeated sync, costs its share of one lookup for
 * the whole batch, whatever the hotels (a round trip per hotel made a batch of many
 * hotels slow enough on PostgreSQL to widen what a crash loses).
 */
async function prepareBodies(db: DbOrTrx, list: BodyToStore[]): Promise<void> {
  for (let i = 0; i < list.length; i += BODIES_PER_STATEMENT) {
    const chunk = list.slice(i, i + BODIES_PER_STATEMENT);
    const stored = await db.selectFrom('request_log_bodies').select(['hotel_id', 'sha256']).where(isOneOf(chunk)).execute();
    const have = new Set(stored.map((r) => bodyKey(r.hotel_id, r.sha256)));
    for (const b of chunk) {
      if (have.has(bodyKey(b.hotelId, b.sha256))) continue;
      b.prepared = prepareBody(b.hotelId, b.text);
    }
  }
}

/** A body's compressed form and the keys of the guests it names (pms/request-log-guests.ts). */
function prepareBody(hotelId: string, text: string): { data: Buffer; bytes: number; keys: bigint[] } {
  const packed = packBody(text);
  return { data: packed.data, bytes: packed.bytes, keys: guestKeys(hotelId, guestRefs([text])) };
}

/** A body's key across hotels (its hotel and its address). */
function bodyKey(hotelId: string, sha256: string): string {
  return `${hotelId} ${sha256}`;
}

/** Matches the stored bodies of these (hotel, address) pairs: each pair by the table's primary key. */
function isOneOf(bodies: Array<{ hotelId: string; sha256: string }>) {
  return (eb: ExpressionBuilder<Database, 'request_log_bodies'>) =>
    eb.or(bodies.map((b) => eb.and([eb('request_log_bodies.hotel_id', '=', b.hotelId), eb('request_log_bodies.sha256', '=', b.sha256)])));
}

/** A request-log row's columns, its bodies named by their addresses in request_log_bodies (null: none kept). */
export function requestLogColumns(r: LoggedRequest, requestSha256: string | null, responseSha256: string | null): Insertable<RequestLogTable> {
  return {
    id: r.id,
    created_at: r.at,
    hotel_id: r.hotelId,
    slug: r.slug,
    api_key_id: r.keyId,
    key_mode: r.mode,
    method: r.method,
    path: r.path,
    status_code: r.statusCode,
    request_sha256: requestSha256,
    response_sha256: responseSha256,
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
  };
}

/**
 * Writes the rows, their bodies (each distinct one once: pms/request-log-body.ts) and the
 * keys of the guests new bodies name (pms/request-log-guests.ts), in one transaction.
 */
export async function insertLoggedRequests(db: Db, rows: LoggedRequest[]): Promise<void> {
  const bodies = new Map<string, BodyToStore>();
  const address = (hotelId: string | null, text: string | null): string | null => {
    // A row that no key of a hotel sent keeps no body (pms/request-log-body.ts).
    if (text === null || hotelId === null) return null;
    const sha256 = bodyAddress(text);
    const key = bodyKey(hotelId, sha256);
    const known = bodies.get(key);
    if (!known) bodies.set(key, { hotelId, text, sha256, at: rowsAt });
    return sha256;
  };
  const rowsAt = rows.reduce((max, r) => (r.at > max ? r.at : max), '');
  const values = rows.map((r) => requestLogColumns(r, address(r.hotelId, r.requestBody), address(r.hotelId, r.responseBody)));
  const toStore = [...bodies.values()];
  // PostgreSQL: bodies are looked up and compressed before the transaction, which then holds
  // its connection only for the writes. SQLite's writer runs in this thread: there the lookup
  // is a statement of the transaction itself (microseconds), not a read sent to a reader's
  // thread and queued behind the requests' reads, and compressing holds this thread either
  // way (docs/architecture.md, "Request log storage").
  if (isPostgres(db)) await prepareBodies(db, toStore);
  const write = () =>
    runTransaction(db, async (trx) => {
      await storeBodies(trx, toStore);
      for (const statement of insertRows(trx, values)) await writeLater(trx, statement);
    });
  try {
    await write();
  } catch (err) {
    // PostgreSQL: a day the service has not created ahead (db/partitions.ts) is created now.
    if (!isMissingPartition(err)) throw err;
    await ensureDaysOf(
      db,
      'request_log',
      rows.map((r) => r.at),
    );
    await write();
  }
}

/** `last_used_at` only moves forward. */
const laterLastUse = sql<string>`case when excluded.last_used_at > request_log_bodies.last_used_at then excluded.last_used_at else request_log_bodies.last_used_at end`;

/**
 * Stores each body not yet kept for its hotel (compressed) with the keys of the guests it names, and
 * moves the last use of those already kept. Taking the body's row (the update or the
 * upsert) also keeps the purge and an erasure from removing it under this transaction.
 * Each statement serves every hotel of the batch.
 */
export async function storeBodies(trx: DbOrTrx, list: BodyToStore[]): Promise<void> {
  for (let i = 0; i < list.length; i += BODIES_PER_STATEMENT) {
    const chunk = list.slice(i, i + BODIES_PER_STATEMENT);
    const at = chunk.reduce((max, b) => (b.at > max ? b.at : max), '');
    const known = chunk.filter((b) => b.prepared === undefined);
    const kept =
      known.length === 0
        ? []
        : await trx
            .updateTable('request_log_bodies')
            .set({ last_used_at: sql<string>`case when last_used_at < ${at} then ${at} else last_used_at end` })
            .where(isOneOf(known))
            .returning(['hotel_id', 'sha256'])
            .execute();
    const have = new Set(kept.map((k) => bodyKey(k.hotel_id, k.sha256)));
    // New bodies, and known ones removed since they were looked up (a purge, an erasure).
    const fresh = chunk.filter((b) => !have.has(bodyKey(b.hotelId, b.sha256)));
    if (fresh.length === 0) continue;
    if (!isPostgres(trx)) {
      await storeSqliteBodies(trx, fresh);
      continue;
    }
    await trx
      .insertInto('request_log_bodies')
      .values(
        fresh.map((b) => {
          b.prepared ??= prepareBody(b.hotelId, b.text);
          // PostgreSQL: the guest keys live in the body's row (a GIN index), written with it.
          return {
            hotel_id: b.hotelId,
            sha256: b.sha256,
            bytes: b.prepared.bytes,
            body: b.prepared.data,
            last_used_at: b.at,
            guest_keys: sql<string[]>`cast(${b.prepared.keys.map(String)} as bigint[])`,
          };
        }),
      )
      .onConflict((oc) => oc.columns(['hotel_id', 'sha256']).doUpdateSet({ last_used_at: laterLastUse }))
      .execute();
  }
}

/** SQLite's statements for new bodies and their guest keys: compiled once per row count (db/shapes.ts). */
const insertSqliteBodies = compiledInsertRows('request_log_bodies', (q) =>
  q.onConflict((oc) => oc.columns(['hotel_id', 'sha256']).doUpdateSet({ last_used_at: laterLastUse })),
);
const insertGuestKeys = compiledInsertRows('request_log_guest_keys', (q) => q.onConflict((oc) => oc.doNothing()));

/** SQLite: new bodies, then one entry per guest key in request_log_guest_keys. */
async function storeSqliteBodies(trx: DbOrTrx, fresh: BodyToStore[]): Promise<void> {
  const rows = [];
  const keys = [];
  for (const b of fresh) {
    const p = (b.prepared ??= prepareBody(b.hotelId, b.text));
    rows.push({ hotel_id: b.hotelId, sha256: b.sha256, bytes: p.bytes, body: p.data, last_used_at: b.at });
    for (const key of p.keys) keys.push({ key, hotel_id: b.hotelId, sha256: b.sha256 });
  }
  for (const statement of insertSqliteBodies(trx, rows)) await trx.executeQuery(statement);
  for (const statement of insertGuestKeys(trx, keys)) await trx.executeQuery(statement);
}

/** The texts of these stored bodies of a hotel, by address. */
async function readBodies(db: DbOrTrx, hotelId: string, addresses: Array<string | null | undefined>): Promise<Map<string, string>> {
  const wanted = [...new Set(addresses.filter((a): a is string => typeof a === 'string'))];
  const out = new Map<string, string>();
  for (let i = 0; i < wanted.length; i += BODIES_PER_STATEMENT) {
    const rows = await db
      .selectFrom('request_log_bodies')
      .select(['sha256', 'body'])
      .where('hotel_id', '=', hotelId)
      .where('sha256', 'in', wanted.slice(i, i + BODIES_PER_STATEMENT))
      .execute();
    for (const r of rows) out.set(r.sha256, unpackBody(r.body));
  }
  return out;
}

/** A request-log row with the texts of its bodies (null: none kept). */
export type RequestLogRowWithBodies = Selectable<RequestLogTable> & { request_body: string | null; response_body: string | null };

/** The rows with the texts of their bodies, exactly as stored. */
export async function withBodies(db: DbOrTrx, rows: Selectable<RequestLogTable>[]): Promise<RequestLogRowWithBodies[]> {
  const byHotel = new Map<string, Selectable<RequestLogTable>[]>();
  for (const r of rows) if (r.hotel_id !== null) byHotel.set(r.hotel_id, [...(byHotel.get(r.hotel_id) ?? []), r]);
  const texts = new Map<string, Map<string, string>>();
  for (const [hotelId, list] of byHotel)
    texts.set(
      hotelId,
      await readBodies(
        db,
        hotelId,
        list.flatMap((r) => [r.request_sha256, r.response_sha256]),
      ),
    );
  return rows.map((r) => {
    const t = r.hotel_id === null ? undefined : texts.get(r.hotel_id);
    return {
      ...r,
      request_body: r.request_sha256 ? (t?.get(r.request_sha256) ?? null) : null,
      response_body: r.response_sha256 ? (t?.get(r.response_sha256) ?? null) : null,
    };
  });
}

/**
 * Removes the rows older than `cutoff`. PostgreSQL drops the days that ended before it,
 * whole (db/partitions.ts): a row stays 90 to 91 days. SQLite deletes them in batches of
 * `batchRows` (oldest first), one statement each, giving the event loop a turn between
 * two: a purge of hundreds of thousands of rows never holds SQLite's one writer, nor the
 * process, for longer than one batch (docs/architecture.md). Then the bodies no row names
 * any more (and their guests) go in the same run. Returns how many rows.
 */
export async function purgeRequestLog(db: Db, cutoff: string, batchRows = PURGE_BATCH_ROWS): Promise<number> {
  if (isPostgres(db)) {
    // PostgreSQL drops whole days (db/partitions.ts).
    const dropped = await dropDaysBefore(db, 'request_log', cutoff);
    await purgeUnusedBodies(db, cutoff);
    return dropped;
  }
  const total = await deleteInBatches(async (limit) => {
    const res = await db
      .deleteFrom('request_log')
      .where('id', 'in', (eb) => eb.selectFrom('request_log').select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(limit))
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }, batchRows);
  await purgeUnusedBodies(db, cutoff);
  return total;
}

/** Bodies last named before `cutoff` that no row names: gone, with the guests they named. */
async function purgeUnusedBodies(db: Db, cutoff: string): Promise<number> {
  const PURGE_BATCH = 500;
  let total = 0;
  for (;;) {
    const candidates = await unusedBodies(db, cutoff).limit(PURGE_BATCH).execute();
    if (candidates.length === 0) return total;
    total += await runTransaction(db, async (trx) => {
      let n = 0;
      for (const c of candidates) {
        // Asked again under the delete: a row written meanwhile keeps its body.
        const gone = await unusedBodies(trx, cutoff, c).executeTakeFirst();
        if (!gone) continue;
        await deleteBody(trx, c.hotel_id, c.sha256);
        n++;
      }
      return n;
    });
    if (candidates.length < PURGE_BATCH) return total;
  }
}

/** Guest keys a delete names at most (well under SQLite's bound-value limit). */
const KEYS_PER_STATEMENT = 500;

/**
 * Deletes a stored body with its guest keys: on PostgreSQL they are in its row; on SQLite
 * the entries of request_log_guest_keys its text gave (found again from the text, by the
 * index's whole key).
 */
export async function deleteBody(trx: DbOrTrx, hotelId: string, sha256: string): Promise<void> {
  if (!isPostgres(trx)) {
    const stored = await trx.selectFrom('request_log_bodies').select('body').where('hotel_id', '=', hotelId).where('sha256', '=', sha256).executeTakeFirst();
    if (!stored) return;
    const keys = guestKeys(hotelId, guestRefs([unpackBody(stored.body)]));
    for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) {
      await trx
        .deleteFrom('request_log_guest_keys')
        .where('key', 'in', keys.slice(i, i + KEYS_PER_STATEMENT))
        .where('hotel_id', '=', hotelId)
        .where('sha256', '=', sha256)
        .execute();
    }
  }
  await trx.deleteFrom('request_log_bodies').where('hotel_id', '=', hotelId).where('sha256', '=', sha256).execute();
}

/** Bodies last named before `cutoff` that no row names (or that one, if given). */
function unusedBodies(db: DbOrTrx, cutoff: string, one?: { hotel_id: string; sha256: string }) {
  return db
    .selectFrom('request_log_bodies as b')
    .select(['b.hotel_id', 'b.sha256'])
    .where('b.last_used_at', '<', cutoff)
    .$if(one !== undefined, (q) => q.where('b.hotel_id', '=', one?.hotel_id ?? '').where('b.sha256', '=', one?.sha256 ?? ''))
    .where(({ and, not, exists, selectFrom }) =>
      and(
        (['r.request_sha256', 'r.response_sha256'] as const).map((column) =>
          not(
            exists(
              selectFrom('request_log as r')
                .select(sql`1`.as('one'))
                .whereRef('r.hotel_id', '=', 'b.hotel_id')
                .whereRef(column, '=', 'b.sha256'),
            ),
          ),
        ),
      ),
    )
    .$if(one !== undefined && isPostgres(db), (q) => q.forUpdate());
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
  const found = await db
    .selectFrom('request_log')
    .selectAll()
    .where('id', '=', id)
    .where((eb) => eb.or([eb('hotel_id', '=', hotel.id), eb.and([eb('hotel_id', 'is', null), eb('slug', '=', hotel.slug)])]))
    .executeTakeFirst();
  if (!found) return null;
  const [r] = await withBodies(db, [found]);
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
