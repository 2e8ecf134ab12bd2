import type { Db } from './db/database.js';
import { allHotels, findHotelBySlug, insertHotel, setHotelTimeZone, type Hotel } from './db/repositories/hotel.repository.js';
import { markRateLimitsReset } from './db/repositories/api-key.repository.js';
import { deleteCounters } from './db/repositories/rate-limit.repository.js';
import { keyCounterNames } from './rate-limit/limits.js';
import { ApiError, CliError, PASSWORD_REFUSALS } from './errors.js';
import {
  checkStaffAccount,
  HOTEL_NAME_MAX,
  isStaffPassword,
  isTimeZone,
  normalizeEmail,
  PASSWORD_MAX,
  PASSWORD_MIN,
  SLUG_PATTERN,
  SLUG_RULE,
  STAFF_ROLES,
  TIME_ZONE_RULE,
} from './domain/accounts.js';
import { changePair, issuePair, keyPairViews, revokePair } from './keys/key-pairs.js';
import { checkRestrictionChanges, NO_RESTRICTIONS, type KeyRestrictions, type RestrictionChanges } from './keys/restrictions.js';
import { addStaffUser, changeStaffRole, deactivateStaffUser, listStaffUsers, setStaffPassword } from './staff/staff-service.js';
import { OPERATOR, type ChangedBy } from './db/repositories/security.repository.js';
import * as staffRepo from './db/repositories/staff.repository.js';
import { deviceName, liveUserSessions, publicSessionId } from './staff/sessions.js';
import { resetFactors, setSecondFactorRequirement } from './staff/factors.js';

// Operator use cases of the command line, by a hotel's slug. Where the dashboard does the
// same (a hotel's key pairs and staff users), both call one use case (keys/key-pairs.ts,
// staff/staff-service.ts); these find the hotel and word a refusal for the command line.

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

/** The command line's option of each restriction (keys/restrictions.ts), to name it in a refusal. */
const RESTRICTION_OPTIONS: Record<string, string> = { networks: '--networks', expiresOn: '--expires' };

/** The restrictions checked, or an INVALID_ARGUMENT naming each option and its fix. */
function checkedRestrictions(changes: RestrictionChanges): RestrictionChanges {
  const checked = checkRestrictionChanges(changes);
  if (checked.ok) return checked.changes;
  const words = checked.errors.map((e) => `${RESTRICTION_OPTIONS[e.field] ?? e.field}: ${e.message}`);
  throw new OperationError('INVALID_ARGUMENT', [...new Set(words)].join('\n'));
}

/**
 * Issues a live/test pair (keys/key-pairs.ts issuePair): with `restrictions` (checked
 * here), counted against `maxActive` (MAX_KEY_PAIRS_PER_HOTEL), its security entry
 * written for `by` (the operator unless given).
 */
export async function issueKeyPair(
  db: Db,
  slug: string,
  opts: { maxActive?: number; restrictions?: RestrictionChanges; by?: ChangedBy } = {},
): Promise<IssuedKeyPair> {
  const hotel = await findHotelBySlug(db, slug);
  if (!hotel) throw notFound(slug);
  const restrictions = { ...NO_RESTRICTIONS, ...checkedRestrictions(opts.restrictions ?? {}) };
  return issuePair(db, hotel.id, { maxActive: opts.maxActive, restrictions, by: opts.by ?? OPERATOR });
}

/** Revokes both keys of the pair at once. */
export async function revokeKeys(db: Db, keyId: string): Promise<void> {
  if (!(await revokePair(db, keyId, OPERATOR))) throw new OperationError('KEY_PAIR_NOT_FOUND', `no key pair with id "${keyId}"`);
}

