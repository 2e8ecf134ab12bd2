// Guests' personal data over time (README.md, Personal data; GDPR Art. 5(1)(e), 15 and 17): anonymised
// after GUEST_RETENTION_DAYS, erased on request, exported on request. One place knows
// where a guest's personal values are kept: the guest rows of its stays, the change sets
// of its activity entries, stored idempotent responses, and request-log bodies.

import { asLongWork, runTransaction, type Db, type DbOrTrx } from '../db/database.js';
import { insertActivity, type Actor } from '../db/repositories/activity.repository.js';
import { recordEvents, WEBHOOK_HISTORY_MS } from '../webhooks/events.js';
import { eventActor } from '../webhooks/roster-events.js';
import { listRoomHistory, toGuest } from '../db/repositories/guest.repository.js';
import type { Hotel } from '../db/repositories/hotel.repository.js';

type HotelRef = Pick<Hotel, 'id' | 'slug' | 'name'>;
import * as repo from '../db/repositories/privacy.repository.js';
import { toSummary } from '../db/repositories/request-log.repository.js';
import { guestMatcher, onlyAbout, redactChanges, redactMentionsSteps, stringifySteps, type GuestMatcher } from '../domain/personal-data.js';
import { Turns } from '../roster/turns.js';
import { ApiError } from '../errors.js';
import { isDigestText, unpackBody } from '../pms/request-log-body.js';
import { holderRef, refKey, type GuestRef } from '../pms/request-log-guests.js';
import { redactStoredBody } from './request-log-redaction.js';
import { insertAccessEntry, type AccessEntry } from '../db/repositories/security.repository.js';
import { clearSearchesNaming } from '../db/repositories/access-trail.repository.js';
import { accessesOfGuests } from '../db/repositories/access-trail.repository.js';

export type GuestSelector = { pmsGuestId: string } | { guestId: string };

/** Idempotency records live 24 h: stays checked out longer ago than this have none left (the purge runs first). */
const IDEMPOTENCY_REACH_MS = 25 * 60 * 60 * 1000;
const BATCH = 200;

// ---------------------------------------------------------------- retention

/**
 * Anonymises every guest checked out at least `retentionDays` ago (0: every checked-out
 * guest): personal values leave the guest row, its activity entries and any stored
 * idempotent response; room, dates, counts and the fact of each change stay. Returns how
 * many stays were anonymised. Runs in batches, one transaction each.
 */
export async function anonymiseExpiredGuests(db: Db, retentionDays: number, nowMs: number = Date.now()): Promise<number> {
  const cutoff = new Date(nowMs - retentionDays * 24 * 60 * 60 * 1000).toISOString();
  const idempotencyFrom = new Date(nowMs - IDEMPOTENCY_REACH_MS).toISOString();
  const outboxFrom = new Date(nowMs - WEBHOOK_HISTORY_MS).toISOString();
  let total = 0;
  for (;;) {
    const batch = await repo.listGuestsToAnonymise(db, cutoff, BATCH);
    if (batch.length === 0) return total;
    const now = new Date().toISOString();
    total += await runTransaction(db, async (trx) => {
      // The batch spans hotels; each statement writes one hotel's stays (docs/deployment.md, "The partition key").
      let n = 0;
      for (const [hotelId, ids] of idsByHotel(batch)) {
        n += await repo.anonymiseGuestRows(trx, hotelId, ids, now);
        await redactActivity(trx, hotelId, ids);
      }
      // Only stays checked out within the records' lifetime can still be named by one.
      const recent = batch.filter((g) => (g.checked_out_at ?? '') >= idempotencyFrom);
      for (const g of recent) await redactIdempotency(trx, g.hotel_id, g.pms_guest_id, [g.id]);
      // Outgoing events are kept WEBHOOK_HISTORY_MS: only stays checked out within it can be in one.
      const inOutbox = batch.filter((g) => (g.checked_out_at ?? '') >= outboxFrom);
      for (const g of inOutbox) await redactOutbox(trx, g.hotel_id, [g.id]);
      return n;
    });
    if (batch.length < BATCH) return total;
  }
}

// ---------------------------------------------------------------- erasure

export interface ErasureResult {
  guestId: string;
  pmsGuestId: string | null;
  /** Records whose personal data was removed, per kind. */
  erased: { guests: number; activity: number; idempotency: number; requestLog: number; webhookEvents: number };
}

/** The staff member who erased from the dashboard: their access entry commits with the erasure (docs/dashboard.md, "Access trail"). */
type ErasureAccess = Pick<AccessEntry, 'hotelId' | 'staffUserId' | 'clientIp'>;

