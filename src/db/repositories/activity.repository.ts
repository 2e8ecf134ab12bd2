import { sql } from 'kysely';
import { writeLater, type DbOrTrx } from '../database.js';
import { newId } from '../../domain/ids.js';
import { compiledInsertRows } from '../shapes.js';

/** Every action an activity entry records (docs/pms-interface.md, "Request and activity logs"; `guest.erased`: README.md, Personal data). */
export const ACTIVITY_ACTIONS = ['guest.checked_in', 'guest.updated', 'guest.room_moved', 'guest.checked_out', 'sync.completed', 'guest.erased'] as const;

type ActivityAction = (typeof ACTIVITY_ACTIONS)[number];

export interface Actor {
  type: 'pms' | 'staff' | 'system';
  /** Key pair id (pms) or user id (staff). */
  id: string | null;
  mode: 'live' | 'test' | null;
}

export interface ActivityEntry {
  hotelId: string;
  actor: Actor;
  action: ActivityAction;
  guestId: string | null;
  pmsGuestId: string | null;
  changes: unknown;
  at: string;
}

/** The inserts of activity entries, compiled once per row count (db/shapes.ts). */
const insertActivityRows = compiledInsertRows('activity_log');

/** Runs inside the caller's transaction, so the entry commits with the change it records (on PostgreSQL sent with its next round trip: writeLater). */
export async function insertActivity(trx: DbOrTrx, entries: ActivityEntry[]): Promise<void> {
  const rows = entries.map((e) => ({
    id: newId('act'),
    hotel_id: e.hotelId,
    created_at: e.at,
    actor_type: e.actor.type,
    actor_id: e.actor.id,
    actor_mode: e.actor.mode,
    action: e.action,
    guest_id: e.guestId,
    pms_guest_id: e.pmsGuestId,
    changes: e.changes === undefined || e.changes === null ? null : JSON.stringify(e.changes),
  }));
  for (const statement of insertActivityRows(trx, rows)) await writeLater(trx, statement);
}

export interface ActivityFilter {
  actorType?: Actor['type'];
  action?: ActivityAction;
  /** A guest id, a pmsGuestId, or part of a guest's name (case-insensitive). */
  guest?: string;
  /** Entries strictly older than this (created_at, id) position. */
  before?: { at: string; id: string };
  limit: number;
}

export interface ActivityView {
  id: string;
  at: string;
  actorType: Actor['type'];
  actorId: string | null;
  actorMode: 'live' | 'test' | null;
  /** The staff user's e-mail for `staff` entries. */
  actorEmail: string | null;
  action: ActivityAction;
  guestId: string | null;
  pmsGuestId: string | null;
  guestName: string | null;
  /** The guest's personal data was removed (retention or erasure): no name to show. */
  guestAnonymised: boolean;
  roomNumber: string | null;
  changes: unknown;
}

/** `%` and `_` in a search text match themselves. */
function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A hotel's activity, newest first, with the actor's e-mail and the guest's name and room. */
export async function listActivity(db: DbOrTrx, hotelId: string, f: ActivityFilter): Promise<ActivityView[]> {
  let q = db
    .selectFrom('activity_log')
    .leftJoin('guests', 'guests.id', 'activity_log.guest_id')
    .leftJoin('staff_users', (j) => j.onRef('staff_users.id', '=', 'activity_log.actor_id').on('activity_log.actor_type', '=', 'staff'))
    .select([
      'activity_log.id',
      'activity_log.created_at',
      'activity_log.actor_type',
      'activity_log.actor_id',
      'activity_log.actor_mode',
      'activity_log.action',
      'activity_log.guest_id',
      'activity_log.pms_guest_id',
      'activity_log.changes',
      'guests.first_name',
      'guests.last_name',
      'guests.room_number',
      'guests.anonymised_at',
      'staff_users.email',
    ])
    .where('activity_log.hotel_id', '=', hotelId);
  if (f.actorType) q = q.where('activity_log.actor_type', '=', f.actorType);
  if (f.action) q = q.where('activity_log.action', '=', f.action);
  if (f.guest) {
    const text = f.guest;
    const pattern = likePattern(text);
    q = q.where((eb) =>
      eb.or([
        eb('activity_log.guest_id', '=', text),
        eb('activity_log.pms_guest_id', '=', text),
        eb(sql`lower(guests.last_name)`, 'like', sql`${pattern} escape '\\'`),
        eb(sql`lower(guests.first_name)`, 'like', sql`${pattern} escape '\\'`),
      ]),
    );
  }
  if (f.before) {
    const b = f.before;
    q = q.where((eb) =>
      eb.or([eb('activity_log.created_at', '<', b.at), eb.and([eb('activity_log.created_at', '=', b.at), eb('activity_log.id', '<', b.id)])]),
    );
  }
  const rows = await q.orderBy('activity_log.created_at', 'desc').orderBy('activity_log.id', 'desc').limit(f.limit).execute();
  return rows.map((r) => ({
    id: r.id,
    at: r.created_at,
    actorType: r.actor_type,
    actorId: r.actor_id,
    actorMode: r.actor_mode,
    actorEmail: r.email ?? null,
    action: r.action as ActivityAction,
    guestId: r.guest_id,
    pmsGuestId: r.pms_guest_id,
    guestName: r.last_name ? (r.first_name ? `${r.last_name}, ${r.first_name}` : r.last_name) : null,
    guestAnonymised: r.anonymised_at !== null && r.anonymised_at !== undefined,
    roomNumber: r.room_number ?? null,
    changes: r.changes === null ? null : (JSON.parse(r.changes) as unknown),
  }));
}
