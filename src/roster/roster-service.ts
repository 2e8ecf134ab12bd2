import type { Db, DbOrTrx } from '../db/database.js';
import { uniqueViolation } from '../db/database.js';
import { ApiError, validationError } from '../errors.js';
import {
  applyChanges,
  compareRoomNumbers,
  diffGuest,
  guestDataFromCheckin,
  normalizeRoomNumber,
  refineGuestFields,
  type ChangeSet,
  type GuestData,
  type GuestPatch,
} from '../domain/guest.js';
import * as guests from '../db/repositories/guest.repository.js';
import { insertActivity, type ActivityEntry, type Actor } from '../db/repositories/activity.repository.js';
import type { RosterChange, RosterEventBus } from '../events/roster-events.js';

export interface RosterDeps {
  db: Db;
  bus: RosterEventBus;
}

/**
 * Writes the request's stored response (idempotency) inside the use case's transaction,
 * so the change and its record commit together (decisions.md: Idempotency).
 */
export type Seal<T> = (trx: DbOrTrx, result: T) => Promise<void>;

const noSeal = (): Promise<void> => Promise.resolve();

export interface CheckInResult {
  guest: guests.Guest;
}

export interface UpdateResult {
  guest: guests.Guest;
  changes: ChangeSet;
}

export interface CheckOutResult {
  guest: guests.Guest;
}

async function roomOccupied(db: Db, hotelId: string, roomNumber: string): Promise<ApiError> {
  const holder = await guests.findRoomHolder(db, hotelId, roomNumber);
  return new ApiError('ROOM_OCCUPIED', {
    message: `Room ${roomNumber} is held by another active guest.`,
    extra: { currentGuest: holder },
  });
}

function publish(bus: RosterEventBus, hotelId: string, at: string, changes: RosterChange['changes']): void {
  if (changes.length > 0) bus.publish({ hotelId, at, changes });
}

/** spec 3: (none) → active. 409 when the pmsGuestId is active or the room is held. */
export async function checkInGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  input: GuestPatch & Pick<GuestData, 'lastName' | 'roomNumber' | 'checkInDate' | 'checkOutDate'> & { pmsGuestId: string },
  seal: Seal<CheckInResult> = noSeal,
): Promise<CheckInResult> {
  const data = guestDataFromCheckin(input);
  const now = new Date().toISOString();
  let result: CheckInResult;
  try {
    result = await deps.db.transaction().execute(async (trx) => {
      const guest = await guests.insertActiveGuest(trx, { hotelId, source: 'pms', pmsGuestId: input.pmsGuestId, data, now });
      await insertActivity(trx, [
        { hotelId, actor, action: 'guest.checked_in', guestId: guest.id, pmsGuestId: guest.pmsGuestId, changes: initialChanges(data), at: now },
      ]);
      const r = { guest };
      await seal(trx, r);
      return r;
    });
  } catch (err) {
    const which = uniqueViolation(err);
    if (which === 'active_pms_guest') {
      const active = await guests.lockActivePmsGuest(deps.db, hotelId, input.pmsGuestId);
      throw new ApiError('GUEST_ALREADY_CHECKED_IN', {
        message: `Guest ${input.pmsGuestId} is already checked in.`,
        extra: { guestId: active?.id ?? null, roomNumber: active?.roomNumber ?? null },
      });
    }
    if (which === 'active_room') throw await roomOccupied(deps.db, hotelId, data.roomNumber);
    throw err;
  }
  publish(deps.bus, hotelId, now, [{ action: 'guest.checked_in', guestId: result.guest.id, pmsGuestId: input.pmsGuestId, roomNumber: data.roomNumber }]);
  return result;
}

/** A check-in's activity changes: every known field from null. */
function initialChanges(data: GuestData): ChangeSet {
  const changes: ChangeSet = {};
  for (const [field, value] of Object.entries(data) as Array<[keyof GuestData, unknown]>) {
    if (value !== null) changes[field] = { from: null, to: value };
  }
  return changes;
}

/**
 * spec 4.3: only submitted fields change; a new roomNumber moves the guest (old
 * assignment released, new one created). 404 when no active PMS guest, 409 when the
 * target room is held.
 */
export async function updateGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  input: GuestPatch & { pmsGuestId: string },
  seal: Seal<UpdateResult> = noSeal,
): Promise<UpdateResult> {
  const { pmsGuestId, ...patch } = input;
  return updateLocatedGuest(deps, hotelId, actor, (trx) => lockPmsGuestOr404(trx, hotelId, pmsGuestId), patch, seal);
}

async function lockPmsGuestOr404(trx: DbOrTrx, hotelId: string, pmsGuestId: string): Promise<guests.Guest> {
  const stored = await guests.lockActivePmsGuest(trx, hotelId, pmsGuestId);
  if (!stored) throw new ApiError('GUEST_NOT_FOUND', { message: `No active guest with pmsGuestId ${pmsGuestId}.` });
  return stored;
}

