import { sql } from 'kysely';
import type { DbOrTrx } from '../database.js';
import type { GuestData } from '../../domain/guest.js';
import type { RosterEntry } from '../../domain/sync-plan.js';
import { newId } from '../../domain/ids.js';
import { GUEST_DATA_COLUMNS, newGuestRow, toGuestData } from './guest.repository.js';

// Set-based writes for sync: a bounded number of statements per phase, each carrying
// many rows, instead of one round trip per guest. Chunk sizes keep every statement
// under SQLite's 32,766 bound values (PostgreSQL allows 65,535).

const IDS_PER_STATEMENT = 5000;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Active guests read per statement: one statement of 2,000 rows held the event loop 20-40 ms on SQLite, one of 500 about a quarter of that. */
const ROSTER_ROWS_PER_READ = 500;

/**
 * Every active guest of the hotel, both sources, read ROSTER_ROWS_PER_READ rows at a time
 * in id order (one statement each, in the caller's transaction): a 20,000-guest roster
 * arrives and is mapped in parts, the event loop turning while each part is read.
 */
export async function readActiveRoster(trx: DbOrTrx, hotelId: string): Promise<RosterEntry[]> {
  const out: RosterEntry[] = [];
  let after: string | null = null;
  for (;;) {
    // Only the columns the planner reads (14 of 19): on 20,000 rows the unread ones cost
    // more than the mapping.
    let query = trx
      .selectFrom('guests')
      .select(['id', 'source', 'pms_guest_id', ...GUEST_DATA_COLUMNS])
      .where('hotel_id', '=', hotelId)
      .where('status', '=', 'active');
    if (after !== null) query = query.where('id', '>', after);
    const rows = await query.orderBy('id').limit(ROSTER_ROWS_PER_READ).execute();
    for (const r of rows) out.push({ id: r.id, source: r.source, pmsGuestId: r.pms_guest_id, data: toGuestData(r) });
    if (rows.length < ROSTER_ROWS_PER_READ) return out;
    after = rows[rows.length - 1]?.id ?? null;
  }
}

/** Releases the active room assignment of each guest (history stays). */
export async function releaseRoomsOf(trx: DbOrTrx, hotelId: string, guestIds: readonly string[], now: string): Promise<void> {
  for (const ids of chunks(guestIds, IDS_PER_STATEMENT)) {
    await trx
      .updateTable('room_assignments')
      .set({ released_at: now })
      .where('hotel_id', '=', hotelId)
      .where('guest_id', 'in', ids)
      .where('released_at', 'is', null)
      .execute();
  }
}

/** Checks the guests out and frees their rooms. */
export async function checkOutMany(trx: DbOrTrx, hotelId: string, guestIds: readonly string[], now: string): Promise<void> {
  await releaseRoomsOf(trx, hotelId, guestIds, now);
  for (const ids of chunks(guestIds, IDS_PER_STATEMENT)) {
    await trx
      .updateTable('guests')
      .set({ status: 'checked_out', checked_out_at: now, updated_at: now })
      .where('hotel_id', '=', hotelId)
      .where('id', 'in', ids)
      .execute();
  }
}

const UPDATE_ROWS_PER_STATEMENT = 2000; // 12 values per row

/** Writes each guest's new data in one statement per chunk (UPDATE … FROM a VALUES list). */
export async function updateManyGuestData(trx: DbOrTrx, hotelId: string, rows: ReadonlyArray<{ id: string; data: GuestData }>, now: string): Promise<void> {
  for (const part of chunks(rows, UPDATE_ROWS_PER_STATEMENT)) {
    const values = sql.join(
      part.map(
        ({ id, data: d }) =>
          sql`(${id}, ${d.firstName}, ${d.lastName}, ${d.phone}, ${d.email}, ${d.language}, ${d.nationality}, ${d.adults === null ? null : String(d.adults)}, ${d.children === null ? null : String(d.children)}, ${d.checkInDate}, ${d.checkOutDate}, ${d.roomNumber})`,
      ),
    );
    // Values arrive as text (PostgreSQL types untyped parameters in VALUES as text),
    // so the two integer columns are cast back.
    await sql`
      with v(id, first_name, last_name, phone, email, language, nationality, adults, children, check_in_date, check_out_date, room_number) as (values ${values})
      update guests set
        first_name = v.first_name, last_name = v.last_name, phone = v.phone, email = v.email,
        language = v.language, nationality = v.nationality,
        adults = cast(v.adults as integer), children = cast(v.children as integer),
        check_in_date = v.check_in_date, check_out_date = v.check_out_date, room_number = v.room_number,
        updated_at = ${now}
      from v where guests.id = v.id and guests.hotel_id = ${hotelId}`.execute(trx);
  }
}

const ASSIGNMENT_ROWS_PER_STATEMENT = 5000; // 6 values per row

export async function insertAssignments(
  trx: DbOrTrx,
  hotelId: string,
  rows: ReadonlyArray<{ guestId: string; roomNumber: string }>,
  now: string,
): Promise<void> {
  for (const part of chunks(rows, ASSIGNMENT_ROWS_PER_STATEMENT)) {
    await trx
      .insertInto('room_assignments')
      .values(part.map((r) => ({ id: newId('room'), hotel_id: hotelId, guest_id: r.guestId, room_number: r.roomNumber, assigned_at: now, released_at: null })))
      .execute();
  }
}

const GUEST_ROWS_PER_STATEMENT = 1500; // 20 values per row

/** Inserts active PMS guests and their room assignments; returns the new ids in order. */
export async function insertManyPmsGuests(
  trx: DbOrTrx,
  hotelId: string,
  guests: ReadonlyArray<{ pmsGuestId: string; data: GuestData }>,
  now: string,
): Promise<string[]> {
  const ids = guests.map(() => newId('guest'));
  const rows = guests.map((g, i) => newGuestRow({ id: ids[i] ?? newId('guest'), hotelId, source: 'pms', pmsGuestId: g.pmsGuestId, data: g.data, now }));
  for (const part of chunks(rows, GUEST_ROWS_PER_STATEMENT)) await trx.insertInto('guests').values(part).execute();
  await insertAssignments(
    trx,
    hotelId,
    rows.map((r) => ({ guestId: r.id, roomNumber: r.room_number })),
    now,
  );
  return rows.map((r) => r.id);
}
