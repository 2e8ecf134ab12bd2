import type { DbOrTrx } from '../database.js';

// docs/dashboard.md, "Second factors": a staff account's authenticator (TOTP) secret and
// recovery codes, the hotel's rule that requires a second factor, and the front-desk
// displays an admin paired. Every statement names the hotel.

/** The user's authenticator, confirmed or still waiting for its first code; null when there is none. */
export async function findTotp(db: DbOrTrx, hotelId: string, userId: string): Promise<{ secret: string; confirmed: boolean } | null> {
  const r = await db
    .selectFrom('staff_totp')
    .select(['secret', 'confirmed_at'])
    .where('hotel_id', '=', hotelId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return r ? { secret: r.secret, confirmed: r.confirmed_at !== null } : null;
}

/** Of these users, those with a confirmed authenticator. */
export async function usersWithTotp(db: DbOrTrx, hotelId: string): Promise<string[]> {
  const rows = await db.selectFrom('staff_totp').select('user_id').where('hotel_id', '=', hotelId).where('confirmed_at', 'is not', null).execute();
  return rows.map((r) => r.user_id);
}

/** A set-up waiting for its first code, replacing any earlier unconfirmed one. */
export async function insertPendingTotp(trx: DbOrTrx, hotelId: string, userId: string, secret: string, now: string): Promise<void> {
  await trx.deleteFrom('staff_totp').where('hotel_id', '=', hotelId).where('user_id', '=', userId).where('confirmed_at', 'is', null).execute();
  await trx.insertInto('staff_totp').values({ user_id: userId, hotel_id: hotelId, secret, created_at: now, confirmed_at: null, last_step: null }).execute();
}

/** Confirms the set-up of this secret (the one the code was checked against); false when another set-up replaced it meanwhile. */
export async function confirmTotp(trx: DbOrTrx, hotelId: string, userId: string, secret: string, now: string): Promise<boolean> {
  const res = await trx
    .updateTable('staff_totp')
    .set({ confirmed_at: now })
    .where('hotel_id', '=', hotelId)
    .where('user_id', '=', userId)
    .where('secret', '=', secret)
    .where('confirmed_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/**
 * Takes the time step of a code just verified: true only when it is later than the last one
 * taken, so a code (its step) works once, even for two requests at the same moment.
 */
export async function takeTotpStep(db: DbOrTrx, hotelId: string, userId: string, step: number): Promise<boolean> {
  const res = await db
    .updateTable('staff_totp')
    .set({ last_step: step })
    .where('hotel_id', '=', hotelId)
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Removes the user's authenticator and recovery codes; how many rows went. */
export async function deleteFactors(trx: DbOrTrx, hotelId: string, userId: string): Promise<number> {
  const totp = await trx.deleteFrom('staff_totp').where('hotel_id', '=', hotelId).where('user_id', '=', userId).executeTakeFirst();
  const codes = await trx.deleteFrom('staff_recovery_codes').where('hotel_id', '=', hotelId).where('user_id', '=', userId).executeTakeFirst();
  return Number(totp.numDeletedRows) + Number(codes.numDeletedRows);
}

/** The user's recovery codes become these (hashes); the earlier ones stop working. */
export async function replaceRecoveryCodes(trx: DbOrTrx, hotelId: string, userId: string, hashes: string[], now: string): Promise<void> {
  await trx.deleteFrom('staff_recovery_codes').where('hotel_id', '=', hotelId).where('user_id', '=', userId).execute();
  await trx
    .insertInto('staff_recovery_codes')
    .values(hashes.map((h) => ({ code_hash: h, user_id: userId, hotel_id: hotelId, created_at: now })))
    .execute();
}

/** Uses up a recovery code of the user: true when it was theirs and unused (it is deleted). */
export async function takeRecoveryCode(trx: DbOrTrx, hotelId: string, userId: string, hash: string): Promise<boolean> {
  const res = await trx
    .deleteFrom('staff_recovery_codes')
    .where('hotel_id', '=', hotelId)
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

export async function countRecoveryCodes(db: DbOrTrx, hotelId: string, userId: string): Promise<number> {
  const r = await db
    .selectFrom('staff_recovery_codes')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('hotel_id', '=', hotelId)
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function secondFactorRequired(db: DbOrTrx, hotelId: string): Promise<boolean> {
  const r = await db.selectFrom('hotels').select('require_second_factor').where('id', '=', hotelId).executeTakeFirst();
  return Number(r?.require_second_factor ?? 0) === 1;
}

export async function setSecondFactorRequired(trx: DbOrTrx, hotelId: string, required: boolean): Promise<void> {
  await trx
    .updateTable('hotels')
    .set({ require_second_factor: required ? 1 : 0 })
    .where('id', '=', hotelId)
    .execute();
}

export async function insertPairingCode(
  db: DbOrTrx,
  p: { hash: string; hotelId: string; createdBy: string; label: string | null; now: string; expiresAt: string },
): Promise<void> {
  await db
    .insertInto('display_pairing_codes')
    .values({ code_hash: p.hash, hotel_id: p.hotelId, created_by: p.createdBy, label: p.label, created_at: p.now, expires_at: p.expiresAt })
    .execute();
}

/** Uses up a current pairing code of the hotel: the admin who made it and the name given, or null when it is wrong, used or expired. */
export async function takePairingCode(trx: DbOrTrx, hotelId: string, hash: string, now: string): Promise<{ createdBy: string; label: string | null } | null> {
  const rows = await trx
    .deleteFrom('display_pairing_codes')
    .where('hotel_id', '=', hotelId)
    .where('code_hash', '=', hash)
    .where('expires_at', '>', now)
    .returning(['created_by', 'label'])
    .execute();
  const r = rows[0];
  return r ? { createdBy: r.created_by, label: r.label } : null;
}

export async function insertPairedDisplay(
  trx: DbOrTrx,
  p: { id: string; hash: string; hotelId: string; pairedBy: string; label: string | null; now: string },
): Promise<void> {
  await trx
    .insertInto('paired_displays')
    .values({ id: p.id, token_hash: p.hash, hotel_id: p.hotelId, paired_by: p.pairedBy, label: p.label, created_at: p.now, last_used_at: p.now })
    .execute();
}

/**
 * A display sign-in with the device's token: when the token is a pairing of the hotel used
 * since `unusedSince`, its last use becomes `now`; the pairing's id, else null.
 */
export async function usePairedDisplay(db: DbOrTrx, hotelId: string, hash: string, now: string, unusedSince: string): Promise<string | null> {
  const r = await db
    .updateTable('paired_displays')
    .set({ last_used_at: now })
    .where('hotel_id', '=', hotelId)
    .where('token_hash', '=', hash)
    .where('last_used_at', '>', unusedSince)
    .returning('id')
    .executeTakeFirst();
  return r?.id ?? null;
}

/** A pairing as the Staff page lists it. */
export interface PairedDisplay {
  id: string;
  pairedAt: string;
  /** The e-mail of the admin who made the pairing code (a deactivated one's too). */
  pairedBy: string;
  lastUsedAt: string;
  label: string | null;
}

/** The hotel's pairings used since `unusedSince`, the newest first. */
export async function listPairedDisplays(db: DbOrTrx, hotelId: string, unusedSince: string): Promise<PairedDisplay[]> {
  const rows = await db
    .selectFrom('paired_displays')
    .innerJoin('staff_users', (j) => j.onRef('staff_users.id', '=', 'paired_displays.paired_by').onRef('staff_users.hotel_id', '=', 'paired_displays.hotel_id'))
    .select(['paired_displays.id', 'paired_displays.created_at', 'paired_displays.last_used_at', 'paired_displays.label', 'staff_users.email'])
    .where('paired_displays.hotel_id', '=', hotelId)
    .where('paired_displays.last_used_at', '>', unusedSince)
    .orderBy('paired_displays.created_at', 'desc')
    .orderBy('paired_displays.id')
    .execute();
  return rows.map((r) => ({ id: r.id, pairedAt: r.created_at, pairedBy: r.email, lastUsedAt: r.last_used_at, label: r.label }));
}

/** Deletes a pairing of the hotel, in the caller's transaction; false when the hotel has none with this id. */
export async function deletePairedDisplay(trx: DbOrTrx, hotelId: string, id: string): Promise<boolean> {
  const res = await trx.deleteFrom('paired_displays').where('hotel_id', '=', hotelId).where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** The retention job: pairings of every hotel unused since `unusedSince`, and pairing codes past their expiry. */
export async function purgeDisplayPairings(db: DbOrTrx, unusedSince: string, now: string): Promise<{ pairedDisplays: number; pairingCodes: number }> {
  const displays = await db.deleteFrom('paired_displays').where('last_used_at', '<=', unusedSince).executeTakeFirst();
  const codes = await db.deleteFrom('display_pairing_codes').where('expires_at', '<=', now).executeTakeFirst();
  return { pairedDisplays: Number(displays.numDeletedRows), pairingCodes: Number(codes.numDeletedRows) };
}
