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

export async function insertPairingCode(db: DbOrTrx, p: { hash: string; hotelId: string; createdBy: string; now: string; expiresAt: string }): Promise<void> {
  await db
    .insertInto('display_pairing_codes')
    .values({ code_hash: p.hash, hotel_id: p.hotelId, created_by: p.createdBy, created_at: p.now, expires_at: p.expiresAt })
    .execute();
}

/** Uses up a current pairing code of the hotel; the admin who made it, or null when it is wrong, used or expired. */
export async function takePairingCode(trx: DbOrTrx, hotelId: string, hash: string, now: string): Promise<string | null> {
  const rows = await trx
    .deleteFrom('display_pairing_codes')
    .where('hotel_id', '=', hotelId)
    .where('code_hash', '=', hash)
    .where('expires_at', '>', now)
    .returning('created_by')
    .execute();
  return rows[0]?.created_by ?? null;
}

export async function insertPairedDisplay(trx: DbOrTrx, p: { hash: string; hotelId: string; pairedBy: string; now: string }): Promise<void> {
  await trx.insertInto('paired_displays').values({ token_hash: p.hash, hotel_id: p.hotelId, paired_by: p.pairedBy, created_at: p.now }).execute();
}

export async function isPairedDisplay(db: DbOrTrx, hotelId: string, hash: string): Promise<boolean> {
  const r = await db.selectFrom('paired_displays').select('token_hash').where('hotel_id', '=', hotelId).where('token_hash', '=', hash).executeTakeFirst();
  return r !== undefined;
}