/**
 * Art. 17: removes the guest's personal data from every stay with its pmsGuestId (or the
 * one receptionist stay), their activity entries, stored idempotent responses and the
 * request-log bodies that name it, and records one `guest.erased` entry without personal
 * data. Refused (409 GUEST_ACTIVE) while a stay is active; 404 when no stay matches.
 */
export async function eraseGuest(db: Db, hotel: HotelRef, selector: GuestSelector, actor: Actor, access?: ErasureAccess): Promise<ErasureResult> {
  checkErasable(await repo.findStays(db, hotel.id, selector));
  // Long work (asLongWork): a stored sync answer that names the guest is megabytes to write back.
  const result = await asLongWork(() =>
    runTransaction(db, async (trx) => {
      const stays = checkErasable(await repo.findStays(trx, hotel.id, selector, true));
      const ids = stays.map((s) => s.id);
      const pmsGuestId = stays[0]?.pms_guest_id ?? null;
      const now = new Date().toISOString();
      await repo.anonymiseGuestRows(trx, hotel.id, ids, now);
      const activity = await redactActivity(trx, hotel.id, ids);
      const idempotency = await redactIdempotency(trx, hotel.id, pmsGuestId, ids, mentionTexts(stays));
      const requestLog = await redactRequestLog(trx, hotel.id, stays);
      const webhookEvents = await redactOutbox(trx, hotel.id, ids);
      const erased = { guests: stays.length, activity, idempotency, requestLog, webhookEvents };
      const subject = 'guestId' in selector ? selector.guestId : (ids[ids.length - 1] ?? null);
      await insertActivity(trx, [{ hotelId: hotel.id, actor, action: 'guest.erased', guestId: subject, pmsGuestId, changes: erased, at: now }]);
      if (access) await insertAccessEntry(trx, { ...access, action: 'guest.erased', guestId: subject, at: now });
      // A search's text that named the guest goes too (docs/dashboard.md, "Access trail").
      await clearSearchesNaming(trx, hotel.id, [...new Set(stays.flatMap((s) => [s.last_name, s.first_name]).filter((n): n is string => Boolean(n)))]);
      // The hotel's other systems hear it too, so they can erase the guest in turn: ids and counts, no personal data.
      await recordEvents(
        trx,
        hotel.id,
        () => [{ type: 'guest.erased', data: { guestId: subject, pmsGuestId, guestIds: ids, erased, actor: eventActor(actor) } }],
        now,
      );
      return { guestId: subject ?? '', pmsGuestId, erased };
    }),
  );
  // SQLite: the erased values' old page images must leave the WAL too.
  await repo.checkpointAndTruncateWal(db);
  return result;
}

/**
 * Outgoing events that carried one of the stays keep their id, type and time (a delivery
 * still pending sends that), but their data names the guest by ids only.
 */
async function redactOutbox(trx: DbOrTrx, hotelId: string, guestIds: string[]): Promise<number> {
  const events = await repo.outboxEventsOf(trx, hotelId, guestIds);
  for (const e of events) {
    const body = JSON.parse(e.payload) as { data?: { guest?: { guestId?: string; pmsGuestId?: string | null } } };
    const guest = body.data?.guest;
    const data = { guest: { guestId: guest?.guestId ?? null, pmsGuestId: guest?.pmsGuestId ?? null }, erased: true };
    await repo.setEventPayload(trx, hotelId, e.id, JSON.stringify({ ...body, data }));
  }
  return events.length;
}

function checkErasable(stays: repo.GuestRow[]): repo.GuestRow[] {
  if (stays.length === 0) throw new ApiError('RECORD_NOT_FOUND', { message: 'No guest with this id in this hotel.' });
  if (stays.some((s) => s.status === 'active')) throw new ApiError('GUEST_ACTIVE');
  return stays;
}

/**
 * The request-log bodies that name the guest (found by their guest keys and confirmed by their text, not by
 * searching the log) lose its personal values, and only its: a full-roster sync keeps
 * every other guest. Each body is stored once per hotel, so every row that sent or
 * answered it reads the redacted text, and the old text is deleted. Returns how many rows
 * name the guest (a GET /guests digest holds ids only and is left as it is).
 */
