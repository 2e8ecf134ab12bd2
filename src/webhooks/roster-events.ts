import type { DbOrTrx } from '../db/database.js';
import type { ActivityEntry, Actor } from '../db/repositories/activity.repository.js';
import { createdAtOf } from '../db/repositories/guest.repository.js';
import { guestObject, type GuestSnapshot } from '../roster/guest-object.js';
import type { EventActor, OutgoingEvent } from './events.js';

/** The actor as an event names it: a PMS by its key pair, a staff user, or the service. */
export function eventActor(a: Actor): EventActor {
  if (a.type === 'pms') return { type: 'pms', keyId: a.id ?? '' };
  if (a.type === 'staff') return { type: 'staff', userId: a.id ?? '' };
  return { type: 'system' };
}

/**
 * The events a roster write sends, one per activity entry it records (a move with other
 * changes is two: guest.room_moved and guest.updated), each with the guest as it is
 * after the change, and `sync.completed` with the summary. A test key's requests never
 * reach the roster, and none of its entries would produce an event.
 */
export async function rosterEvents(trx: DbOrTrx, hotelId: string, entries: ActivityEntry[], guests: GuestSnapshot[]): Promise<OutgoingEvent[]> {
  const live = entries.filter((e) => e.actor.mode !== 'test');
  const byId = await withCreatedAt(trx, hotelId, guests);
  const events: OutgoingEvent[] = [];
  for (const e of live) {
    const actor = eventActor(e.actor);
    if (e.action === 'sync.completed') {
      events.push({ type: e.action, data: { summary: e.changes, actor } });
      continue;
    }
    const guest = e.guestId === null ? undefined : byId.get(e.guestId);
    if (!guest) continue;
    if (e.action === 'guest.checked_in' || e.action === 'guest.checked_out') events.push({ type: e.action, data: { guest: guestObject(guest), actor } });
    else if (e.action === 'guest.updated' || e.action === 'guest.room_moved')
      events.push({ type: e.action, data: { guest: guestObject(guest), changes: e.changes, actor } });
  }
  return events;
}

/** The snapshots by id, each with its creation time (read for those a batch write left without one). */
async function withCreatedAt(trx: DbOrTrx, hotelId: string, guests: GuestSnapshot[]): Promise<Map<string, GuestSnapshot & { createdAt: string }>> {
  const missing = guests.filter((g) => g.createdAt === null).map((g) => g.id);
  const created = missing.length > 0 ? await createdAtOf(trx, hotelId, missing) : new Map<string, string>();
  return new Map(guests.map((g) => [g.id, { ...g, createdAt: g.createdAt ?? created.get(g.id) ?? g.updatedAt }]));
}
