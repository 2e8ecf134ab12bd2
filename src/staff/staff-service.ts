import type { Db } from '../db/database.js';
import { uniqueViolation } from '../db/database.js';
import { insertHotel, type Hotel } from '../db/repositories/hotel.repository.js';
import * as staff from '../db/repositories/staff.repository.js';
import { checkStaffAccount, EMAIL_MAX, normalizeEmail, PASSWORD_MAX, PASSWORD_MIN } from '../domain/accounts.js';
import { newId } from '../domain/ids.js';
import { ApiError, fieldError, validationError, type FieldError } from '../errors.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { requireStrongPassword } from './password-strength.js';
import { insertSecurityEvent, type ChangedBy, type SecurityEvent } from '../db/repositories/security.repository.js';

// Staff accounts as the dashboard and the command line manage them (docs/dashboard.md,
// "Staff accounts and login"). Each use case runs in one transaction where it writes more
// than one row.

/** A valid scrypt hash of no one's password: checking against it costs what a real check costs. */
const NOBODY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';

/**
 * First run: the first hotel and its admin, together. Refused (SETUP_LINK_INVALID) once
 * any hotel exists, e.g. one made with `innsync hotel create` meanwhile.
 */
export async function setUpFirstHotel(
  db: Db,
  input: { slug: string; name: string; email: string; password: string; timeZone?: string },
): Promise<{ user: staff.StaffUser; hotel: Hotel }> {
  await requireStrongPassword(input.password, { email: input.email, hotelName: input.name });
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction().execute(async (trx) => {
      if ((await staff.countHotels(trx)) > 0) throw setupDone();
      const now = new Date().toISOString();
      const hotel = await insertHotel(trx, input.slug, input.name.trim(), now, input.timeZone ?? 'UTC');
      const user = await staff.insertUser(trx, { id: newId('user'), hotelId: hotel.id, email: normalizeEmail(input.email), role: 'admin', passwordHash, now });
      return { user, hotel };
    });
  } catch (err) {
    // Another instance's setup created the first hotel at the same moment.
    if (uniqueViolation(err) !== null) throw setupDone();
    throw err;
  }
}

/** The setup link once a hotel exists: why it is dead, and what to do instead. */
export function setupDone(): ApiError {
  return new ApiError('SETUP_LINK_INVALID', {
    extra: { hotelExists: true },
    message:
      'A hotel already exists, so the setup link no longer works: sign in, or ask an admin of your hotel for an account (operators: innsync user create).',
  });
}

/** At most this many accounts of one e-mail are tried by a login that names no hotel. */
const MAX_LOGIN_ACCOUNTS = 20;

/**
 * Every login answers no sooner than this many password checks take, whatever the
 * outcome: the answer time does not tell how many accounts an e-mail has (up to this
 * many), not even to someone who holds the password of one of them (say, an admin who
 * gave the e-mail an account at their own hotel, to learn whether it has others). The
 * wait is a timer, not work: it costs no CPU.
 */
export const LOGIN_TIMED_CHECKS = 4;

export type LoginOutcome =
  | { kind: 'ok'; user: staff.StaffUser; hotel: staff.SessionHotel }
  /** The password opens accounts at several hotels: log in again naming one of these. */
  | { kind: 'choose-hotel'; hotels: Array<{ slug: string; name: string }> }
  /** `accounts`: the active accounts of the e-mail the password was tried on (none: no such account). */
  | { kind: 'failed'; accounts: Array<{ userId: string; hotelId: string }> };

/**
 * A login (docs/dashboard.md). E-mails are unique per hotel, so one e-mail may have an
 * active account at several hotels: the password is checked against each (at most
 * MAX_LOGIN_ACCOUNTS), or against the one at `hotelSlug` when the login names a hotel.
 * One match logs in; several ask which hotel, naming only the hotels whose account the
 * password opened, so nothing is told to someone without it. Unknown e-mail, wrong
 * password, deactivated user, a hotel where the e-mail has no account, an account that
 * signs in with passkeys only: 'failed', alike.
 */