async function redactRequestLog(trx: DbOrTrx, hotelId: string, stays: repo.GuestRow[]): Promise<number> {
  const ids = stays.map((s) => s.id);
  const pmsGuestId = stays[0]?.pms_guest_id ?? null;
  const holders = new Set(stays.filter((s) => s.pms_guest_id === null).map((s) => holderRef(s.last_name, s.check_in_date)));
  const byIds = guestMatcher(pmsGuestId, ids);
  const matcher: GuestMatcher = (o) => {
    const m = byIds(o);
    if (m !== null) return m;
    if (o.pmsGuestId === null && typeof o.lastName === 'string' && typeof o.checkInDate === 'string')
      return holders.has(holderRef(o.lastName, o.checkInDate)) || null;
    return null;
  };
  const ownValues = new Set(stays.flatMap((s) => [s.email, s.phone]).filter((v): v is string => typeof v === 'string' && v !== ''));
  const rows = new Set<string>();
  // A body is a piece of work (unpacked, redacted, packed again: tens of milliseconds for a
  // 64 KiB sync), with a turn of the event loop before each (docs/architecture.md, SQLite:
  // long work beside short requests).
  const turns = new Turns();
  for (const b of await repo.bodiesNaming(trx, hotelId, guestRefsOf(stays))) {
    await turns.turn();
    const text = unpackBody(b.body);
    if (isDigestText(text)) continue;
    for (const id of await repo.rowsOfBody(trx, hotelId, b.sha256)) rows.add(id);
    const redacted = redactStoredBody(text, { matcher, ownValues });
    if (redacted !== text) await repo.replaceBody(trx, hotelId, b.sha256, redacted, b.last_used_at);
  }
  return rows.size;
}

/** The references by which the guest index names the guest's stays (pms/request-log-guests.ts). */
function guestRefsOf(stays: repo.GuestRow[]): GuestRef[] {
  const refs = new Map<string, GuestRef>();
  const add = (r: GuestRef) => refs.set(`${r.kind} ${r.ref}`, r);
  for (const s of stays) {
    add({ kind: 'guest', ref: refKey(s.id) });
    if (s.pms_guest_id !== null) add({ kind: 'pms', ref: refKey(s.pms_guest_id) });
    else add({ kind: 'holder', ref: holderRef(s.last_name, s.check_in_date) });
  }
  return [...refs.values()];
}

/**
 * The texts by which a stored body names the guest: its pmsGuestId as a JSON string, its
 * e-mail and phone, and (for a receptionist guest named in a ROOM_OCCUPIED answer) the
 * name and arrival date as that answer writes them. Names alone are not searched: they
 * would find other people with the same name.
 */
function mentionTexts(stays: repo.GuestRow[]): string[] {
  const texts = new Set<string>();
  for (const s of stays) {
    if (s.pms_guest_id !== null) texts.add(JSON.stringify(s.pms_guest_id));
    if (s.email) texts.add(s.email);
    if (s.phone) texts.add(s.phone);
    if (s.last_name) texts.add(`"lastName":${JSON.stringify(s.last_name)},"checkInDate":${JSON.stringify(s.check_in_date)}`);
  }
  return [...texts];
}

/** The ids of `rows` grouped by their hotel, in the order each hotel first appears. */
function idsByHotel(rows: ReadonlyArray<{ id: string; hotel_id: string }>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const ids = out.get(r.hotel_id);
    if (ids) ids.push(r.id);
    else out.set(r.hotel_id, [r.id]);
  }
  return out;
}

async function redactActivity(trx: DbOrTrx, hotelId: string, guestIds: string[]): Promise<number> {
  let n = 0;
  for (const e of await repo.activityOfGuests(trx, hotelId, guestIds)) {
    if (e.changes === null) continue;
    const redacted = JSON.stringify(redactChanges(JSON.parse(e.changes)));
    if (redacted === e.changes) continue;
    await repo.setActivityChanges(trx, hotelId, e.id, redacted);
    n++;
  }
  return n;
}

async function redactIdempotency(trx: DbOrTrx, hotelId: string, pmsGuestId: string | null, guestIds: string[], extraTexts: string[] = []): Promise<number> {
  const texts = [...guestIds.map((id) => JSON.stringify(id)), ...(pmsGuestId === null ? [] : [JSON.stringify(pmsGuestId)]), ...extraTexts];
  const matcher = guestMatcher(pmsGuestId, guestIds);
  // A stored answer of a 20,000-guest sync is megabytes: each is parsed in one piece, then
  // redacted and written back as text in slices, with turns of the event loop between them
  // (docs/architecture.md, SQLite: long work beside short requests).
  const turns = new Turns();
  let n = 0;
  for (const r of await repo.idempotencyMentioning(trx, hotelId, texts)) {
    if (r.response_body === null) continue;
    await turns.turn();
    let parsed: unknown;
    let redacted: string | null;
    try {
      parsed = JSON.parse(r.response_body);
      await turns.turn();
      redacted = await turns.run(redactedText(parsed, matcher));
    } catch {
      redacted = null; // not JSON (never written so): the response goes, the record stays
    }
    if (redacted === r.response_body) continue;
    await repo.setIdempotencyResponse(trx, r.api_key_id, r.idempotency_key, redacted);
    n++;
  }
  return n;
}

