import type { DbOrTrx } from '../database.js';
import type { SessionHotel, StaffUser } from './staff.repository.js';

// Staff passkeys and their challenges (docs/dashboard.md, "Passkeys").

export interface Passkey {
  id: string;
  hotelId: string;
  userId: string;
  /** base64url, as the browser sends it. */
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}

type PasskeyRow = {
  id: string;
  hotel_id: string;
  user_id: string;
  credential_id: string;
  public_key: string;
  counter: number | string;
  transports: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
};

const COLUMNS = ['id', 'hotel_id', 'user_id', 'credential_id', 'public_key', 'counter', 'transports', 'name', 'created_at', 'last_used_at'] as const;

function toPasskey(r: PasskeyRow): Passkey {
  const transports: unknown = JSON.parse(r.transports);
  return {
    id: r.id,
    hotelId: r.hotel_id,
    userId: r.user_id,
    credentialId: r.credential_id,
    publicKey: r.public_key,
    counter: Number(r.counter),
    transports: Array.isArray(transports) ? transports.filter((t): t is string => typeof t === 'string') : [],
    name: r.name,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  };
}

export async function insertPasskey(db: DbOrTrx, p: Omit<Passkey, 'lastUsedAt'>): Promise<void> {
  await db
    .insertInto('staff_passkeys')
    .values({
      id: p.id,
      hotel_id: p.hotelId,
      user_id: p.userId,
      credential_id: p.credentialId,
      public_key: p.publicKey,
      counter: p.counter,
      transports: JSON.stringify(p.transports),
      name: p.name,
      created_at: p.createdAt,
      last_used_at: null,
    })
    .execute();
}

/** The user's passkeys, oldest first. */
export async function listPasskeys(db: DbOrTrx, hotelId: string, userId: string): Promise<Passkey[]> {
  const rows = await db
    .selectFrom('staff_passkeys')
    .select(COLUMNS)
    .where('hotel_id', '=', hotelId)
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toPasskey);
}

/** How many passkeys the user has. */
export async function countPasskeys(db: DbOrTrx, hotelId: string, userId: string): Promise<number> {
  const r = await db
    .selectFrom('staff_passkeys')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('hotel_id', '=', hotelId)
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The passkey with this credential id, of whichever user and hotel holds it: a sign-in's one lookup across hotels, as a login's by e-mail. */
export async function findPasskeyByCredential(db: DbOrTrx, credentialId: string): Promise<Passkey | null> {
  const r = await db.selectFrom('staff_passkeys').select(COLUMNS).where('credential_id', '=', credentialId).executeTakeFirst();
  return r ? toPasskey(r) : null;
}

/** The active user a passkey belongs to, and their hotel; null when the user is deactivated. */
export async function findPasskeyAccount(db: DbOrTrx, hotelId: string, userId: string): Promise<{ user: StaffUser; hotel: SessionHotel } | null> {
  const r = await db
    .selectFrom('staff_users')
    .innerJoin('hotels', 'hotels.id', 'staff_users.hotel_id')
    .select([
      'staff_users.id',
      'staff_users.email',
      'staff_users.role',
      'staff_users.created_at',
      'hotels.id as hotel_id',
      'hotels.slug',
      'hotels.name',
      'hotels.time_zone',
    ])
    .where('staff_users.hotel_id', '=', hotelId)
    .where('staff_users.id', '=', userId)
    .where('staff_users.deactivated_at', 'is', null)
    .executeTakeFirst();
  if (!r) return null;
  return {
    user: { id: r.id, hotelId: r.hotel_id, email: r.email, role: r.role, createdAt: r.created_at, deactivatedAt: null },
    hotel: { id: r.hotel_id, slug: r.slug, name: r.name, timeZone: r.time_zone },
  };
}

/** Deletes one of the user's passkeys; false when the user has none with this id. */
export async function deletePasskey(db: DbOrTrx, hotelId: string, userId: string, id: string): Promise<boolean> {
  const res = await db.deleteFrom('staff_passkeys').where('hotel_id', '=', hotelId).where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** After a sign-in: the authenticator's new counter and the time. */
export async function markPasskeyUsed(db: DbOrTrx, p: { hotelId: string; id: string }, counter: number, now: string): Promise<void> {
  await db.updateTable('staff_passkeys').set({ counter, last_used_at: now }).where('hotel_id', '=', p.hotelId).where('id', '=', p.id).execute();
}

export async function passkeysOnly(db: DbOrTrx, hotelId: string, userId: string): Promise<boolean> {
  const r = await db.selectFrom('staff_users').select('passkeys_only').where('hotel_id', '=', hotelId).where('id', '=', userId).executeTakeFirst();
  return Number(r?.passkeys_only ?? 0) === 1;
}

export async function setPasskeysOnly(db: DbOrTrx, hotelId: string, userId: string, on: boolean): Promise<void> {
  await db
    .updateTable('staff_users')
    .set({ passkeys_only: on ? 1 : 0 })
    .where('hotel_id', '=', hotelId)
    .where('id', '=', userId)
    .execute();
}

/** The hotel's users with at least one passkey. */
export async function usersWithPasskey(db: DbOrTrx, hotelId: string): Promise<string[]> {
  const rows = await db.selectFrom('staff_passkeys').select('user_id').distinct().where('hotel_id', '=', hotelId).execute();
  return rows.map((r) => r.user_id);
}

/** Deletes every passkey of the user and turns passkeys-only off (an admin's or operator's reset), in the caller's transaction; how many passkeys went. */
export async function deleteUserPasskeys(trx: DbOrTrx, hotelId: string, userId: string): Promise<number> {
  const res = await trx.deleteFrom('staff_passkeys').where('hotel_id', '=', hotelId).where('user_id', '=', userId).executeTakeFirst();
  await setPasskeysOnly(trx, hotelId, userId, false);
  return Number(res.numDeletedRows);
}

export interface PasskeyChallenge {
  kind: 'register' | 'login';
  sessionId: string | null;
  expiresAt: string;
}

/** A new challenge (by its SHA-256); expired ones of any kind are dropped on the way. */
export async function insertChallenge(db: DbOrTrx, id: string, c: PasskeyChallenge, now: string): Promise<void> {
  await db.deleteFrom('staff_passkey_challenges').where('expires_at', '<', now).execute();
  await db.insertInto('staff_passkey_challenges').values({ id, kind: c.kind, session_id: c.sessionId, expires_at: c.expiresAt }).execute();
}

/**
 * Takes the challenge with this SHA-256: deleted by this call, so only one caller over all
 * instances gets it; null when there is none (never issued, or already taken).
 */
export async function takeChallenge(db: DbOrTrx, id: string): Promise<PasskeyChallenge | null> {
  const r = await db.deleteFrom('staff_passkey_challenges').where('id', '=', id).returning(['kind', 'session_id', 'expires_at']).executeTakeFirst();
  return r ? { kind: r.kind, sessionId: r.session_id, expiresAt: r.expires_at } : null;
}