export async function authenticateStaff(db: Db, email: string, password: string, hotelSlug?: string): Promise<LoginOutcome> {
  const accounts = await staff.findLoginAccounts(db, normalizeEmail(email), { hotelSlug, limit: MAX_LOGIN_ACCOUNTS });
  // An unknown e-mail costs the same scrypt as a wrong password. The checks run one after
  // another (each the same scrypt), and the answer then waits as long as the checks not
  // needed would have taken, at the pace the ones made took: every login takes the time
  // of LOGIN_TIMED_CHECKS checks.
  const hashes = accounts.length > 0 ? accounts.map((a) => a.passwordHash) : [NOBODY_HASH];
  const started = performance.now();
  const opened: staff.LoginAccount[] = [];
  for (const [i, hash] of hashes.entries()) {
    const account = accounts[i];
    // An account that signs in with passkeys only is checked all the same (the same time)
    // but opens nothing: the same LOGIN_FAILED as a wrong password (docs/dashboard.md, "Passkeys").
    if ((await verifyPassword(password, hash)) && account && !account.passkeysOnly) opened.push(account);
  }
  const perCheck = (performance.now() - started) / hashes.length;
  const wait = (LOGIN_TIMED_CHECKS - hashes.length) * perCheck;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));

  const [first] = opened;
  if (!first) return { kind: 'failed', accounts: accounts.map((a) => ({ userId: a.user.id, hotelId: a.hotel.id })) };
  if (opened.length === 1) return { kind: 'ok', user: first.user, hotel: first.hotel };
  return { kind: 'choose-hotel', hotels: opened.map((a) => ({ slug: a.hotel.slug, name: a.hotel.name })) };
}

/** A staff user as the dashboard's Staff page and `innsync user list` show it (the command line names its id `userId`). */
export function staffUserView(u: staff.StaffUser) {
  return { id: u.id, email: u.email, role: u.role, createdAt: u.createdAt, deactivatedAt: u.deactivatedAt };
}

/** The hotel's staff users, by e-mail. */
export async function listStaffUsers(db: Db, hotelId: string): Promise<Array<ReturnType<typeof staffUserView>>> {
  return (await staff.listUsers(db, hotelId)).map(staffUserView);
}

/** What a 422 says of a rule of checkStaffAccount the input breaks. */
function accountRuleError(problem: 'role' | 'email' | 'password', password: string): FieldError {
  if (problem === 'role') return fieldError('role', 'INVALID_VALUE', 'role must be admin or receptionist.');
  if (problem === 'email') return fieldError('email', 'INVALID_FORMAT', `email must be an e-mail address of at most ${EMAIL_MAX} characters.`);
  return fieldError(
    'password',
    [...password].length < PASSWORD_MIN ? 'TOO_SHORT' : 'TOO_LONG',
    `password must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters.`,
  );
}

/** The hotel as the use cases of its staff accounts need it: its id, and its name (a password must not hold it). */
export interface StaffHotel {
  id: string;
  name: string;
}

/**
 * A new staff user of the hotel, from the dashboard's Staff page or `innsync user create`:
 * the account rules of domain/accounts.ts (checkStaffAccount; a broken one is 422 naming its
 * field), a password not easy to guess (staff/password-strength.ts), the e-mail stored
 * trimmed and in lower case, the password as an scrypt hash.
 */
