import { randomBytes } from 'node:crypto';
import type { Db } from './db/database.js';
import { allHotels, findHotelBySlug, insertHotel, lockHotel, setHotelTimeZone, type Hotel } from './db/repositories/hotel.repository.js';
import { countActiveKeyPairs, insertKeyPair, keyPairExists, listKeyPairs, markRateLimitsReset, revokeKeyPair } from './db/repositories/api-key.repository.js';
import { deleteCounters } from './db/repositories/rate-limit.repository.js';
import { keyCounterNames } from './rate-limit/limits.js';
import { newId, sha256Hex } from './domain/ids.js';
import { ApiError, CliError } from './errors.js';
import {
  EMAIL_MAX,
  HOTEL_NAME_MAX,
  isEmailAddress,
  isTimeZone,
  PASSWORD_MAX,
  PASSWORD_MIN,
  SLUG_PATTERN,
  SLUG_RULE,
  TIME_ZONE_RULE,
} from './domain/accounts.js';
import { addStaffUser, deactivateStaffUser, setStaffPassword } from './staff/staff-service.js';
import * as staffRepo from './db/repositories/staff.repository.js';

// Operator use cases of the command line (the dashboard's routes call the same staff and
// key services). They call the repositories directly, never HTTP.

/** An operator use case refused: its code (CLI_ERRORS in errors.ts) and a sentence naming the fix. */
export class OperationError extends CliError {}

const SLUG = new RegExp(SLUG_PATTERN);

export async function createHotel(db: Db, slug: string, name: string, timeZone = 'UTC'): Promise<Hotel> {
  if (!SLUG.test(slug)) throw new OperationError('INVALID_ARGUMENT', `invalid slug "${slug}": use ${SLUG_RULE}`);
  if (!isTimeZone(timeZone)) throw new OperationError('INVALID_ARGUMENT', `unknown time zone "${timeZone}": use ${TIME_ZONE_RULE}`);
  if (name.trim() === '') throw new OperationError('INVALID_ARGUMENT', 'the hotel name must not be empty');
  if (name.trim().length > HOTEL_NAME_MAX) throw new OperationError('INVALID_ARGUMENT', `the hotel name must be at most ${HOTEL_NAME_MAX} characters`);
  if (await findHotelBySlug(db, slug)) throw new OperationError('HOTEL_EXISTS', `a hotel with slug "${slug}" already exists`);
  return insertHotel(db, slug, name.trim(), new Date().toISOString(), timeZone);
}

/** Sets a hotel's IANA time zone, its "today" on the board (as the dashboard's Staff page does); checked as createHotel checks it. */
export async function changeHotelTimeZone(db: Db, slug: string, timeZone: string): Promise<{ slug: string; name: string; timeZone: string }> {
  if (!isTimeZone(timeZone)) throw new OperationError('INVALID_ARGUMENT', `unknown time zone "${timeZone}": use ${TIME_ZONE_RULE}`);
  const hotel = await hotelBySlug(db, slug);
  await setHotelTimeZone(db, hotel.id, timeZone);
  return { slug: hotel.slug, name: hotel.name, timeZone };
}

export interface IssuedKeyPair {
  keyId: string;
  live: string;
  test: string;
}

const plainKey = (mode: 'live' | 'test'): string => `pms_${mode}_${randomBytes(24).toString('base64url')}`;

/**
 * Issues a live/test pair; the plain keys exist only in the return value (stored as SHA-256).
 * `maxActive` (MAX_KEY_PAIRS_PER_HOTEL, passed by the CLI and the dashboard): a hotel that
 * already holds that many active pairs gets 409 KEY_PAIR_LIMIT. They are counted in the
 * transaction that inserts, under the hotel's lock (SQLite: one writer at a time), so two
 * issues at once cannot both take the last place.
 */
export async function issueKeyPair(db: Db, slug: string, opts: { maxActive?: number } = {}): Promise<IssuedKeyPair> {
  const hotel = await findHotelBySlug(db, slug);
  if (!hotel) throw notFound(slug);
  const keyId = newId('key');
  const live = plainKey('live');
  const test = plainKey('test');
  await db.transaction().execute(async (trx) => {
    if (opts.maxActive !== undefined) {
      await lockHotel(trx, hotel.id, 'exclusive');
      const active = await countActiveKeyPairs(trx, hotel.id);
      if (active >= opts.maxActive) throw new ApiError('KEY_PAIR_LIMIT', { extra: { limit: opts.maxActive } });
    }
    await insertKeyPair(trx, { pairId: keyId, hotelId: hotel.id, liveHash: sha256Hex(live), testHash: sha256Hex(test), now: new Date().toISOString() });
  });
  return { keyId, live, test };
}

/** Revokes both keys of the pair at once. */
export async function revokeKeys(db: Db, keyId: string): Promise<void> {
  if (!(await keyPairExists(db, keyId))) throw new OperationError('KEY_PAIR_NOT_FOUND', `no key pair with id "${keyId}"`);
  await revokeKeyPair(db, keyId, new Date().toISOString());
}

/**
 * Both keys of the pair start every endpoint limit afresh, while the server runs: counters
 * in the database (PostgreSQL) are deleted; a server counting in memory (SQLite) reads the
 * reset time with the key at its next request and forgets the counts made before it.
 */
