import { isPostgres, type DbOrTrx } from '../database.js';
import { newId } from '../../domain/ids.js';

export interface Hotel {
  id: string;
  slug: string;
  name: string;
  createdAt: string;
}

export async function insertHotel(db: DbOrTrx, slug: string, name: string, now: string): Promise<Hotel> {
  const hotel = { id: newId('hotel'), slug, name, created_at: now };
  await db.insertInto('hotels').values(hotel).execute();
  return { id: hotel.id, slug, name, createdAt: now };
}

export async function findHotelBySlug(db: DbOrTrx, slug: string): Promise<Hotel | null> {
  const row = await db.selectFrom('hotels').selectAll().where('slug', '=', slug).executeTakeFirst();
  return row ? { id: row.id, slug: row.slug, name: row.name, createdAt: row.created_at } : null;
}

export async function findHotelById(db: DbOrTrx, id: string): Promise<Hotel | null> {
  const row = await db.selectFrom('hotels').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? { id: row.id, slug: row.slug, name: row.name, createdAt: row.created_at } : null;
}

/**
 * Takes the hotel row's lock for the caller's transaction (PostgreSQL; SQLite runs one
 * write transaction at a time anyway). FOR NO KEY UPDATE: it excludes the other writers
 * of the hotel's roster, not the inserts that merely reference the hotel.
 */
export async function lockHotel(trx: DbOrTrx, hotelId: string): Promise<void> {
  if (isPostgres(trx)) await trx.selectFrom('hotels').select('id').where('id', '=', hotelId).forNoKeyUpdate().execute();
}