export async function addStaffUser(
  db: Db,
  hotel: StaffHotel,
  input: { email: string; role: string; password: string },
  by: ChangedBy,
): Promise<staff.StaffUser> {
  const account = checkStaffAccount(input);
  if (!account.ok) throw validationError([accountRuleError(account.problem, input.password)]);
  await requireStrongPassword(input.password, { email: account.email, hotelName: hotel.name });
  const passwordHash = await hashPassword(input.password);
  try {
    return await db.transaction().execute(async (trx) => {
      const now = new Date().toISOString();
      const user = await staff.insertUser(trx, { id: newId('user'), hotelId: hotel.id, email: account.email, role: account.role, passwordHash, now });
      await insertSecurityEvent(trx, { hotelId: hotel.id, kind: 'staff.added', ...by, subjectUserId: user.id, detail: { role: user.role }, at: now });
      return user;
    });
  } catch (err) {
    // (email, hotel_id) is unique (migration 0005): the same e-mail at another hotel is a
    // separate account, and this answer says nothing about other hotels.
    if (uniqueViolation(err) !== null)
      throw new ApiError('EMAIL_TAKEN', {
        extra: { errors: [{ field: 'email', code: 'DUPLICATE', message: 'This hotel already has a user with this e-mail.' }] },
      });
    throw err;
  }
}

/** Deactivates a user of the hotel and ends their sessions; never the acting admin, nor the hotel's last active admin (409 LAST_ADMIN). */
export async function deactivateStaffUser(db: Db, hotelId: string, userId: string, by: ChangedBy): Promise<staff.StaffUser> {
  if (by.actor.type === 'staff' && userId === by.actor.userId) throw new ApiError('CANNOT_DEACTIVATE_SELF');
  return db.transaction().execute(async (trx) => {
    const user = await staff.findUser(trx, hotelId, userId);
    if (!user) throw new ApiError('RECORD_NOT_FOUND', { message: 'No user with this id in your hotel.' });
    if (user.deactivatedAt !== null) return user;
    const now = new Date().toISOString();
    // The hotel keeps an active admin (docs/dashboard.md, "Changing a role"); deactivated meanwhile: as it is.
    if (!(await staff.deactivateUser(trx, hotelId, user.id, now))) {
      const again = await staff.findUser(trx, hotelId, user.id);
      if (again?.deactivatedAt) return again;
      throw new ApiError('LAST_ADMIN', { message: "This is the hotel's last active admin: make another user admin first, then deactivate this one." });
    }
    await insertSecurityEvent(trx, { hotelId, kind: 'staff.deactivated', ...by, subjectUserId: user.id, at: now });
    return { ...user, deactivatedAt: now };
  });
}

/**
 * An admin's or the operator's change of a user's role (docs/dashboard.md, "Changing a
 * role"), with its 'staff.role_changed' entry (`{ from, to }`) in the same transaction.
 * Never the acting admin's own; a deactivated user 409 USER_DEACTIVATED; the hotel's last
 * active admin 409 LAST_ADMIN (staff.setUserRole). The role it has already: nothing is
 * written (`changed: false`). The user's sessions stay: each request reads the role anew.
 */
export async function changeStaffRole(
  db: Db,
  hotelId: string,
  userId: string,
  role: staff.StaffRole,
  by: ChangedBy,
): Promise<{ user: staff.StaffUser; changed: boolean }> {
  if (by.actor.type === 'staff' && userId === by.actor.userId) throw new ApiError('CANNOT_CHANGE_OWN_ROLE');
  return db.transaction().execute(async (trx) => {
    const user = await staff.findUser(trx, hotelId, userId);
    if (!user) throw new ApiError('RECORD_NOT_FOUND', { message: 'No user with this id in your hotel.' });
    if (user.deactivatedAt !== null) throw new ApiError('USER_DEACTIVATED');
    if (user.role === role) return { user, changed: false };
    if (!(await staff.setUserRole(trx, hotelId, user.id, role)))
      // Deactivated meanwhile (PostgreSQL: after the read above), or the last active admin.
      throw new ApiError((await staff.findUser(trx, hotelId, user.id))?.deactivatedAt ? 'USER_DEACTIVATED' : 'LAST_ADMIN');
    await insertSecurityEvent(trx, { hotelId, kind: 'staff.role_changed', ...by, subjectUserId: user.id, detail: { from: user.role, to: role } });
    return { user: { ...user, role }, changed: true };
  });
}

