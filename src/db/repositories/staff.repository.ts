import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../schema.js';
import { isPostgres, type DbOrTrx } from '../database.js';

export type StaffRole = 'admin' | 'receptionist';

export interface StaffUser {
  id: string;
  hotelId: string;
  email: string;
  role: StaffRole;
  createdAt: string;
  deactivatedAt: string | null;
}

/** A full session, or a sign-in still waiting for its second factor or for the enrolment of one. */
export type SessionStage = 'full' | 'second_factor' | 'enrol';

export interface StaffSession {
  /** SHA-256 of the cookie token. */
  id: string;
  csrfToken: string;
  createdAt: string;
  lastSeenAt: string;
  /** A front-desk display: the board read-only, no idle expiry. */
  display: boolean;
  /** The passkey this session was signed in with (docs/dashboard.md, "Passkeys"); null: the password. */
  passkeyId: string | null;
  stage: SessionStage;
  user: StaffUser;
  hotel: SessionHotel;
}

/** The hotel as a session carries it. */
export interface SessionHotel {
  id: string;
  slug: string;
  name: string;
  timeZone: string;
}

type UserRow = { id: string; hotel_id: string; email: string; role: StaffRole; created_at: string; deactivated_at: string | null };

function toUser(r: UserRow): StaffUser {
  return { id: r.id, hotelId: r.hotel_id, email: r.email, role: r.role, createdAt: r.created_at, deactivatedAt: r.deactivated_at };
}

/** An active account a login may open: the user, their hotel and the password hash to check. */
export interface LoginAccount {
  user: StaffUser;
  hotel: SessionHotel;
  passwordHash: string;
  /** The user signs in with passkeys only (and has one): the password opens nothing. */
  passkeysOnly: boolean;
}

/**
 * The active accounts with this (lower-cased) e-mail, one per hotel (e-mails are unique
 * per hotel), by hotel slug, at most `limit`; only the one at `hotelSlug` when given.
 */
export async function findLoginAccounts(db: DbOrTrx, email: string, opts: { hotelSlug?: string; limit: number }): Promise<LoginAccount[]> {
  let q = db
    .selectFrom('staff_users')
    .innerJoin('hotels', 'hotels.id', 'staff_users.hotel_id')
    .select([
      'staff_users.id',
      'staff_users.hotel_id',
      'staff_users.email',
      'staff_users.role',
      'staff_users.password_hash',
      'staff_users.created_at',
      'staff_users.deactivated_at',
      'hotels.slug',
      'hotels.name',
      'hotels.time_zone',
      'staff_users.passkeys_only',
      (eb) =>
        eb
          .exists(
            eb
              .selectFrom('staff_passkeys')
              .select('staff_passkeys.id')
              .whereRef('staff_passkeys.hotel_id', '=', 'staff_users.hotel_id')
              .whereRef('staff_passkeys.user_id', '=', 'staff_users.id'),
          )
          .as('has_passkey'),
    ])
    .where('staff_users.email', '=', email)
    .where('staff_users.deactivated_at', 'is', null);
  if (opts.hotelSlug !== undefined) q = q.where('hotels.slug', '=', opts.hotelSlug);
  const rows = await q.orderBy('hotels.slug').limit(opts.limit).execute();
  return rows.map((r) => ({
    user: toUser(r),
    hotel: { id: r.hotel_id, slug: r.slug, name: r.name, timeZone: r.time_zone },
    passwordHash: r.password_hash,
    passkeysOnly: Number(r.passkeys_only) === 1 && Boolean(r.has_passkey),
  }));
}

/** The password hash of an active user of the hotel, for a password entered again; null when none. */
export async function findPasswordHash(db: DbOrTrx, hotelId: string, userId: string): Promise<string | null> {
  const r = await db
    .selectFrom('staff_users')
    .select('password_hash')
    .where('hotel_id', '=', hotelId)
    .where('id', '=', userId)
    .where('deactivated_at', 'is', null)
    .executeTakeFirst();
  return r?.password_hash ?? null;
}

export async function insertUser(
  db: DbOrTrx,
  u: { id: string; hotelId: string; email: string; role: StaffRole; passwordHash: string; now: string },
): Promise<StaffUser> {
  await db
    .insertInto('staff_users')
    .values({ id: u.id, hotel_id: u.hotelId, email: u.email, role: u.role, password_hash: u.passwordHash, created_at: u.now, deactivated_at: null })
    .execute();
  return { id: u.id, hotelId: u.hotelId, email: u.email, role: u.role, createdAt: u.now, deactivatedAt: null };
}

export async function listUsers(db: DbOrTrx, hotelId: string): Promise<StaffUser[]> {
  const rows = await db
    .selectFrom('staff_users')
    .select(['id', 'hotel_id', 'email', 'role', 'created_at', 'deactivated_at'])
    .where('hotel_id', '=', hotelId)
    .orderBy('email')
    .execute();
  return rows.map(toUser);
}

