import { uniqueViolation, type DbOrTrx } from '../db/database.js';
import { ApiError } from '../errors.js';
import type { GuestData, GuestPatch } from '../domain/guest.js';
import { normalizeRoomNumber } from '../domain/guest.js';
import * as guests from '../db/repositories/guest.repository.js';
import type { Actor } from '../db/repositories/activity.repository.js';
import {
  writeRosterAnsweringConflicts,
  checkOutLocatedGuest,
  initialChanges,
  NO_HOOKS,
  roomOccupied,
  updateLocatedGuest,
  type CheckOutResult,
  type RosterDeps,
  type UpdateResult,
} from './roster-service.js';

/**
 * A walk-in guest entered by hotel staff (source `receptionist`, no pmsGuestId). Sync
 * never touches it. The room invariant is the database's, as for PMS guests.
 */
export async function createReceptionistGuest(deps: RosterDeps, hotelId: string, actor: Actor, input: GuestData): Promise<guests.Guest> {
  const data: GuestData = { ...input, roomNumber: normalizeRoomNumber(input.roomNumber) };
  return writeRosterAnsweringConflicts<guests.Guest>(
    deps,
    hotelId,
    NO_HOOKS,
    'shared',
    async (trx, now) => {
      const g = await guests.insertActiveGuest(trx, { hotelId, source: 'receptionist', pmsGuestId: null, data, now });
      return {
        result: g,
        changed: [{ action: 'guest.checked_in', guestId: g.id, pmsGuestId: null, roomNumber: data.roomNumber }],
        activity: [{ hotelId, actor, action: 'guest.checked_in', guestId: g.id, pmsGuestId: null, changes: initialChanges(data), at: now }],
        guests: [g],
      };
    },
    async (err, db) => (uniqueViolation(err) === 'active_room' ? roomOccupied(db, hotelId, data.roomNumber) : null),
  );
}

/** The hotel's active guest with this id, locked; another hotel's id is not found either. */
async function lockActiveGuest(trx: DbOrTrx, hotelId: string, guestId: string): Promise<guests.Guest> {
  const g = await guests.findGuestById(trx, hotelId, guestId, true);
  if (!g || g.status !== 'active') throw new ApiError('RECORD_NOT_FOUND', { message: 'No active guest with this id in your hotel.' });
  return g;
}

/**
 * Staff edit (and room move) of a walk-in guest, with the API's field rules and room
 * invariant. PMS guests belong to the PMS: its next update or sync would undo the edit.
 */
export async function updateReceptionistGuest(deps: RosterDeps, hotelId: string, actor: Actor, guestId: string, patch: GuestPatch): Promise<UpdateResult> {
  return updateLocatedGuest(
    deps,
    hotelId,
    actor,
    async (trx) => {
      const g = await lockActiveGuest(trx, hotelId, guestId);
      if (g.source === 'pms') throw new ApiError('GUEST_MANAGED_BY_PMS');
      return g;
    },
    patch,
  );
}

/**
 * Staff check-out of any active guest. A PMS guest only with `confirmPmsGuest`: the PMS
 * still has the guest in house and sends it again on its next sync.
 */
export async function checkOutGuestByStaff(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  guestId: string,
  confirmPmsGuest: boolean,
): Promise<CheckOutResult> {
  return checkOutLocatedGuest(deps, hotelId, actor, async (trx) => {
    const g = await lockActiveGuest(trx, hotelId, guestId);
    if (g.source === 'pms' && !confirmPmsGuest) throw new ApiError('CONFIRMATION_REQUIRED');
    return g;
  });
}
