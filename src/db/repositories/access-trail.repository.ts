import type { Db, DbOrTrx } from '../database.js';
import { deleteInBatches } from '../batches.js';
import type { SecurityEventKind } from './security.repository.js';

// The reading side of the access trail (docs/dashboard.md, "Access trail"): the admin's
// lists, what a guest's export says of who saw its data, the guests a request-log body
// names, and the retention purge.

/** Entries strictly older than this (created_at, id) position: the lists' pages. */
type Position = { at: string; id: string };

function guestName(r: { first_name: string | null; last_name: string | null }): string | null {
  if (!r.last_name) return null;
  return r.first_name ? `${r.last_name}, ${r.first_name}` : r.last_name;
}

export interface AccessFilter {
  staffUserId?: string;
  guestId?: string;
  /** created_at in [from, to): the hotel's day. */
  from?: string;
  to?: string;
  before?: Position;
  limit: number;
}

export interface AccessView {
  id: string;
  at: string;
  action: string;
  staffUserId: string;
  staffEmail: string | null;
  clientIp: string | null;
  guestId: string | null;
  guestName: string | null;
  search: string | null;
}

/** A hotel's access entries, newest first, with the staff member's e-mail and the guest's name. */
export async function listAccessEntries(db: DbOrTrx, hotelId: string, f: AccessFilter): Promise<AccessView[]> {
  let q = db
    .selectFrom('access_log')
    .leftJoin('staff_users', (j) => j.onRef('staff_users.id', '=', 'access_log.staff_user_id').onRef('staff_users.hotel_id', '=', 'access_log.hotel_id'))
    .leftJoin('guests', (j) => j.onRef('guests.id', '=', 'access_log.guest_id').onRef('guests.hotel_id', '=', 'access_log.hotel_id'))
    .select([
      'access_log.id',
      'access_log.created_at',
      'access_log.action',
      'access_log.staff_user_id',
      'access_log.client_ip',
      'access_log.guest_id',
      'access_log.search',
      'staff_users.email',
      'guests.first_name',
      'guests.last_name',
    ])
    .where('access_log.hotel_id', '=', hotelId);
  if (f.staffUserId) q = q.where('access_log.staff_user_id', '=', f.staffUserId);
  if (f.guestId) q = q.where('access_log.guest_id', '=', f.guestId);
  if (f.from) q = q.where('access_log.created_at', '>=', f.from);
  if (f.to) q = q.where('access_log.created_at', '<', f.to);
  if (f.before) {
    const b = f.before;
    q = q.where((eb) => eb.or([eb('access_log.created_at', '<', b.at), eb.and([eb('access_log.created_at', '=', b.at), eb('access_log.id', '<', b.id)])]));
  }
  const rows = await q.orderBy('access_log.created_at', 'desc').orderBy('access_log.id', 'desc').limit(f.limit).execute();
  return rows.map((r) => ({
    id: r.id,
    at: r.created_at,
    action: r.action,
    staffUserId: r.staff_user_id,
    staffEmail: r.email ?? null,
    clientIp: r.client_ip,
    guestId: r.guest_id,
    guestName: guestName({ first_name: r.first_name ?? null, last_name: r.last_name ?? null }),
    search: r.search,
  }));
}

export interface SecurityFilter {
  kind?: SecurityEventKind;
  /** The staff account the events concern. */
  subject?: string;
  before?: Position;
  limit: number;
}

export interface SecurityEventView {
  id: string;
  at: string;
  kind: string;
  actorType: string;
  actorId: string | null;
  actorEmail: string | null;
  subjectUserId: string | null;
  subjectEmail: string | null;
  subjectKeyPairId: string | null;
  clientIp: string | null;
  detail: unknown;
}

/** A hotel's security events, newest first, with the e-mails of the acting and the concerned staff member. */
export async function listSecurityEvents(db: DbOrTrx, hotelId: string, f: SecurityFilter): Promise<SecurityEventView[]> {
  let q = db
    .selectFrom('security_events')
    .leftJoin('staff_users as actor', (j) =>
      j
        .onRef('actor.id', '=', 'security_events.actor_id')
        .onRef('actor.hotel_id', '=', 'security_events.hotel_id')
        .on('security_events.actor_type', '=', 'staff'),
    )
    .leftJoin('staff_users as subject', (j) =>
      j.onRef('subject.id', '=', 'security_events.subject_user_id').onRef('subject.hotel_id', '=', 'security_events.hotel_id'),
    )
    .select([
      'security_events.id',
      'security_events.created_at',
      'security_events.kind',
      'security_events.actor_type',
      'security_events.actor_id',
      'security_events.subject_user_id',
      'security_events.subject_key_pair_id',
      'security_events.client_ip',
      'security_events.detail',
      'actor.email as actor_email',
      'subject.email as subject_email',
    ])
    .where('security_events.hotel_id', '=', hotelId);
  if (f.kind) q = q.where('security_events.kind', '=', f.kind);
  if (f.subject) q = q.where('security_events.subject_user_id', '=', f.subject);
  if (f.before) {
    const b = f.before;
    q = q.where((eb) =>
      eb.or([eb('security_events.created_at', '<', b.at), eb.and([eb('security_events.created_at', '=', b.at), eb('security_events.id', '<', b.id)])]),
    );
  }
  const rows = await q.orderBy('security_events.created_at', 'desc').orderBy('security_events.id', 'desc').limit(f.limit).execute();
  return rows.map((r) => ({
    id: r.id,
    at: r.created_at,
    kind: r.kind,
    actorType: r.actor_type,
    actorId: r.actor_id,
    actorEmail: r.actor_email ?? null,
    subjectUserId: r.subject_user_id,
    subjectEmail: r.subject_email ?? null,
    subjectKeyPairId: r.subject_key_pair_id,
    clientIp: r.client_ip,
    detail: r.detail === null ? null : (JSON.parse(r.detail) as unknown),
  }));
}