/**
 * The update of one active guest found (and locked) by `locate` inside the transaction:
 * the PMS finds it by pmsGuestId, staff by id. Absent keeps, null clears; a new room
 * moves the guest (old assignment released, new one created); 409 when the room is held.
 */
export async function updateLocatedGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  locate: (trx: DbOrTrx) => Promise<guests.Guest>,
  patch: GuestPatch,
  seal: Seal<UpdateResult> = noSeal,
): Promise<UpdateResult> {
  const now = new Date().toISOString();
  let targetRoom: string | null = null;
  let result: UpdateResult;
  try {
    result = await deps.db.transaction().execute(async (trx) => {
      const stored = await locate(trx);
      // The date order also holds against the stored date the update does not send.
      const dateErrors = refineGuestFields(patch, '', stored).filter((e) => e.code === 'DATE_ORDER');
      if (dateErrors.length > 0) throw validationError(dateErrors);
      const changes = diffGuest(stored, patch);
      const next = applyChanges(stored, changes);
      if (Object.keys(changes).length > 0) {
        await guests.updateGuestData(trx, stored.id, next, now);
        if (changes.roomNumber) {
          targetRoom = next.roomNumber;
          await guests.releaseRoom(trx, stored.id, now);
          await guests.assignRoom(trx, hotelId, stored.id, next.roomNumber, now);
        }
        await insertActivity(trx, activityForUpdate(hotelId, actor, stored, changes, now));
      }
      const r: UpdateResult = { guest: { ...stored, ...next, updatedAt: Object.keys(changes).length > 0 ? now : stored.updatedAt }, changes };
      await seal(trx, r);
      return r;
    });
  } catch (err) {
    if (uniqueViolation(err) === 'active_room' && targetRoom !== null) throw await roomOccupied(deps.db, hotelId, targetRoom);
    throw err;
  }
  const { guest, changes } = result;
  const events: RosterChange['changes'] = [];
  if (changes.roomNumber) events.push({ action: 'guest.room_moved', guestId: guest.id, pmsGuestId: guest.pmsGuestId, roomNumber: guest.roomNumber });
  else if (Object.keys(changes).length > 0) events.push({ action: 'guest.updated', guestId: guest.id, pmsGuestId: guest.pmsGuestId, roomNumber: guest.roomNumber });
  publish(deps.bus, hotelId, now, events);
  return result;
}

/** A room move and other field changes are recorded as two entries (decisions.md actions). */
export function activityForUpdate(hotelId: string, actor: Actor, stored: Pick<guests.Guest, 'id' | 'pmsGuestId'>, changes: ChangeSet, at: string): ActivityEntry[] {
  const { roomNumber, ...rest } = changes;
  const entries: ActivityEntry[] = [];
  const base = { hotelId, actor, guestId: stored.id, pmsGuestId: stored.pmsGuestId, at };
  if (roomNumber) entries.push({ ...base, action: 'guest.room_moved', changes: { roomNumber } });
  if (Object.keys(rest).length > 0) entries.push({ ...base, action: 'guest.updated', changes: rest });
  return entries;
}

/** spec 3: active → checked out; frees the room at once. 404 when no active PMS guest. */
export async function checkOutGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  pmsGuestId: string,
  seal: Seal<CheckOutResult> = noSeal,
): Promise<CheckOutResult> {
  return checkOutLocatedGuest(deps, hotelId, actor, (trx) => lockPmsGuestOr404(trx, hotelId, pmsGuestId), seal);
}

/** Checks out the active guest that `locate` finds (and locks) inside the transaction. */
export async function checkOutLocatedGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  locate: (trx: DbOrTrx) => Promise<guests.Guest>,
  seal: Seal<CheckOutResult> = noSeal,
): Promise<CheckOutResult> {
  const now = new Date().toISOString();
  const result = await deps.db.transaction().execute(async (trx) => {
    const stored = await locate(trx);
    await guests.releaseRoom(trx, stored.id, now);
    await guests.markCheckedOut(trx, stored.id, now);
    await insertActivity(trx, [
      { hotelId, actor, action: 'guest.checked_out', guestId: stored.id, pmsGuestId: stored.pmsGuestId, changes: { roomNumber: { from: stored.roomNumber, to: null } }, at: now },
    ]);
    const r: CheckOutResult = { guest: { ...stored, status: 'checked_out', updatedAt: now } };
    await seal(trx, r);
    return r;
  });
  const { guest } = result;
  publish(deps.bus, hotelId, now, [{ action: 'guest.checked_out', guestId: guest.id, pmsGuestId: guest.pmsGuestId, roomNumber: guest.roomNumber }]);
  return result;
}

/** decisions.md: active guests of both sources, in natural room order. */
export async function listGuests(db: Db, hotelId: string, filter: guests.GuestFilter = {}): Promise<guests.Guest[]> {
  const list = await guests.listActiveGuests(db, hotelId, {
    ...filter,
    roomNumber: filter.roomNumber === undefined ? undefined : normalizeRoomNumber(filter.roomNumber),
  });
  return list.sort((a, b) => compareRoomNumbers(a.roomNumber, b.roomNumber) || a.roomNumber.localeCompare(b.roomNumber));
}