/** `innsync key set`: changes what an active pair of the hotel may do; its restrictions after. */
export async function changeKeyRestrictions(db: Db, slug: string, keyId: string, changes: RestrictionChanges): Promise<KeyRestrictions> {
  const hotel = await hotelBySlug(db, slug);
  const after = await changePair(db, keyId, checkedRestrictions(changes), OPERATOR, hotel.id);
  if (!after)
    throw new OperationError('KEY_PAIR_NOT_FOUND', `hotel "${slug}" has no active key pair with id "${keyId}": innsync key list ${slug} shows its key pairs`);
  return after;
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

/** The command line's words for a rule of a new staff account it breaks (checkStaffAccount, domain/accounts.ts). */
const ACCOUNT_RULE_WORDS = {
  role: () => '--role must be admin or receptionist',
  email: (email: string) => `invalid e-mail address "${email}"`,
  password: () => `the password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`,
};

export async function createStaffUser(db: Db, slug: string, email: string, role: string, password: string): Promise<CreatedUser> {
  const hotel = await hotelBySlug(db, slug);
  // addStaffUser checks the same rules (as a 422 for the dashboard): checked here first to word the refusal.
  const account = checkStaffAccount({ email, role, password });
  if (!account.ok) throw new OperationError('INVALID_ARGUMENT', ACCOUNT_RULE_WORDS[account.problem](email));
  try {
    const user = await addStaffUser(db, hotel, { email, role, password }, OPERATOR);
    return { userId: user.id, email: user.email, role: user.role };
  } catch (err) {
    // E-mails are unique per hotel, held by the database (migration 0005); the same
    // e-mail at another hotel is a separate account.
    if (err instanceof ApiError && err.code === 'EMAIL_TAKEN')
      throw new OperationError('USER_EXISTS', `hotel "${slug}" already has a user with e-mail ${account.email}`);
    throw passwordRefusal(err);
  }
}

/** A password refused as easy to guess (a 422 of the use case) becomes the command's failure of the same code; anything else stays as it is. */
function passwordRefusal(err: unknown): unknown {
  const first = err instanceof ApiError ? (err.extra.errors as Array<{ code: string }> | undefined)?.[0] : undefined;
  const code = Object.keys(PASSWORD_REFUSALS).find((c) => c === first?.code) as keyof typeof PASSWORD_REFUSALS | undefined;
  return code ? new OperationError(code, PASSWORD_REFUSALS[code]) : err;
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

/** A hotel's key pairs (never a key), as the dashboard's Keys page lists them. */
export async function listKeys(db: Db, slug: string) {
  return keyPairViews(db, (await hotelBySlug(db, slug)).id);
}

/** A hotel's staff users, as the dashboard's Staff page lists them, each id named `userId`. */
export async function listStaff(db: Db, slug: string) {
  const users = await listStaffUsers(db, (await hotelBySlug(db, slug)).id);
  return users.map(({ id, ...user }) => ({ userId: id, ...user }));
}

/** The hotel's user with this e-mail (as typed: trimmed, lower case). */
async function staffByEmail(db: Db, hotel: Hotel, email: string): Promise<staffRepo.StaffUser> {
  const normalized = normalizeEmail(email);
  const user = (await staffRepo.listUsers(db, hotel.id)).find((u) => u.email === normalized);
  if (!user) throw new OperationError('USER_NOT_FOUND', `hotel "${hotel.slug}" has no user with e-mail ${normalized}`);
  return user;
}

/** Deactivates the user (their sessions end); an operator may deactivate any user. */
export async function deactivateStaff(db: Db, slug: string, email: string): Promise<{ userId: string; email: string; deactivatedAt: string }> {
  const hotel = await hotelBySlug(db, slug);
  const user = await deactivateStaffUser(db, hotel.id, (await staffByEmail(db, hotel, email)).id, OPERATOR);
  return { userId: user.id, email: user.email, deactivatedAt: user.deactivatedAt ?? '' };
}

/**
 * `innsync user role`: the user's new role, as an admin's change on the Staff page, with a
 * 'staff.role_changed' entry (actor: operator); the hotel's last active admin stays one
 * (409 LAST_ADMIN). `changed: false` when the user had the role already (nothing written).
 */
export async function setStaffRole(
  db: Db,
  slug: string,
  email: string,
  role: string,
): Promise<{ userId: string; email: string; role: staffRepo.StaffRole; changed: boolean }> {
  const wanted = STAFF_ROLES.find((r) => r === role);
  if (!wanted) throw new OperationError('INVALID_ARGUMENT', `"${role}" is neither admin nor receptionist: innsync user role <slug> <email> admin|receptionist`);
  const hotel = await hotelBySlug(db, slug);
  const { user, changed } = await changeStaffRole(db, hotel.id, (await staffByEmail(db, hotel, email)).id, wanted, OPERATOR);
  return { userId: user.id, email: user.email, role: user.role, changed };
}

export async function setStaffPasswordByEmail(
  db: Db,
  slug: string,
  email: string,
  password: string,
): Promise<{ userId: string; email: string; passwordChanged: true }> {
  if (!isStaffPassword(password)) throw new OperationError('INVALID_ARGUMENT', ACCOUNT_RULE_WORDS.password());
  const hotel = await hotelBySlug(db, slug);
  const userId = (await staffByEmail(db, hotel, email)).id;
  try {
    const { user } = await setStaffPassword(db, hotel, userId, password, { actor: { type: 'operator' } });
    return { userId: user.id, email: user.email, passwordChanged: true };
  } catch (err) {
    throw passwordRefusal(err);
  }
}

/** A session as `innsync user sessions` lists it (docs/dashboard.md, "My account"). */
export interface ListedSession {
  id: string;
  device: string;
  ip: string | null;
  createdAt: string;
  lastSeenAt: string;
  display: boolean;
}

/** The user's live sessions, the most recently seen first, each named by its public id's first 12 characters. */
export async function listStaffSessions(db: Db, slug: string, email: string): Promise<{ email: string; sessions: ListedSession[] }> {
  const hotel = await hotelBySlug(db, slug);
  const user = await staffByEmail(db, hotel, email);
  const sessions = (await liveUserSessions(db, hotel.id, user.id)).map((s) => ({
    id: publicSessionId(s.id).slice(0, 12),
    device: deviceName(s.userAgent),
    ip: s.clientIp,
    createdAt: s.createdAt,
    lastSeenAt: s.lastSeenAt,
    display: s.display,
  }));
  return { email: user.email, sessions };
}

/** `innsync hotel require-mfa`: the hotel's rule that every staff sign-in needs a second factor (as the dashboard's Staff page sets it). */
export async function requireSecondFactor(db: Db, slug: string, setting: string): Promise<{ slug: string; requireSecondFactor: boolean }> {
  if (setting !== 'on' && setting !== 'off')
    throw new OperationError('INVALID_ARGUMENT', `"${setting}" is neither on nor off: innsync hotel require-mfa <slug> on|off`);
  const hotel = await hotelBySlug(db, slug);
  await setSecondFactorRequirement(db, hotel.id, setting === 'on', OPERATOR);
  return { slug: hotel.slug, requireSecondFactor: setting === 'on' };
}

/** `innsync user mfa-reset`: removes every second factor of the user (a lost phone and codes); their sessions end. */
export async function resetStaffFactors(db: Db, slug: string, email: string): Promise<{ userId: string; email: string; factorsReset: true }> {
  const hotel = await hotelBySlug(db, slug);
  const user = await staffByEmail(db, hotel, email);
  await resetFactors(db, { id: user.id, hotelId: hotel.id }, { ...OPERATOR, keepSessionId: null });
  return { userId: user.id, email: user.email, factorsReset: true };
}
