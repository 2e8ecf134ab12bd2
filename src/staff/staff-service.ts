import type { Db } from '../db/database.js';
import { uniqueViolation } from '../db/database.js';
import { findHotelById, insertHotel, type Hotel } from '../db/repositories/hotel.repository.js';
import * as staff from '../db/repositories/staff.repository.js';
import { newId } from '../domain/ids.js';
import { ApiError } from '../errors.js';
import { hashPassword, verifyPassword } from '../operations.js';

// Staff accounts as the dashboard manages them (docs/dashboard.md). Each use case runs in
// one transaction where it writes more than one row.

const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** A valid scrypt hash of no one's password: checking against it costs what a real check costs. */
const NOBODY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/**
 * First run: the first hotel and its admin, together. Refused (SETUP_LINK_INVALID) once
 * any hotel exists, e.g. one made with `innsync hotel create` meanwhile.
 */
export async function setUpFirstHotel(
  db: Db,
  input: { slug: string; name: string; email: string; password: string },
): Promise<{ user: staff.StaffUser; hotel: Hotel }> {
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction().execute(async (trx) => {
      if ((await staff.countHotels(trx)) > 0) throw new ApiError('SETUP_LINK_INVALID');
      const now = new Date().toISOString();
      const hotel = await insertHotel(trx, input.slug, input.name.trim(), now);
      const user = await staff.insertUser(trx, { id: newId('user'), hotelId: hotel.id, email: normalizeEmail(input.email), role: 'admin', passwordHash, now });
      return { user, hotel };
    });
  } catch (err) {
    // Another instance's setup created the first hotel at the same moment.
    if (uniqueViolation(err) !== null) throw new ApiError('SETUP_LINK_INVALID');
    throw err;
  }
}

/** The active user with this e-mail and password, with their hotel; null for any failure. */
export async function authenticateStaff(db: Db, email: string, password: string): Promise<{ user: staff.StaffUser; hotel: Hotel } | null> {
  const user = await staff.findUserForLogin(db, normalizeEmail(email));
  // An unknown e-mail costs the same scrypt as a wrong password: the answer time tells nothing.
  const ok = await verifyPassword(password, user?.passwordHash ?? NOBODY_HASH);
  if (!user || !ok || user.deactivatedAt !== null) return null;
  const hotel = await findHotelById(db, user.hotelId);
  return hotel ? { user, hotel } : null;
}

export async function addStaffUser(db: Db, hotelId: string, input: { email: string; role: staff.StaffRole; password: string }): Promise<staff.StaffUser> {
  const passwordHash = await hashPassword(input.password);
  try {
    return await staff.insertUser(db, { id: newId('user'), hotelId, email: normalizeEmail(input.email), role: input.role, passwordHash, now: new Date().toISOString() });
  } catch (err) {
    if (uniqueViolation(err) !== null) throw new ApiError('EMAIL_TAKEN', { extra: { errors: [{ field: 'email', code: 'DUPLICATE', message: 'A user with this e-mail already exists.' }] } });
    throw err;
  }
}

/** Deactivates a user of the hotel and ends their sessions; never the acting admin. */
export async function deactivateStaffUser(db: Db, hotelId: string, userId: string, actingUserId: string): Promise<staff.StaffUser> {
  if (userId === actingUserId) throw new ApiError('CANNOT_DEACTIVATE_SELF');
  return db.transaction().execute(async (trx) => {
    const user = await staff.findUser(trx, hotelId, userId);
    if (!user) throw new ApiError('RECORD_NOT_FOUND', { message: 'No user with this id in your hotel.' });
    const now = new Date().toISOString();
    await staff.deactivateUser(trx, user.id, now);
    return { ...user, deactivatedAt: user.deactivatedAt ?? now };
  });
}
