import type { DbOrTrx } from '../database.js';
import { newId } from '../../domain/ids.js';

export type ActivityAction =
  | 'guest.checked_in'
  | 'guest.updated'
  | 'guest.room_moved'
  | 'guest.checked_out'
  | 'sync.completed';

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

/** Runs inside the caller's transaction, so the entry commits with the change it records. */
export async function insertActivity(trx: DbOrTrx, entries: ActivityEntry[]): Promise<void> {
  // 10 values per row: 2,000 rows stay under SQLite's bound-value limit.
  for (let i = 0; i < entries.length; i += 2000) {
    await insertActivityRows(trx, entries.slice(i, i + 2000));
  }
}

async function insertActivityRows(trx: DbOrTrx, entries: ActivityEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await trx
    .insertInto('activity_log')
    .values(
      entries.map((e) => ({
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
      })),
    )
    .execute();
}

export interface ActivityRecord extends ActivityEntry {
  id: string;
}

export async function listActivity(db: DbOrTrx, hotelId: string, limit = 100): Promise<ActivityRecord[]> {
  const rows = await db
    .selectFrom('activity_log')
    .selectAll()
    .where('hotel_id', '=', hotelId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    hotelId: r.hotel_id,
    actor: { type: r.actor_type, id: r.actor_id, mode: r.actor_mode },
    action: r.action as ActivityAction,
    guestId: r.guest_id,
    pmsGuestId: r.pms_guest_id,
    changes: r.changes === null ? null : (JSON.parse(r.changes) as unknown),
    at: r.created_at,
  }));
}