export async function findUser(db: DbOrTrx, hotelId: string, userId: string): Promise<StaffUser | null> {
  const r = await db
    .selectFrom('staff_users')
    .select(['id', 'hotel_id', 'email', 'role', 'created_at', 'deactivated_at'])
    .where('hotel_id', '=', hotelId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return r ? toUser(r) : null;
}

/**
 * Marks the user deactivated and ends every session of theirs, in the caller's transaction;
 * an admin only while another active admin of the hotel remains (anotherActiveAdmin, under lockActiveAdmins). Whether the
 * row changed: false when already deactivated (or unknown) or the last active admin.
 */
export async function deactivateUser(trx: DbOrTrx, hotelId: string, userId: string, now: string): Promise<boolean> {
  await lockActiveAdmins(trx, hotelId);
  const res = await trx
    .updateTable('staff_users')
    .set({ deactivated_at: now })
    .where('hotel_id', '=', hotelId)
    .where('id', '=', userId)
    .where('deactivated_at', 'is', null)
    .where((eb) => eb.or([eb('role', '!=', 'admin'), anotherActiveAdmin(eb, hotelId, userId)]))
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return false;
  await trx.deleteFrom('staff_sessions').where('hotel_id', '=', hotelId).where('user_id', '=', userId).execute();
  return true;
}

/**
 * The hotel keeps an active admin (docs/dashboard.md, "Changing a role"): a demotion or an
 * admin's deactivation is one conditional UPDATE whose EXISTS (anotherActiveAdmin) is read
 * with the UPDATE itself, not before it. That is enough on SQLite, which runs one write
 * transaction at a time. On PostgreSQL (READ COMMITTED) two such changes at once, of admins
 * A and B, could each still see the other active and both succeed; so each first locks the
 * rows of the hotel's active admins (in id order): the second waits for the first to
 * commit, and its UPDATE, a new statement, then sees the first's change.
 */
async function lockActiveAdmins(trx: DbOrTrx, hotelId: string): Promise<void> {
  if (!isPostgres(trx)) return;
  await trx
    .selectFrom('staff_users')
    .select('id')
    .where('hotel_id', '=', hotelId)
    .where('role', '=', 'admin')
    .where('deactivated_at', 'is', null)
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

/** Whether an active admin of the hotel other than this user exists, read inside an UPDATE's WHERE. */
function anotherActiveAdmin(eb: ExpressionBuilder<Database, 'staff_users'>, hotelId: string, userId: string) {
  return eb.exists(
    eb
      .selectFrom('staff_users as other')
      .select('other.id')
      .where('other.hotel_id', '=', hotelId)
      .where('other.id', '!=', userId)
      .where('other.role', '=', 'admin')
      .where('other.deactivated_at', 'is', null),
  );
}

/**
 * Sets the role of an active user of the hotel, in the caller's transaction; a demotion (to
 * receptionist) only while another active admin of the hotel remains (lockActiveAdmins).
 * Whether the row changed: false when the user is deactivated (or unknown) or is the last
 * active admin.
 */
export async function setUserRole(trx: DbOrTrx, hotelId: string, userId: string, role: StaffRole): Promise<boolean> {
  const demotion = role !== 'admin';
  if (demotion) await lockActiveAdmins(trx, hotelId);
  const res = await trx
    .updateTable('staff_users')
    .set({ role })
    .where('hotel_id', '=', hotelId)
    .where('id', '=', userId)
    .where('deactivated_at', 'is', null)
    .$if(demotion, (q) => q.where((eb) => anotherActiveAdmin(eb, hotelId, userId)))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * A new password hash; the user's sessions end (whoever knew the old password is logged
 * out), but `keep` (the session that changed it). The ids of the sessions ended.
 */
export async function setPasswordHash(trx: DbOrTrx, hotelId: string, userId: string, passwordHash: string, keep?: string): Promise<string[]> {
  await trx.updateTable('staff_users').set({ password_hash: passwordHash }).where('hotel_id', '=', hotelId).where('id', '=', userId).execute();
  return deleteUserSessions(trx, hotelId, userId, { except: keep });
}

export async function insertSession(
  db: DbOrTrx,
  s: {
    id: string;
    userId: string;
    hotelId: string;
    csrfToken: string;
    now: string;
    display: boolean;
    passkeyId?: string | null;
    pairedDisplayId?: string | null;
    userAgent: string | null;
    clientIp: string | null;
    stage?: SessionStage;
  },
): Promise<void> {
  await db
    .insertInto('staff_sessions')
    .values({
      id: s.id,
      user_id: s.userId,
      hotel_id: s.hotelId,
      csrf_token: s.csrfToken,
      created_at: s.now,
      last_seen_at: s.now,
      display: s.display ? 1 : 0,
      passkey_id: s.passkeyId ?? null,
      paired_display_id: s.pairedDisplayId ?? null,
      user_agent: s.userAgent,
      client_ip: s.clientIp,
      stage: s.stage ?? 'full',
    })
    .execute();
}

/** A session as the My account page and `innsync user sessions` list it (docs/dashboard.md, "My account"). */
export interface SessionDetails {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  display: boolean;
  userAgent: string | null;
  clientIp: string | null;
  /** A sign-in still waiting for its second factor or enrolment expires sooner (staff/sessions.ts). */
  stage: SessionStage;
}

/** The user's sessions, the most recently seen first (expired ones too, until purged: the caller filters). */
export async function listUserSessions(db: DbOrTrx, hotelId: string, userId: string): Promise<SessionDetails[]> {
  const rows = await db
    .selectFrom('staff_sessions')
    .select(['id', 'created_at', 'last_seen_at', 'display', 'user_agent', 'client_ip', 'stage'])
    .where('hotel_id', '=', hotelId)
    .where('user_id', '=', userId)
    .orderBy('last_seen_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    display: Number(r.display) === 1,
    userAgent: r.user_agent,
    clientIp: r.client_ip,
    stage: r.stage,
  }));
}