export async function resetKeyLimits(db: Db, keyId: string): Promise<void> {
  const keys = await db.transaction().execute(async (trx) => {
    const ids = await markRateLimitsReset(trx, keyId, new Date().toISOString());
    await deleteCounters(trx, ids.flatMap(keyCounterNames));
    return ids;
  });
  if (keys.length === 0) throw new OperationError('KEY_PAIR_NOT_FOUND', `no key pair with id "${keyId}": innsync key list <slug> shows a hotel's key pairs`);
}

// Staff passwords (scrypt) live with the staff module; re-exported for the CLI's callers.
export { hashPassword, verifyPassword } from './staff/passwords.js';

export interface CreatedUser {
  userId: string;
  email: string;
  role: 'admin' | 'receptionist';
}

/** A new password's rule, as the dashboard's schemas state it (PASSWORD_MIN to PASSWORD_MAX characters). */
function checkPassword(password: string): void {
  if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX)
    throw new OperationError('INVALID_ARGUMENT', `the password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
}

export async function createStaffUser(db: Db, slug: string, email: string, role: string, password: string): Promise<CreatedUser> {
  const hotel = await findHotelBySlug(db, slug);
  if (!hotel) throw notFound(slug);
  if (role !== 'admin' && role !== 'receptionist') throw new OperationError('INVALID_ARGUMENT', '--role must be admin or receptionist');
  const normalized = email.trim().toLowerCase();
  if (!isEmailAddress(normalized) || normalized.length > EMAIL_MAX) throw new OperationError('INVALID_ARGUMENT', `invalid e-mail address "${email}"`);
  checkPassword(password);
  try {
    const user = await addStaffUser(db, hotel.id, { email: normalized, role, password });
    return { userId: user.id, email: user.email, role: user.role };
  } catch (err) {
    // E-mails are unique per hotel, held by the database (migration 0005); the same
    // e-mail at another hotel is a separate account.
    if (err instanceof ApiError && err.code === 'EMAIL_TAKEN')
      throw new OperationError('USER_EXISTS', `hotel "${slug}" already has a user with e-mail ${normalized}`);
    throw err;
  }
}

/** Every hotel, by slug. */
export async function listHotels(db: Db): Promise<Array<{ slug: string; name: string; timeZone: string; createdAt: string }>> {
  return (await allHotels(db)).map((h) => ({ slug: h.slug, name: h.name, timeZone: h.timeZone, createdAt: h.createdAt }));
}

/** The hotel with this slug, or HOTEL_NOT_FOUND naming where the slugs are listed. */
export async function hotelBySlug(db: Db, slug: string): Promise<Hotel> {
  const hotel = await findHotelBySlug(db, slug);
  if (!hotel) throw notFound(slug);
  return hotel;
}

function notFound(slug: string): OperationError {
  return new OperationError('HOTEL_NOT_FOUND', `no hotel with slug "${slug}": innsync hotel list shows every hotel's slug`);
}

/** A hotel's key pairs as the Keys page lists them (never a key). */
export async function listKeys(db: Db, slug: string) {
  const pairs = await listKeyPairs(db, (await hotelBySlug(db, slug)).id);
  return pairs.map((p) => ({ keyId: p.pairId, createdAt: p.createdAt, revokedAt: p.revokedAt, lastUsedAt: lastUse(p) }));
}

/** The later of the pair's two keys' last uses. */
export function lastUse(p: { liveLastUsedAt: string | null; testLastUsedAt: string | null }): string | null {
  return (
    [p.liveLastUsedAt, p.testLastUsedAt]
      .filter((x): x is string => x !== null)
      .sort()
      .pop() ?? null
  );
}

export async function listStaff(db: Db, slug: string) {
  const users = await staffRepo.listUsers(db, (await hotelBySlug(db, slug)).id);
  return users.map((u) => ({ userId: u.id, email: u.email, role: u.role, createdAt: u.createdAt, deactivatedAt: u.deactivatedAt }));
}

/** The hotel's user with this e-mail (as typed: trimmed, lower case). */
async function staffByEmail(db: Db, hotel: Hotel, email: string): Promise<staffRepo.StaffUser> {
  const normalized = email.trim().toLowerCase();
  const user = (await staffRepo.listUsers(db, hotel.id)).find((u) => u.email === normalized);
  if (!user) throw new OperationError('USER_NOT_FOUND', `hotel "${hotel.slug}" has no user with e-mail ${normalized}`);
  return user;
}

/** Deactivates the user (their sessions end); an operator may deactivate any user. */
export async function deactivateStaff(db: Db, slug: string, email: string): Promise<{ userId: string; email: string; deactivatedAt: string }> {
  const hotel = await hotelBySlug(db, slug);
  const user = await deactivateStaffUser(db, hotel.id, (await staffByEmail(db, hotel, email)).id, null);
  return { userId: user.id, email: user.email, deactivatedAt: user.deactivatedAt ?? '' };
}

export async function setStaffPasswordByEmail(
  db: Db,
  slug: string,
  email: string,
  password: string,
): Promise<{ userId: string; email: string; passwordChanged: true }> {
  checkPassword(password);
  const hotel = await hotelBySlug(db, slug);
  const user = await setStaffPassword(db, hotel.id, (await staffByEmail(db, hotel, email)).id, password);
  return { userId: user.id, email: user.email, passwordChanged: true };
}
