import { sql } from 'kysely';
import { isPostgres, writeLater, type DbOrTrx } from '../database.js';
import { newId } from '../../domain/ids.js';

export interface Hotel {
  id: string;
  slug: string;
  name: string;
  createdAt: string;
  /** IANA time zone: the hotel's day. */
  timeZone: string;
}

type HotelRow = { id: string; slug: string; name: string; created_at: string; time_zone: string };

function toHotel(row: HotelRow): Hotel {
  return { id: row.id, slug: row.slug, name: row.name, createdAt: row.created_at, timeZone: row.time_zone };
}

export async function insertHotel(db: DbOrTrx, slug: string, name: string, now: string, timeZone = 'UTC'): Promise<Hotel> {
  const hotel = { id: newId('hotel'), slug, name, created_at: now, time_zone: timeZone };
  await db.insertInto('hotels').values(hotel).execute();
  return toHotel(hotel);
}

export async function setHotelTimeZone(db: DbOrTrx, hotelId: string, timeZone: string): Promise<void> {
  await db.updateTable('hotels').set({ time_zone: timeZone }).where('id', '=', hotelId).execute();
}

/** Sets the hotel's name and time zone, each only when given. */
export async function updateHotel(db: DbOrTrx, hotelId: string, changes: { name?: string; timeZone?: string }): Promise<void> {
  const set = { ...(changes.name !== undefined ? { name: changes.name } : {}), ...(changes.timeZone !== undefined ? { time_zone: changes.timeZone } : {}) };
  if (Object.keys(set).length > 0) await db.updateTable('hotels').set(set).where('id', '=', hotelId).execute();
}

/** At most `limit` hotels by slug, after the slug `after` (null: from the first); read by the slug's unique index. */
export async function hotelsAfter(db: DbOrTrx, after: string | null, limit: number): Promise<Hotel[]> {
  let q = db.selectFrom('hotels').selectAll().orderBy('slug').limit(limit);
  if (after !== null) q = q.where('slug', '>', after);
  return (await q.execute()).map(toHotel);
}

export async function findHotelBySlug(db: DbOrTrx, slug: string): Promise<Hotel | null> {
  const row = await db.selectFrom('hotels').selectAll().where('slug', '=', slug).executeTakeFirst();
  return row ? toHotel(row) : null;
}

export async function allHotels(db: DbOrTrx): Promise<Hotel[]> {
  const rows = await db.selectFrom('hotels').selectAll().orderBy('slug').execute();
  return rows.map(toHotel);
}

/** The first key of the service's advisory locks ("inn"), so they never meet another application's. */
export const HOTEL_LOCK_SPACE = 0x696e6e;

/**
 * Takes the hotel's roster lock for the caller's transaction (PostgreSQL; SQLite runs one
 * write transaction at a time anyway): `exclusive` for writes that change or remove
 * guests, `shared` for check-ins, which only insert (check-ins never wait on each other in
 * a cycle: each waits, if at all, on one unique entry that another has already written).
 * A transaction-scoped advisory lock: held in memory until the commit or rollback, no row
 * written; lock_timeout and the deadlock detector apply as to any lock.
 *
 * Sent with the transaction's next statement (writeLater): it is taken before that
 * statement runs, in the same round trip (docs/architecture.md, "Round trips on PostgreSQL").
 */
export async function lockHotel(trx: DbOrTrx, hotelId: string, mode: 'exclusive' | 'shared'): Promise<void> {
  if (!isPostgres(trx)) return;
  const lock =
    mode === 'shared'
      ? sql`select pg_advisory_xact_lock_shared(${HOTEL_LOCK_SPACE}, hashtext(${hotelId}))`
      : sql`select pg_advisory_xact_lock(${HOTEL_LOCK_SPACE}, hashtext(${hotelId}))`;
  await writeLater(trx, lock.compile(trx));
}
