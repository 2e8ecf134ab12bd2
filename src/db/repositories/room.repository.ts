import type { DbOrTrx } from '../database.js';
import type { RoomFields } from '../../domain/room-list.js';
import { newId } from '../../domain/ids.js';

// The hotel's room list (rooms/room-list.ts). One row per room number of a hotel: the
// unique index rooms_hotel_room_uq holds it (migration 0014).

export interface Room extends RoomFields {
  id: string;
}

type RoomRow = { id: string; room_number: string; floor: string | null; room_type: string | null; out_of_order_reason: string | null };

const toRoom = (r: RoomRow): Room => ({ id: r.id, roomNumber: r.room_number, floor: r.floor, type: r.room_type, outOfOrderReason: r.out_of_order_reason });

const columns = (r: RoomFields) => ({ room_number: r.roomNumber, floor: r.floor, room_type: r.type, out_of_order_reason: r.outOfOrderReason });

/**
 * Holds the hotel's row lock for the caller's transaction (as a webhook endpoint's add
 * does): changes to one hotel's room list run one at a time, so a count taken after it
 * stays true until the commit. SQLite runs one write transaction at a time anyway; the
 * write first keeps its transaction from being refused when it would write later.
 */
export async function lockRoomList(trx: DbOrTrx, hotelId: string): Promise<void> {
  await trx
    .updateTable('hotels')
    .set((eb) => ({ event_seq: eb.ref('event_seq') }))
    .where('id', '=', hotelId)
    .execute();
}

export async function listRooms(db: DbOrTrx, hotelId: string): Promise<Room[]> {
  const rows = await db
    .selectFrom('rooms')
    .select(['id', 'room_number', 'floor', 'room_type', 'out_of_order_reason'])
    .where('hotel_id', '=', hotelId)
    .orderBy('room_number')
    .execute();
  return rows.map(toRoom);
}

export async function countRooms(db: DbOrTrx, hotelId: string): Promise<number> {
  const { n } = await db
    .selectFrom('rooms')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('hotel_id', '=', hotelId)
    .executeTakeFirstOrThrow();
  return Number(n);
}

export async function findRoom(db: DbOrTrx, hotelId: string, id: string): Promise<Room | null> {
  const row = await db
    .selectFrom('rooms')
    .select(['id', 'room_number', 'floor', 'room_type', 'out_of_order_reason'])
    .where('hotel_id', '=', hotelId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toRoom(row) : null;
}

export async function insertRoom(db: DbOrTrx, hotelId: string, room: RoomFields): Promise<Room> {
  const row = { id: newId('room'), hotel_id: hotelId, ...columns(room) };
  await db.insertInto('rooms').values(row).execute();
  return { id: row.id, ...room };
}

export async function updateRoom(db: DbOrTrx, hotelId: string, id: string, room: RoomFields): Promise<void> {
  await db.updateTable('rooms').set(columns(room)).where('hotel_id', '=', hotelId).where('id', '=', id).execute();
}

export async function deleteRoom(db: DbOrTrx, hotelId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('rooms').where('hotel_id', '=', hotelId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteRoomsByNumber(db: DbOrTrx, hotelId: string, roomNumbers: string[]): Promise<void> {
  for (let i = 0; i < roomNumbers.length; i += 500) {
    await db
      .deleteFrom('rooms')
      .where('hotel_id', '=', hotelId)
      .where('room_number', 'in', roomNumbers.slice(i, i + 500))
      .execute();
  }
}

export async function insertRooms(db: DbOrTrx, hotelId: string, rooms: RoomFields[]): Promise<void> {
  // 6 parameters a row: 100 rows stay under SQLite's and PostgreSQL's parameter limits.
  for (let i = 0; i < rooms.length; i += 100) {
    await db
      .insertInto('rooms')
      .values(rooms.slice(i, i + 100).map((r) => ({ id: newId('room'), hotel_id: hotelId, ...columns(r) })))
      .execute();
  }
}

/**
 * The room numbers the hotel's roster has held (every room assignment, past and present,
 * of the live roster) that are not on its room list, at most `limit` of them.
 */
export async function roomsSeenNotListed(db: DbOrTrx, hotelId: string, limit: number): Promise<string[]> {
  const rows = await roomsSeenNotListedQuery(db, hotelId, limit).execute();
  return rows.map((r) => r.room_number);
}

/** The query of roomsSeenNotListed, for its plan: it reads the hotel's assignments by index. */
export function roomsSeenNotListedQuery(db: DbOrTrx, hotelId: string, limit: number) {
  return db
    .selectFrom('room_assignments as a')
    .select('a.room_number')
    .distinct()
    .where('a.hotel_id', '=', hotelId)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('rooms as r').select('r.id').whereRef('r.hotel_id', '=', 'a.hotel_id').whereRef('r.room_number', '=', 'a.room_number'))),
    )
    .orderBy('a.room_number')
    .limit(limit);
}
