import { runTransaction, uniqueViolation, type Db, type DbOrTrx } from '../db/database.js';
import * as rooms from '../db/repositories/room.repository.js';
import { ApiError, fieldError, MAX_LISTED_ERRORS, validationError } from '../errors.js';
import type { RosterChange, RosterEventBus } from '../events/roster-events.js';
import { normalizeRoomNumber } from '../domain/guest.js';
import { MAX_ROOM_CSV_BYTES, MAX_ROOMS_PER_HOTEL, parseRoomCsv, roomFields, type RoomFields } from '../domain/room-list.js';

// The hotel's room list as the dashboard's Rooms page changes it (README.md: Rooms;
// docs/dashboard.md). Each change runs in one transaction under the hotel's row lock, so
// the cap (MAX_ROOMS_PER_HOTEL) holds against changes made at the same moment, and the
// database's unique index holds "one row per room number". After the commit every open
// board of the hotel is told to re-read (a roster event without changes), on every
// instance. Sync and the PMS API never read the list: a PMS may put a guest anywhere.

export interface RoomListDeps {
  db: Db;
  bus: RosterEventBus;
}

export type RoomInput = { roomNumber?: string | null; floor?: string | null; type?: string | null; outOfOrderReason?: string | null };

/** Runs `work` under the hotel's lock and tells the hotel's boards once it committed. */
async function change<T>(deps: RoomListDeps, hotelId: string, work: (trx: DbOrTrx) => Promise<T>): Promise<T> {
  let event: RosterChange | null = null;
  const result = await runTransaction(deps.db, async (trx) => {
    await rooms.lockRoomList(trx, hotelId);
    const out = await work(trx);
    event = { hotelId, at: new Date().toISOString(), changes: [] };
    await deps.bus.publishInTransaction(trx, event);
    return out;
  });
  if (event) deps.bus.committed(event);
  return result;
}

function listFull(): ApiError {
  return new ApiError('ROOM_LIST_FULL', { extra: { limit: MAX_ROOMS_PER_HOTEL } });
}

function roomExists(roomNumber: string): ApiError {
  return new ApiError('ROOM_EXISTS', {
    message: `Room ${roomNumber} is already on the room list: edit that room instead, or choose another room number.`,
    extra: { roomNumber },
  });
}

/** A room's fields from a form, or 422 naming each field as the dashboard's forms do. */
function validRoom(input: RoomInput): RoomFields {
  const { room, problems } = roomFields(input);
  if (!room) throw validationError(problems.map((p) => fieldError(p.field, p.code, p.message)));
  return room;
}

export async function addRoom(deps: RoomListDeps, hotelId: string, input: RoomInput): Promise<rooms.Room> {
  const fields = validRoom(input);
  try {
    return await change(deps, hotelId, async (trx) => {
      if ((await rooms.countRooms(trx, hotelId)) >= MAX_ROOMS_PER_HOTEL) throw listFull();
      return rooms.insertRoom(trx, hotelId, fields);
    });
  } catch (err) {
    if (uniqueViolation(err) === 'room_list') throw roomExists(fields.roomNumber);
    throw err;
  }
}

/** An edit: the fields it carries replace the room's (null clears one); the others stay. */
export async function editRoom(deps: RoomListDeps, hotelId: string, id: string, patch: RoomInput): Promise<rooms.Room> {
  let roomNumber = '';
  try {
    return await change(deps, hotelId, async (trx) => {
      const current = await rooms.findRoom(trx, hotelId, id);
      if (!current) throw notFound();
      const merged = validRoom({
        roomNumber: patch.roomNumber === undefined ? current.roomNumber : patch.roomNumber,
        // A floor left as it was derived from the old number follows a new number.
        floor: patch.floor === undefined ? (patch.roomNumber === undefined ? current.floor : null) : patch.floor,
        type: patch.type === undefined ? current.type : patch.type,
        outOfOrderReason: patch.outOfOrderReason === undefined ? current.outOfOrderReason : patch.outOfOrderReason,
      });
      roomNumber = merged.roomNumber;
      await rooms.updateRoom(trx, hotelId, id, merged);
      return { id, ...merged };
    });
  } catch (err) {
    if (uniqueViolation(err) === 'room_list') throw roomExists(roomNumber);
    throw err;
  }
}

