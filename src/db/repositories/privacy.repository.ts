import { sql, type Selectable } from 'kysely';
import { isPostgres, type DbOrTrx } from '../database.js';
import type { GuestTable } from '../schema.js';
import { bodyAddress, unpackBody } from '../../pms/request-log-body.js';
import { guestKeys, namesAnyOf, type GuestRef } from '../../pms/request-log-guests.js';
import { deleteBody, storeBodies, withBodies, type RequestLogRowWithBodies } from './request-log.repository.js';

// The queries of retention, erasure and export (README.md, Personal data): where a guest's personal data
// lives besides the guest row (activity entries, idempotent responses, request-log bodies).

export type GuestRow = Selectable<GuestTable>;

/** Every stay of the guest: by pmsGuestId all of them, by guest id that one (and, for a PMS guest, its siblings). */
export async function findStays(db: DbOrTrx, hotelId: string, by: { pmsGuestId: string } | { guestId: string }, lock = false): Promise<GuestRow[]> {
  let pmsGuestId: string | null;
  if ('guestId' in by) {
    const one = await db.selectFrom('guests').selectAll().where('hotel_id', '=', hotelId).where('id', '=', by.guestId).executeTakeFirst();
    if (!one) return [];
    if (one.pms_guest_id === null) return lock && isPostgres(db) ? lockRows(db, hotelId, [one.id]) : [one];
    pmsGuestId = one.pms_guest_id;
  } else pmsGuestId = by.pmsGuestId;
  return db
    .selectFrom('guests')
    .selectAll()
    .where('hotel_id', '=', hotelId)
    .where('pms_guest_id', '=', pmsGuestId)
    .orderBy('created_at')
    .orderBy('id')
    .$if(lock && isPostgres(db), (q) => q.forUpdate())
    .execute();
}

function lockRows(db: DbOrTrx, hotelId: string, ids: string[]): Promise<GuestRow[]> {
  return db.selectFrom('guests').selectAll().where('hotel_id', '=', hotelId).where('id', 'in', ids).forUpdate().execute();
}

/** Checked-out guests whose personal data is still held, checked out at or before `cutoff`, oldest first. */
export async function listGuestsToAnonymise(
  db: DbOrTrx,
  cutoff: string,
  limit: number,
): Promise<Pick<GuestRow, 'id' | 'hotel_id' | 'pms_guest_id' | 'checked_out_at'>[]> {
  return db
    .selectFrom('guests')
    .select(['id', 'hotel_id', 'pms_guest_id', 'checked_out_at'])
    .where('status', '=', 'checked_out')
    .where('anonymised_at', 'is', null)
    .where('checked_out_at', '<=', cutoff)
    .orderBy('checked_out_at')
    .limit(limit)
    .execute();
}