/** Who changes a password or ends sessions: the user themself or an admin (their session), or the operator's command line. */
export type AccountActor = { type: 'staff'; userId: string; clientIp: string } | { type: 'operator' };

function securityActor(actor: AccountActor): { actor: SecurityEvent['actor']; clientIp: string | null } {
  return actor.type === 'staff'
    ? { actor: { type: 'staff', userId: actor.userId }, clientIp: actor.clientIp }
    : { actor: { type: 'operator' }, clientIp: null };
}

/**
 * A user's new password (the account rules of domain/accounts.ts, not easy to guess); their
 * sessions end but `keepSession` (the one that changed it), and 'password.changed' is
 * recorded with the change. The ids of the sessions ended, for their event streams.
 */
export async function setStaffPassword(
  db: Db,
  hotel: StaffHotel,
  userId: string,
  password: string,
  by: { actor: AccountActor; keepSession?: string; field?: string },
): Promise<{ user: staff.StaffUser; ended: string[] }> {
  const found = await staff.findUser(db, hotel.id, userId);
  if (!found) throw new ApiError('RECORD_NOT_FOUND', { message: 'No user with this id in your hotel.' });
  await requireStrongPassword(password, { email: found.email, hotelName: hotel.name }, by.field);
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    const user = await staff.findUser(trx, hotel.id, userId);
    if (!user) throw new ApiError('RECORD_NOT_FOUND', { message: 'No user with this id in your hotel.' });
    const ended = await staff.setPasswordHash(trx, hotel.id, user.id, passwordHash, by.keepSession);
    await insertSecurityEvent(trx, {
      hotelId: hotel.id,
      kind: 'password.changed',
      subjectUserId: user.id,
      ...securityActor(by.actor),
      detail: { sessionsEnded: ended.length },
    });
    return { user, ended };
  });
}

/**
 * The signed-in user's own password change (docs/dashboard.md, "My account"): the current
 * password must be right (else 422 naming `currentPassword`), the new one keeps the rules
 * of setStaffPassword; every other session of the user ends.
 */
export async function changeOwnPassword(
  db: Db,
  session: { id: string; user: staff.StaffUser; hotel: StaffHotel },
  input: { currentPassword: string; newPassword: string; clientIp: string },
): Promise<{ ended: string[] }> {
  const stored = await staff.findPasswordHash(db, session.hotel.id, session.user.id);
  if (stored === null || !(await verifyPassword(input.currentPassword, stored)))
    throw validationError([fieldError('currentPassword', 'INVALID_VALUE', 'currentPassword is not your current password: type it again.')]);
  const actor: AccountActor = { type: 'staff', userId: session.user.id, clientIp: input.clientIp };
  const { ended } = await setStaffPassword(db, session.hotel, session.user.id, input.newPassword, { actor, keepSession: session.id, field: 'newPassword' });
  return { ended };
}

/**
 * Ends sessions of a user (docs/dashboard.md, "My account"), with its security entry in the
 * same transaction: `only` one (the user ending one of their own: 'session.ended'), or all
 * but `except` (the user's "End all others"), or all (an admin, or the operator: both
 * 'sessions.ended'). The ids ended, for their event streams; none is an empty list.
 */
export async function endStaffSessions(
  db: Db,
  hotelId: string,
  userId: string,
  which: { only?: string; except?: string },
  actor: AccountActor,
): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const ended = await staff.deleteUserSessions(trx, hotelId, userId, which);
    if (ended.length === 0) return ended;
    const kind = which.only !== undefined ? 'session.ended' : 'sessions.ended';
    const detail = { count: ended.length, scope: which.only !== undefined ? 'one' : which.except !== undefined ? 'others' : 'all' };
    await insertSecurityEvent(trx, { hotelId, kind, subjectUserId: userId, ...securityActor(actor), detail });
    return ended;
  });
}