/** Who saw these stays' data and when, oldest first: the staff member's e-mail and role, nothing else of theirs. */
export async function accessesOfGuests(
  db: DbOrTrx,
  hotelId: string,
  guestIds: string[],
): Promise<Array<{ at: string; action: string; guestId: string | null; staffEmail: string | null; staffRole: string | null }>> {
  if (guestIds.length === 0) return [];
  const rows = await db
    .selectFrom('access_log')
    .leftJoin('staff_users', (j) => j.onRef('staff_users.id', '=', 'access_log.staff_user_id').onRef('staff_users.hotel_id', '=', 'access_log.hotel_id'))
    .select(['access_log.created_at', 'access_log.action', 'access_log.guest_id', 'staff_users.email', 'staff_users.role'])
    .where('access_log.hotel_id', '=', hotelId)
    .where('access_log.guest_id', 'in', guestIds)
    .orderBy('access_log.created_at')
    .orderBy('access_log.id')
    .execute();
  return rows.map((r) => ({ at: r.created_at, action: r.action, guestId: r.guest_id, staffEmail: r.email ?? null, staffRole: r.role ?? null }));
}

/** The hotel's stays these guest ids and PMS guest ids name (a request-log body's references), at most `limit`. */
export async function guestIdsNamed(db: DbOrTrx, hotelId: string, refs: { guestIds: string[]; pmsGuestIds: string[] }, limit: number): Promise<string[]> {
  if (refs.guestIds.length === 0 && refs.pmsGuestIds.length === 0) return [];
  const rows = await db
    .selectFrom('guests')
    .select('id')
    .where('hotel_id', '=', hotelId)
    .where((eb) =>
      eb.or([
        ...(refs.guestIds.length > 0 ? [eb('id', 'in', refs.guestIds)] : []),
        ...(refs.pmsGuestIds.length > 0 ? [eb('pms_guest_id', 'in', refs.pmsGuestIds)] : []),
      ]),
    )
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Deletes the rows of one of the two tables created before `cutoff`, in batches (db/batches.ts). */
function deleteOlder(db: Db, table: 'access_log' | 'security_events', cutoff: string): Promise<number> {
  return deleteInBatches(async (limit) => {
    const r = await db
      .deleteFrom(table)
      .where('id', 'in', (eb) => eb.selectFrom(table).select('id').where('created_at', '<', cutoff).orderBy('created_at').limit(limit))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  });
}

/** Deletes access entries and security events created before `cutoff`. */
export async function purgeAccessTrail(db: Db, cutoff: string): Promise<{ accessLog: number; securityEvents: number }> {
  return { accessLog: await deleteOlder(db, 'access_log', cutoff), securityEvents: await deleteOlder(db, 'security_events', cutoff) };
}

/**
 * An erasure's part of the trail: the search texts that named the guest (a text one of
 * `names` holds, or one holding it, case aside: how the activity search found the guest)
 * are cleared, in the erasure's transaction; the entries stay, with no text.
 */
export async function clearSearchesNaming(trx: DbOrTrx, hotelId: string, names: string[]): Promise<void> {
  const lowered = names.map((n) => n.toLowerCase()).filter((n) => n !== '');
  if (lowered.length === 0) return;
  const rows = await trx
    .selectFrom('access_log')
    .select(['id', 'search'])
    .where('hotel_id', '=', hotelId)
    .where('action', '=', 'guest.searched')
    .where('search', 'is not', null)
    .execute();
  const naming = rows.filter((r) => {
    const text = (r.search ?? '').toLowerCase();
    return text !== '' && lowered.some((n) => n.includes(text) || text.includes(n));
  });
  for (let i = 0; i < naming.length; i += 500) {
    const ids = naming.slice(i, i + 500).map((r) => r.id);
    await trx.updateTable('access_log').set({ search: null }).where('hotel_id', '=', hotelId).where('id', 'in', ids).execute();
  }
}

/** Whether this staff member has an entry of this action for this guest since `since` (the same view, refetched). */
export async function viewedSince(
  db: DbOrTrx,
  e: { hotelId: string; staffUserId: string; clientIp: string | null; action: string; guestId: string | null },
  since: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('access_log')
    .select('id')
    .where('hotel_id', '=', e.hotelId)
    .where('staff_user_id', '=', e.staffUserId)
    .where('created_at', '>=', since)
    .where('action', '=', e.action)
    .where('guest_id', e.guestId === null ? 'is' : '=', e.guestId)
    .where('client_ip', e.clientIp === null ? 'is' : '=', e.clientIp)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