/** A parsed JSON document without the guest's personal values, as text: JSON.stringify(redactMentions(parsed)), in steps. */
function* redactedText(parsed: unknown, matcher: GuestMatcher): Generator<void, string, void> {
  return yield* stringifySteps(yield* redactMentionsSteps(parsed, matcher));
}

// ---------------------------------------------------------------- export

/** Art. 15: every stay of the guest (all fields, room history, activity) and the request-log rows that name it. */
export async function exportGuest(db: Db, hotel: HotelRef, selector: GuestSelector): Promise<Record<string, unknown>> {
  const stays = await repo.findStays(db, hotel.id, selector);
  if (stays.length === 0) throw new ApiError('RECORD_NOT_FOUND', { message: 'No guest with this id in this hotel.' });
  const ids = stays.map((s) => s.id);
  const pmsGuestId = stays[0]?.pms_guest_id ?? null;
  const matcher = guestMatcher(pmsGuestId, ids);
  const activity = await db
    .selectFrom('activity_log')
    .select(['id', 'guest_id', 'created_at', 'actor_type', 'actor_id', 'actor_mode', 'action', 'changes'])
    .where('hotel_id', '=', hotel.id)
    .where('guest_id', 'in', ids)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const logRows = await repo.requestLogNaming(db, hotel.id, guestRefsOf(stays));
  const requestLog = logRows
    .map((r) => ({ row: r, requestBody: bodyAbout(r.request_body, matcher, ids), responseBody: bodyAbout(r.response_body, matcher, ids) }))
    .filter((x) => x.requestBody !== undefined || x.responseBody !== undefined)
    .map(({ row: r, requestBody, responseBody }) => ({
      ...toSummary(r),
      clientIp: r.client_ip,
      userAgent: r.user_agent,
      requestBody: requestBody ?? null,
      responseBody: responseBody ?? null,
    }));
  const out = [];
  for (const s of stays) {
    const { id, hotelId: _hotelId, ...guest } = toGuest(s);
    out.push({
      guestId: id,
      ...guest,
      lastName: guest.anonymisedAt !== null ? null : guest.lastName,
      checkedOutAt: s.checked_out_at,
      roomHistory: await listRoomHistory(db, hotel.id, s.id),
      activity: activity
        .filter((a) => a.guest_id === s.id)
        .map((a) => ({
          id: a.id,
          at: a.created_at,
          action: a.action,
          actorType: a.actor_type,
          actorId: a.actor_id,
          actorMode: a.actor_mode,
          changes: a.changes === null ? null : (JSON.parse(a.changes) as unknown),
        })),
    });
  }
  // Who in the hotel saw the guest's data, and when: the staff member's e-mail and role, nothing else of theirs.
  const accessedBy = await accessesOfGuests(db, hotel.id, ids);
  return { exportedAt: new Date().toISOString(), hotel: { slug: hotel.slug, name: hotel.name }, subject: selector, stays: out, requestLog, accessedBy };
}

/**
 * A logged body as it concerns the guest: parsed, with other guests taken out. A body
 * that is not JSON (cut at 64 KiB, or sent malformed) cannot be separated from other
 * guests' data, so only a note says it was there. Undefined: nothing about the guest.
 */
function bodyAbout(text: string | null, matcher: GuestMatcher, ids: string[]): unknown {
  if (text === null) return undefined;
  // A stored GET /guests answer (its count and guest ids, perhaps cut): the count, and of its ids only this guest's.
  const digest = /^\{"count":(\d+),"ids":\[/.exec(text);
  if (digest) {
    const own = ids.filter((id) => text.includes(JSON.stringify(id)));
    return own.length === 0 ? undefined : { count: Number(digest[1]), ids: own };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { withheld: "This body is not complete JSON (cut at 64 KiB, or malformed as sent), so it cannot be separated from other guests' data." };
  }
  return onlyAbout(parsed, matcher);
}