export async function removeRoom(deps: RoomListDeps, hotelId: string, id: string): Promise<void> {
  await change(deps, hotelId, async (trx) => {
    if (!(await rooms.deleteRoom(trx, hotelId, id))) throw notFound();
  });
}

function notFound(): ApiError {
  return new ApiError('RECORD_NOT_FOUND', { message: 'No room with this id on your hotel’s room list: reload the Rooms page.' });
}

/**
 * An import replaces the room list with the CSV's rooms, or, when any line has a problem,
 * changes nothing and answers every problem found (at most MAX_FOUND_LINE_ERRORS, the
 * first MAX_LISTED_ERRORS listed) by its line. A room kept keeps its id.
 */
export async function importRooms(
  deps: RoomListDeps,
  hotelId: string,
  csv: string,
): Promise<{ rooms: number; added: number; updated: number; removed: number }> {
  const bytes = Buffer.byteLength(csv);
  if (bytes > MAX_ROOM_CSV_BYTES) throw new ApiError('ROOM_CSV_TOO_LARGE', { extra: { limit: MAX_ROOM_CSV_BYTES, size: bytes } });
  const parsed = parseRoomCsv(csv);
  if (!parsed.ok) {
    const shown = parsed.errors.slice(0, MAX_LISTED_ERRORS);
    const extra: Record<string, unknown> = { errors: shown };
    if (parsed.errors.length > shown.length) extra.errorsNotShown = parsed.errors.length - shown.length;
    const first = shown[0];
    const message =
      parsed.errors.length === 1 && first
        ? `${first.message} Nothing was imported.`
        : parsed.stopped
          ? `More than ${parsed.errors.length} problems in the CSV; the check stopped there. Fix the lines listed in errors and import it again: nothing was imported.`
          : `${parsed.errors.length} problems in the CSV: fix the lines listed in errors and import it again. Nothing was imported.`;
    throw new ApiError('ROOM_LIST_INVALID', { message, extra });
  }
  const next = new Map(parsed.rooms.map((r) => [r.roomNumber, r]));
  return change(deps, hotelId, async (trx) => {
    const current = await rooms.listRooms(trx, hotelId);
    const gone = current.filter((r) => !next.has(r.roomNumber)).map((r) => r.roomNumber);
    await rooms.deleteRoomsByNumber(trx, hotelId, gone);
    let updated = 0;
    const known = new Map(current.map((r) => [r.roomNumber, r]));
    for (const r of parsed.rooms) {
      const old = known.get(r.roomNumber);
      if (!old) continue;
      if (old.floor !== r.floor || old.type !== r.type || old.outOfOrderReason !== r.outOfOrderReason) {
        await rooms.updateRoom(trx, hotelId, old.id, r);
        updated++;
      }
    }
    const added = parsed.rooms.filter((r) => !known.has(r.roomNumber));
    await rooms.insertRooms(trx, hotelId, added);
    return { rooms: parsed.rooms.length, added: added.length, updated, removed: gone.length };
  });
}

/** The rooms the hotel's roster has held that are not on its list (at most one more than could be added). */
export async function roomsToAdopt(db: Db, hotelId: string): Promise<string[]> {
  return rooms.roomsSeenNotListed(db, hotelId, MAX_ROOMS_PER_HOTEL + 1);
}

/**
 * Adds the rooms the admin was shown (`roomNumbers`, from roomsToAdopt) that the roster
 * has held and the list still lacks; their floor from the number where it says one.
 */
export async function adoptRooms(deps: RoomListDeps, hotelId: string, roomNumbers: string[]): Promise<{ added: string[] }> {
  const wanted = new Set(roomNumbers.map(normalizeRoomNumber));
  return change(deps, hotelId, async (trx) => {
    const seen = await rooms.roomsSeenNotListed(trx, hotelId, MAX_ROOMS_PER_HOTEL + 1);
    const adding = seen.filter((r) => wanted.has(r));
    if ((await rooms.countRooms(trx, hotelId)) + adding.length > MAX_ROOMS_PER_HOTEL) throw listFull();
    const fields = adding.map((r) => roomFields({ roomNumber: r }).room).filter((r): r is RoomFields => r !== null);
    await rooms.insertRooms(trx, hotelId, fields);
    return { added: fields.map((r) => r.roomNumber) };
  });
}