/**
 * Ends sessions of the user, in the caller's transaction: `only` one of them, or all but
 * `except`, or all. The ids ended (their event streams are closed by the caller).
 */
export async function deleteUserSessions(trx: DbOrTrx, hotelId: string, userId: string, which: { only?: string; except?: string } = {}): Promise<string[]> {
  let q = trx.deleteFrom('staff_sessions').where('hotel_id', '=', hotelId).where('user_id', '=', userId);
  if (which.only !== undefined) q = q.where('id', '=', which.only);
  if (which.except !== undefined) q = q.where('id', '!=', which.except);
  const rows = await q.returning('id').execute();
  return rows.map((r) => r.id);
}

/** Ends every session that signed in through this pairing of the hotel, in the caller's transaction; the ids ended. */
export async function deletePairedDisplaySessions(trx: DbOrTrx, hotelId: string, pairedDisplayId: string): Promise<string[]> {
  const rows = await trx
    .deleteFrom('staff_sessions')
    .where('hotel_id', '=', hotelId)
    .where('paired_display_id', '=', pairedDisplayId)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** The session with this id and its (active) user and hotel; null when unknown or the user is deactivated. */
export async function findSession(db: DbOrTrx, id: string): Promise<StaffSession | null> {
  const r = await db
    .selectFrom('staff_sessions')
    .innerJoin('staff_users', 'staff_users.id', 'staff_sessions.user_id')
    .innerJoin('hotels', 'hotels.id', 'staff_sessions.hotel_id')
    .select([
      'staff_sessions.id',
      'staff_sessions.csrf_token',
      'staff_sessions.created_at',
      'staff_sessions.last_seen_at',
      'staff_sessions.display',
      'staff_sessions.passkey_id',
      'staff_sessions.stage',
      'staff_users.id as user_id',
      'staff_users.email',
      'staff_users.role',
      'staff_users.created_at as user_created_at',
      'staff_users.deactivated_at',
      'hotels.id as hotel_id',
      'hotels.slug',
      'hotels.name',
      'hotels.time_zone',
    ])
    .where('staff_sessions.id', '=', id)
    .executeTakeFirst();
  if (!r || r.deactivated_at !== null) return null;
  return {
    id: r.id,
    csrfToken: r.csrf_token,
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    display: Number(r.display) === 1,
    passkeyId: r.passkey_id,
    stage: r.stage,
    user: { id: r.user_id, hotelId: r.hotel_id, email: r.email, role: r.role, createdAt: r.user_created_at, deactivatedAt: null },
    hotel: { id: r.hotel_id, slug: r.slug, name: r.name, timeZone: r.time_zone },
  };
}

/** Times of these sessions whose user is still active (for re-checking open event streams). */
export async function findActiveSessionTimes(
  db: DbOrTrx,
  ids: string[],
): Promise<Array<{ id: string; createdAt: string; lastSeenAt: string; display: boolean }>> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('staff_sessions')
    .innerJoin('staff_users', 'staff_users.id', 'staff_sessions.user_id')
    .select(['staff_sessions.id', 'staff_sessions.created_at', 'staff_sessions.last_seen_at', 'staff_sessions.display'])
    .where('staff_sessions.id', 'in', ids)
    .where('staff_users.deactivated_at', 'is', null)
    .execute();
  return rows.map((r) => ({ id: r.id, createdAt: r.created_at, lastSeenAt: r.last_seen_at, display: Number(r.display) === 1 }));
}

export async function touchSession(db: DbOrTrx, hotelId: string, id: string, now: string): Promise<void> {
  await db.updateTable('staff_sessions').set({ last_seen_at: now }).where('hotel_id', '=', hotelId).where('id', '=', id).execute();
}

export async function deleteSession(db: DbOrTrx, hotelId: string, id: string): Promise<void> {
  await db.deleteFrom('staff_sessions').where('hotel_id', '=', hotelId).where('id', '=', id).execute();
}

/** Sessions idle since before `idleCutoff` (displays have no idle expiry) or created before `absoluteCutoff`. */
export async function purgeSessions(db: DbOrTrx, idleCutoff: string, absoluteCutoff: string): Promise<number> {
  const res = await db
    .deleteFrom('staff_sessions')
    .where((eb) => eb.or([eb.and([eb('last_seen_at', '<', idleCutoff), eb('display', '=', 0)]), eb('created_at', '<', absoluteCutoff)]))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

export async function countHotels(db: DbOrTrx): Promise<number> {
  const r = await db
    .selectFrom('hotels')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
