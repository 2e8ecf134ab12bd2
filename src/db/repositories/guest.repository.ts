import type { Selectable } from 'kysely';
import { isPostgres, writeLater, type DbOrTrx } from '../database.js';
import type { GuestTable } from '../schema.js';
import type { GuestData, GuestSource } from '../../domain/guest.js';
import { newId } from '../../domain/ids.js';
import { compiledInsert } from '../shapes.js';

export interface Guest extends GuestData {
  id: string;
  hotelId: string;
  source: GuestSource;
  pmsGuestId: string | null;
  status: 'active' | 'checked_out';
  createdAt: string;
  updatedAt: string;
  /** When its personal data was removed (retention or erasure); null while held. */
  anonymisedAt: string | null;
}

/** Who holds a room, as ROOM_OCCUPIED reports it (docs/pms-interface.md, "Errors"). */
export interface RoomHolder {
  pmsGuestId: string | null;
  lastName: string;
  checkInDate: string;
}

/** A guest row as the code above the repositories sees it. */
export function toGuest(r: Selectable<GuestTable>): Guest {
  return {
    id: r.id,
    hotelId: r.hotel_id,
    source: r.source,
    pmsGuestId: r.pms_guest_id,
    status: r.status,
    ...toGuestData(r),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    anonymisedAt: r.anonymised_at ?? null,
  };
}

/** The data columns of a guest row, one per field of GuestData (docs/pms-interface.md, "Guest fields"); toGuestData and dataColumns map between them. */
export const GUEST_DATA_COLUMNS = [
  'first_name',
  'last_name',
  'phone',
  'room_number',
  'check_in_date',
  'check_out_date',
  'language',
  'adults',
  'children',
  'nationality',
  'email',
] as const satisfies readonly (keyof Selectable<GuestTable>)[];

export type GuestDataColumns = Pick<Selectable<GuestTable>, (typeof GUEST_DATA_COLUMNS)[number]>;

export function toGuestData(r: GuestDataColumns): GuestData {
  return {
    firstName: r.first_name,
    lastName: r.last_name,
    phone: r.phone,
    roomNumber: r.room_number,
    checkInDate: r.check_in_date,
    checkOutDate: r.check_out_date,
    language: r.language,
    adults: r.adults === null ? null : Number(r.adults),
    children: r.children === null ? null : Number(r.children),
    nationality: r.nationality,
    email: r.email,
  };
}

/** A new active stay's row (every column but anonymised_at, which a new stay leaves null). */
export function newGuestRow(g: { id: string; hotelId: string; source: GuestSource; pmsGuestId: string | null; data: GuestData; now: string }) {
  return {
    id: g.id,
    hotel_id: g.hotelId,
    source: g.source,
    pms_guest_id: g.pmsGuestId,
    status: 'active' as const,
    ...dataColumns(g.data),
    created_at: g.now,
    updated_at: g.now,
    checked_out_at: null,
  };
}

function dataColumns(d: GuestData) {
  // Checked against GUEST_DATA_COLUMNS (which toGuestData needs for every field): a column left out here fails to compile.
  return {
    first_name: d.firstName,
    last_name: d.lastName,
    phone: d.phone,
    email: d.email,
    language: d.language,
    nationality: d.nationality,
    adults: d.adults,
    children: d.children,
    check_in_date: d.checkInDate,
    check_out_date: d.checkOutDate,
    room_number: d.roomNumber,
  } satisfies Record<(typeof GUEST_DATA_COLUMNS)[number], unknown>;
}

/** The active PMS guest with this id, row-locked on PostgreSQL for the caller's transaction. */
export async function lockActivePmsGuest(trx: DbOrTrx, hotelId: string, pmsGuestId: string): Promise<Guest | null> {
  return activePmsGuest(trx, hotelId, pmsGuestId, true);
}

/** The active PMS guest with this id, read without a lock. */
export async function findActivePmsGuest(db: DbOrTrx, hotelId: string, pmsGuestId: string): Promise<Guest | null> {
  return activePmsGuest(db, hotelId, pmsGuestId, false);
}

async function activePmsGuest(db: DbOrTrx, hotelId: string, pmsGuestId: string, lock: boolean): Promise<Guest | null> {
  const row = await db
    .selectFrom('guests')
    .selectAll()
    .where('hotel_id', '=', hotelId)
    .where('pms_guest_id', '=', pmsGuestId)
    .where('status', '=', 'active')
    .$if(lock && isPostgres(db), (q) => q.forUpdate())
    .executeTakeFirst();
  return row ? toGuest(row) : null;
}

/** The hotel's guest with this id (any status, any source); row-locked on PostgreSQL when `lock`. */
export async function findGuestById(trx: DbOrTrx, hotelId: string, guestId: string, lock = false): Promise<Guest | null> {
  const row = await trx
    .selectFrom('guests')
    .selectAll()
    .where('hotel_id', '=', hotelId)
    .where('id', '=', guestId)
    .$if(lock && isPostgres(trx), (q) => q.forUpdate())
    .executeTakeFirst();
  return row ? toGuest(row) : null;
}