/** Removes the personal values of checked-out stays; returns how many rows still held some. */
export async function anonymiseGuestRows(trx: DbOrTrx, hotelId: string, guestIds: string[], now: string): Promise<number> {
  if (guestIds.length === 0) return 0;
  const res = await trx
    .updateTable('guests')
    .set({ first_name: null, last_name: '', phone: null, email: null, language: null, nationality: null, anonymised_at: now })
    .where('hotel_id', '=', hotelId)
    .where('id', 'in', guestIds)
    .where('status', '=', 'checked_out')
    .where('anonymised_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export async function activityOfGuests(trx: DbOrTrx, hotelId: string, guestIds: string[]): Promise<{ id: string; action: string; changes: string | null }[]> {
  if (guestIds.length === 0) return [];
  return trx
    .selectFrom('activity_log')
    .select(['id', 'action', 'changes'])
    .where('hotel_id', '=', hotelId)
    .where('guest_id', 'in', guestIds)
    .orderBy('created_at')
    .execute();
}

export async function setActivityChanges(trx: DbOrTrx, hotelId: string, id: string, changes: string | null): Promise<void> {
  await trx.updateTable('activity_log').set({ changes }).where('hotel_id', '=', hotelId).where('id', '=', id).execute();
}

/** `%` and `_` in a searched value match themselves. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Stored idempotent responses of the hotel's keys whose text contains any of `texts`. */
export async function idempotencyMentioning(
  trx: DbOrTrx,
  hotelId: string,
  texts: string[],
): Promise<{ api_key_id: string; idempotency_key: string; response_body: string | null }[]> {
  if (texts.length === 0) return [];
  return trx
    .selectFrom('idempotency_records')
    .innerJoin('api_keys', 'api_keys.id', 'idempotency_records.api_key_id')
    .select(['idempotency_records.api_key_id', 'idempotency_records.idempotency_key', 'idempotency_records.response_body'])
    .where('api_keys.hotel_id', '=', hotelId)
    .where((eb) => eb.or(texts.map((t) => eb('idempotency_records.response_body', 'like', sql<string>`${containsPattern(t)} escape '\\'`))))
    .execute();
}

export async function setIdempotencyResponse(trx: DbOrTrx, apiKeyId: string, key: string, body: string | null): Promise<void> {
  await trx.updateTable('idempotency_records').set({ response_body: body }).where('api_key_id', '=', apiKeyId).where('idempotency_key', '=', key).execute();
}

/**
 * The hotel's request-log rows whose bodies may name any of these guests, oldest first:
 * the bodies' addresses by their guest keys, then the rows that sent or answered one of
 * them by their indexes. The log itself is not searched. A key may be shared by another
 * reference: `requestLogNaming` confirms each body from its text.
 */
export function requestLogNamingQuery(db: DbOrTrx, hotelId: string, refs: GuestRef[]) {
  const naming = (column: 'request_sha256' | 'response_sha256') =>
    db
      .selectFrom('request_log as r')
      .selectAll('r')
      .where('r.hotel_id', '=', hotelId)
      .where(`r.${column}`, 'in', bodiesNamingQuery(db, hotelId, refs));
  return naming('request_sha256').union(naming('response_sha256')).orderBy('created_at').orderBy('id');
}

/**
 * The addresses of the hotel's stored bodies whose guest keys hold a key of these
 * references (pms/request-log-guests.ts `guestKey`). PostgreSQL: the bodies themselves,
 * `guest_keys && keys` by their GIN index. SQLite: request_log_guest_keys, read by its
 * whole key (key, hotel) for each key: one `in` list on the first column of the primary
 * key, never the hotel's prefix (docs/architecture.md, Request log storage).
 */
function bodiesNamingQuery(db: DbOrTrx, hotelId: string, refs: GuestRef[]) {
  const keys = guestKeys(hotelId, refs);
  if (keys.length === 0) throw new Error('bodiesNamingQuery: no guest reference given');
  if (isPostgres(db))
    // The GIN index alone, then the hotel's: left to itself the planner, which cannot know
    // how few bodies a key names, joined the GIN index with every entry of the hotel in the
    // primary key (a BitmapAnd), so the lookup grew with the hotel's log.
    return db
      .with(
        (cte) => cte('by_keys').materialized(),
        (qb) => qb.selectFrom('request_log_bodies as g').select(['g.hotel_id', 'g.sha256']).where(guestKeysOverlap('g', keys)),
      )
      .selectFrom('by_keys')
      .select('by_keys.sha256')
      .where('by_keys.hotel_id', '=', hotelId);
  return db.selectFrom('request_log_guest_keys as g').select('g.sha256').where('g.key', 'in', keys).where('g.hotel_id', '=', hotelId);
}

/** PostgreSQL: a body (as `alias`) whose guest keys hold any of these (the GIN index's operator). */
function guestKeysOverlap(alias: 'g', keys: bigint[]) {
  return sql<boolean>`${sql.ref(`${alias}.guest_keys`)} && cast(${keys.map(String)} as bigint[])`;
}

/**
 * The request-log rows that name any of these guests, with their bodies' texts: a row is
 * kept when a body it was found by names one of the references in its text (so a body
 * found by a key another reference shares is never taken for the guest's).
 */
export async function requestLogNaming(db: DbOrTrx, hotelId: string, refs: GuestRef[]): Promise<RequestLogRowWithBodies[]> {
  if (refs.length === 0) return [];
  const rows = await withBodies(db, await requestLogNamingQuery(db, hotelId, refs).execute());
  // Many rows name the same body (a roster synced every 5 minutes): each text is read once.
  const named = new Map<string, boolean>();
  const names = (sha256: string | null | undefined, text: string | null): boolean => {
    if (!sha256) return false;
    let yes = named.get(sha256);
    if (yes === undefined) named.set(sha256, (yes = namesAnyOf(text, refs)));
    return yes;
  };
  return rows.filter((r) => names(r.request_sha256, r.request_body) || names(r.response_sha256, r.response_body));
}

/**
 * The hotel's stored bodies that name any of these guests (found by their keys, confirmed
 * by their texts), locked for the erasure's transaction.
 */
export async function bodiesNaming(trx: DbOrTrx, hotelId: string, refs: GuestRef[]): Promise<Array<{ sha256: string; body: Buffer; last_used_at: string }>> {
  if (refs.length === 0) return [];
  const found = await bodiesByKeysQuery(trx, hotelId, refs).execute();
  return found.filter((b) => namesAnyOf(unpackBody(b.body), refs));
}

/** The hotel's stored bodies whose keys hold a key of these references (PostgreSQL: locked). */
export function bodiesByKeysQuery(trx: DbOrTrx, hotelId: string, refs: GuestRef[]) {
  const pg = isPostgres(trx);
  return trx
    .selectFrom('request_log_bodies as b')
    .select(['b.sha256', 'b.body', 'b.last_used_at'])
    .where('b.hotel_id', '=', hotelId)
    .where('b.sha256', 'in', bodiesNamingQuery(trx, hotelId, refs))
    .$if(pg, (q) => q.forUpdate());
}

/** Ids of the hotel's rows that sent or answered this body. */
export async function rowsOfBody(trx: DbOrTrx, hotelId: string, sha256: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('request_log')
    .select('id')
    .where('hotel_id', '=', hotelId)
    .where('request_sha256', '=', sha256)
    .union(trx.selectFrom('request_log').select('id').where('hotel_id', '=', hotelId).where('response_sha256', '=', sha256))
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Every row of the hotel that sent or answered the body at `oldSha` names `text` instead
 * (stored and indexed as any body); the old body and its index entries are gone.
 */
export async function replaceBody(trx: DbOrTrx, hotelId: string, oldSha: string, text: string, lastUsedAt: string): Promise<void> {
  const newSha = bodyAddress(text);
  if (newSha === oldSha) return;
  await storeBodies(trx, [{ hotelId, text, sha256: newSha, at: lastUsedAt }]);
  await trx.updateTable('request_log').set({ request_sha256: newSha }).where('hotel_id', '=', hotelId).where('request_sha256', '=', oldSha).execute();
  await trx.updateTable('request_log').set({ response_sha256: newSha }).where('hotel_id', '=', hotelId).where('response_sha256', '=', oldSha).execute();
  await deleteBody(trx, hotelId, oldSha);
}

/** SQLite: copies the WAL into the database file and truncates it, so erased bytes leave the WAL (best effort while readers hold it). */
export async function checkpointAndTruncateWal(db: DbOrTrx): Promise<boolean> {
  if (isPostgres(db)) return true;
  for (let attempt = 0; attempt < 20; attempt++) {
    const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(db);
    if (Number(rows[0]?.busy ?? 0) === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** The hotel's outgoing events (webhooks) that carry one of these guests, by their guestId. */
export async function outboxEventsOf(trx: DbOrTrx, hotelId: string, guestIds: string[]): Promise<Array<{ id: string; payload: string }>> {
  if (guestIds.length === 0) return [];
  const patterns = guestIds.map((id) => containsPattern(`"guestId":${JSON.stringify(id)}`));
  return trx
    .selectFrom('webhook_events')
    .select(['id', 'payload'])
    .where('hotel_id', '=', hotelId)
    .where((eb) => eb.or(patterns.map((p) => eb('payload', 'like', sql<string>`${p} escape '\\'`))))
    .execute();
}

export async function setEventPayload(trx: DbOrTrx, hotelId: string, id: string, payload: string): Promise<void> {
  await trx.updateTable('webhook_events').set({ payload }).where('hotel_id', '=', hotelId).where('id', '=', id).execute();
}
