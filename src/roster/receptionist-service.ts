import { uniqueViolation } from '../db/database.js';
import { ApiError } from '../errors.js';
import type { GuestData } from '../domain/guest.js';
import { normalizeRoomNumber } from '../domain/guest.js';
import * as guests from '../db/repositories/guest.repository.js';
import { insertActivity, type Actor } from '../db/repositories/activity.repository.js';
import type { RosterDeps } from './roster-service.js';

/**
 * A walk-in guest entered by hotel staff (source `receptionist`, no pmsGuestId). Sync
 * never touches it. The room invariant is the database's, as for PMS guests.
 */
export async function createReceptionistGuest(deps: RosterDeps, hotelId: string, actor: Actor, input: GuestData): Promise<guests.Guest> {
  const data: GuestData = { ...input, roomNumber: normalizeRoomNumber(input.roomNumber) };
  const now = new Date().toISOString();
  let guest: guests.Guest;
  try {
    guest = await deps.db.transaction().execute(async (trx) => {
      const g = await guests.insertActiveGuest(trx, { hotelId, source: 'receptionist', pmsGuestId: null, data, now });
      const changes = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== null).map(([k, v]) => [k, { from: null, to: v }]));
      await insertActivity(trx, [{ hotelId, actor, action: 'guest.checked_in', guestId: g.id, pmsGuestId: null, changes, at: now }]);
      return g;
    });
  } catch (err) {
    if (uniqueViolation(err) === 'active_room') {
      const holder = await guests.findRoomHolder(deps.db, hotelId, data.roomNumber);
      throw new ApiError('ROOM_OCCUPIED', { message: `Room ${data.roomNumber} is held by another active guest.`, extra: { currentGuest: holder } });
    }
    throw err;
  }
  deps.bus.publish({ hotelId, at: now, changes: [{ action: 'guest.checked_in', guestId: guest.id, pmsGuestId: null, roomNumber: data.roomNumber }] });
  return guest;
}
