import type { FastifyRequest } from 'fastify';
import type { DbOrTrx } from '../db/database.js';
import { guestIdsNamed, viewedSince } from '../db/repositories/access-trail.repository.js';
import { insertAccessEntries, insertAccessEntry, type AccessAction, type AccessEntry } from '../db/repositories/security.repository.js';
import { clientOf } from '../http/ip-limit.js';
import { guestRefs } from '../pms/request-log-guests.js';
import { sessionOf } from './session.js';

// docs/dashboard.md, "Access trail": each view of a guest's personal data in the dashboard
// is one row, written with the answer (one insert), for admins and receptionists alike.

/** Who saw it, when and from where: the signed-in staff member of the request. */
export function accessBy(req: FastifyRequest): Pick<AccessEntry, 'hotelId' | 'staffUserId' | 'clientIp'> {
  const s = sessionOf(req);
  return { hotelId: s.hotel.id, staffUserId: s.user.id, clientIp: clientOf(req) };
}

/** A guest's page or the roster shown again to the same staff member from the same address within this long is the same view (its refetches after live changes). */
const SAME_VIEW_MS = 10 * 60_000;

/** The views a page refetches after each live change: one entry per staff member, address and 10 minutes. */
const REFETCHED: ReadonlySet<AccessAction> = new Set(['guest.viewed', 'roster.viewed']);

/**
 * One access entry of this request's staff member: a guest's data, the roster, or a search's
 * text. A guest's page or the roster the same person saw from the same address in the last
 * 10 minutes writes none: the page refetches after each live change, and the trail would
 * repeat the one view.
 */
export async function recordAccess(
  db: DbOrTrx,
  req: FastifyRequest,
  what: { action: AccessAction; guestId?: string | null; search?: string | null },
): Promise<void> {
  const by = accessBy(req);
  if (REFETCHED.has(what.action)) {
    const since = new Date(Date.now() - SAME_VIEW_MS).toISOString();
    if (await viewedSince(db, { ...by, action: what.action, guestId: what.guestId ?? null }, since)) return;
  }
  await insertAccessEntry(db, { ...by, ...what });
}

/** The most guests one request-log body's entries name (a sync's body can name a whole hotel). */
const MAX_GUESTS_PER_BODY = 500;

/**
 * A request-log row's bodies as staff read them: one entry per guest of the hotel they name
 * (by guest id or PMS guest id, pms/request-log-guests.ts), in one insert. A test-mode
 * request's bodies are the test key's sandbox, no real guest's: no entry.
 */
export async function recordRequestBodyAccess(
  db: DbOrTrx,
  req: FastifyRequest,
  row: { mode: string | null; requestBody: string | null; responseBody: string | null },
): Promise<void> {
  if (row.mode === 'test') return;
  const refs = guestRefs([row.requestBody, row.responseBody]);
  const named = {
    guestIds: refs.filter((r) => r.kind === 'guest').map((r) => r.ref),
    pmsGuestIds: refs.filter((r) => r.kind === 'pms').map((r) => r.ref),
  };
  const by = accessBy(req);
  const ids = await guestIdsNamed(db, by.hotelId, named, MAX_GUESTS_PER_BODY);
  await insertAccessEntries(
    db,
    ids.map((guestId) => ({ ...by, action: 'request_log.viewed' as const, guestId })),
  );
}