/**
 * Inserts an active guest and its room assignment. Throws the database's unique
 * violation when the room or the pmsGuestId is already active (the invariants); on
 * PostgreSQL at the transaction's next round trip (writeLater, like every write below).
 */
export async function insertActiveGuest(
  trx: DbOrTrx,
  g: { hotelId: string; source: GuestSource; pmsGuestId: string | null; data: GuestData; now: string },
): Promise<Guest> {
  const id = newId('guest');
  const row = { ...newGuestRow({ ...g, id }), anonymised_at: null };
  await writeLater(trx, insertGuestRow(trx, row));
  await assignRoom(trx, g.hotelId, id, g.data.roomNumber, g.now);
  return toGuest(row);
}

const insertGuestRow = compiledInsert('guests');
const insertAssignment = compiledInsert('room_assignments');

export async function assignRoom(trx: DbOrTrx, hotelId: string, guestId: string, roomNumber: string, now: string): Promise<void> {
  await writeLater(
    trx,
    insertAssignment(trx, { id: newId('room'), hotel_id: hotelId, guest_id: guestId, room_number: roomNumber, assigned_at: now, released_at: null }),
  );
}

/** Deactivates the guest's active room assignment; history stays. */
export async function releaseRoom(trx: DbOrTrx, hotelId: string, guestId: string, now: string): Promise<void> {
  await writeLater(
    trx,
    trx
      .updateTable('room_assignments')
      .set({ released_at: now })
      .where('hotel_id', '=', hotelId)
      .where('guest_id', '=', guestId)
      .where('released_at', 'is', null)
      .compile(),
  );
}

export async function updateGuestData(trx: DbOrTrx, hotelId: string, guestId: string, data: GuestData, now: string): Promise<void> {
  await writeLater(
    trx,
    trx
      .updateTable('guests')
      .set({ ...dataColumns(data), updated_at: now })
      .where('hotel_id', '=', hotelId)
      .where('id', '=', guestId)
      .compile(),
  );
}

export async function markCheckedOut(trx: DbOrTrx, hotelId: string, guestId: string, now: string): Promise<void> {
  await writeLater(
    trx,
    trx
      .updateTable('guests')
      .set({ status: 'checked_out', checked_out_at: now, updated_at: now })
      .where('hotel_id', '=', hotelId)
      .where('id', '=', guestId)
      .compile(),
  );
}

/** The active guest holding a room (with its id, which the API's currentGuest does not show), or null. */
export async function findRoomHolder(db: DbOrTrx, hotelId: string, roomNumber: string): Promise<(RoomHolder & { guestId: string }) | null> {
  const row = await db
    .selectFrom('room_assignments')
    .innerJoin('guests', 'guests.id', 'room_assignments.guest_id')
    .select(['guests.pms_guest_id', 'guests.last_name', 'guests.check_in_date', 'guests.id'])
    .where('room_assignments.hotel_id', '=', hotelId)
    .where('room_assignments.room_number', '=', roomNumber)
    .where('room_assignments.released_at', 'is', null)
    .executeTakeFirst();
  return row ? { guestId: row.id, pmsGuestId: row.pms_guest_id, lastName: row.last_name, checkInDate: row.check_in_date } : null;
}

export interface GuestFilter {
  source?: GuestSource;
  roomNumber?: string;
  pmsGuestId?: string;
  /** Only these guests (the dashboard refetching the ones a live event named). */
  ids?: readonly string[];
}

export async function listActiveGuests(db: DbOrTrx, hotelId: string, filter: GuestFilter = {}): Promise<Guest[]> {
  let q = db.selectFrom('guests').selectAll().where('hotel_id', '=', hotelId).where('status', '=', 'active');
  if (filter.source) q = q.where('source', '=', filter.source);
  if (filter.roomNumber !== undefined) q = q.where('room_number', '=', filter.roomNumber);
  if (filter.pmsGuestId !== undefined) q = q.where('pms_guest_id', '=', filter.pmsGuestId);
  if (filter.ids !== undefined) q = q.where('id', 'in', filter.ids.length > 0 ? filter.ids : ['']);
  return (await q.execute()).map(toGuest);
}

export interface RoomAssignment {
  roomNumber: string;
  assignedAt: string;
  releasedAt: string | null;
}

export async function listRoomHistory(db: DbOrTrx, hotelId: string, guestId: string): Promise<RoomAssignment[]> {
  const rows = await db
    .selectFrom('room_assignments')
    .select(['room_number', 'assigned_at', 'released_at'])
    .where('hotel_id', '=', hotelId)
    .where('guest_id', '=', guestId)
    .orderBy('assigned_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ roomNumber: r.room_number, assignedAt: r.assigned_at, releasedAt: r.released_at }));
}

/** When each of these guests' stays was created (batch writes do not read it). */
export async function createdAtOf(db: DbOrTrx, hotelId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 5000) {
    const rows = await db
      .selectFrom('guests')
      .select(['id', 'created_at'])
      .where('hotel_id', '=', hotelId)
      .where('id', 'in', ids.slice(i, i + 5000))
      .execute();
    for (const r of rows) out.set(r.id, r.created_at);
  }
  return out;
}
