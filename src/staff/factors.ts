import { randomBytes } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import type { Db, DbOrTrx } from '../db/database.js';
import * as factors from '../db/repositories/factors.repository.js';
import * as passkeys from '../db/repositories/passkey.repository.js';
import { insertSecurityEvent, type ChangedBy, type SecurityEvent, type SecurityEventKind } from '../db/repositories/security.repository.js';
import { deletePairedDisplaySessions, deleteUserSessions, type SessionStage } from '../db/repositories/staff.repository.js';
import { newId, sha256Hex } from '../domain/ids.js';
import { ApiError } from '../errors.js';

// docs/dashboard.md, "Second factors": an authenticator app (TOTP, RFC 6238) and recovery
// codes for staff sign-in, the hotel's rule that requires a second factor, and the pairing
// of front-desk displays. Each change runs in one transaction with its security entry and
// ends the user's other sessions.

const RECOVERY_CODES = 10;
/** A pairing code works once, for this long. */
const PAIRING_CODE_MS = 10 * 60_000;
/** A paired display that has not signed in for this long is no longer paired (the retention job deletes it). */
const PAIRED_DISPLAY_UNUSED_MS = 90 * 24 * 60 * 60_000;
/** Crockford's base 32: no I, L, O or U to misread; 256 is a multiple of 32, so every character is as likely. */
const CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function randomCode(length: number): string {
  return [...randomBytes(length)].map((b) => CODE_ALPHABET[b & 31]).join('');
}

/** "ABCDE-FGHIJ": halves joined by a dash, easier to read out and type. */
const grouped = (code: string): string => `${code.slice(0, code.length / 2)}-${code.slice(code.length / 2)}`;

/** A typed code as it is hashed: upper case, without separators, look-alike letters read as digits. */
function normalizeCode(text: string): string {
  return text
    .toUpperCase()
    .replace(/[^0-9A-Z]/g, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
}

const codeHash = (text: string): string => sha256Hex(normalizeCode(text));

/** Who changes a staff account's factors, from where, and which of the user's sessions stays (the acting one). */
export interface FactorChange {
  actor: SecurityEvent['actor'];
  clientIp: string | null;
  keepSessionId: string | null;
}

interface Account {
  id: string;
  hotelId: string;
}

/**
 * Whether the user has a second factor: the one place that says so (a sign-in asks for it,
 * the hotel's rule sends an account without one to enrolment): a confirmed authenticator
 * app, or a passkey (docs/dashboard.md, "Passkeys": a passkey sign-in is complete by itself).
 * @public
 */
export async function hasSecondFactor(db: DbOrTrx, hotelId: string, userId: string): Promise<boolean> {
  return (await hasTotp(db, hotelId, userId)) || (await passkeys.countPasskeys(db, hotelId, userId)) > 0;
}

async function hasTotp(db: DbOrTrx, hotelId: string, userId: string): Promise<boolean> {
  return (await factors.findTotp(db, hotelId, userId))?.confirmed === true;
}

/** What a sign-in whose password was right may do at once: all, or first give its second factor, or first enrol one. */
export async function signInStage(db: Db, user: Account): Promise<SessionStage> {
  if (await hasSecondFactor(db, user.hotelId, user.id)) return 'second_factor';
  return (await factors.secondFactorRequired(db, user.hotelId)) ? 'enrol' : 'full';
}

function factorConflict(message: string): ApiError {
  return new ApiError('FACTOR_STATE_CONFLICT', { message });
}

/** A change's security entry and the end of the user's other sessions, in its transaction; the ids of the sessions ended. */
async function recordChange(trx: DbOrTrx, user: Account, kind: SecurityEventKind, by: FactorChange, detail: Record<string, unknown>): Promise<string[]> {
  await insertSecurityEvent(trx, { hotelId: user.hotelId, kind, actor: by.actor, subjectUserId: user.id, clientIp: by.clientIp, detail });
  return deleteUserSessions(trx, user.hotelId, user.id, by.keepSessionId === null ? {} : { except: by.keepSessionId });
}

/** The start of an authenticator's set-up: a new secret (kept, unconfirmed), its otpauth URI and that URI as a QR code (an SVG data URL). */
export async function startTotp(db: Db, user: Account & { email: string }, hotelSlug: string): Promise<{ secret: string; uri: string; qr: string }> {
  if ((await factors.findTotp(db, user.hotelId, user.id))?.confirmed)
    throw factorConflict('Your account already has an authenticator app: remove it first to set up another.');
  const secret = generateSecret();
  await db.transaction().execute((trx) => factors.insertPendingTotp(trx, user.hotelId, user.id, secret, new Date().toISOString()));
  const uri = generateURI({ issuer: 'innsync', label: `${user.email} (${hotelSlug})`, secret });
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return { secret, uri, qr: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
}

/** The time step of a current code (the one before and after too, for a clock a little off), or null. */
async function totpStep(secret: string, code: string): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({ secret, token: code, epochTolerance: 30 });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** Ten new recovery codes for the user (the earlier ones stop working), in the caller's transaction; shown this once. */
async function newRecoveryCodes(trx: DbOrTrx, user: Account, now: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODES }, () => grouped(randomCode(10)));
  await factors.replaceRecoveryCodes(trx, user.hotelId, user.id, codes.map(codeHash), now);
  return codes;
}

/** The set-up's first code confirms the authenticator; the recovery codes are made. */
export async function confirmTotp(db: Db, user: Account, code: string, by: FactorChange): Promise<{ recoveryCodes: string[]; endedSessions: string[] }> {
  const totp = await factors.findTotp(db, user.hotelId, user.id);
  if (!totp || totp.confirmed) throw factorConflict('No authenticator set-up is waiting for its first code: start the set-up again.');
  const step = await totpStep(totp.secret, code.trim());
  if (step === null) throw new ApiError('SECOND_FACTOR_INVALID');
  return db.transaction().execute(async (trx) => {
    if (!(await factors.takeTotpStep(trx, user.hotelId, user.id, step))) throw new ApiError('SECOND_FACTOR_INVALID');
    const now = new Date().toISOString();
    // Another set-up started meanwhile (a second tab) replaced the secret this code was checked against.
    if (!(await factors.confirmTotp(trx, user.hotelId, user.id, totp.secret, now)))
      throw factorConflict('Another set-up replaced this one: start the set-up again.');
    const recoveryCodes = await newRecoveryCodes(trx, user, now);
    const endedSessions = await recordChange(trx, user, 'factor.added', by, { factor: 'totp' });
    return { recoveryCodes, endedSessions };
  });
}

/** New recovery codes (the earlier ones stop working); only with an authenticator. */
export async function regenerateRecoveryCodes(db: Db, user: Account, by: FactorChange): Promise<{ recoveryCodes: string[]; endedSessions: string[] }> {
  if (!(await hasTotp(db, user.hotelId, user.id))) throw factorConflict('Recovery codes come with an authenticator app: set one up first.');
  return db.transaction().execute(async (trx) => {
    const recoveryCodes = await newRecoveryCodes(trx, user, new Date().toISOString());
    const endedSessions = await recordChange(trx, user, 'factor.added', by, { factor: 'recovery_codes' });
    return { recoveryCodes, endedSessions };
  });
}

/** The user removes their authenticator and recovery codes. */
export async function removeTotp(db: Db, user: Account, by: FactorChange): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    if ((await factors.deleteFactors(trx, user.hotelId, user.id)) === 0) throw factorConflict('Your account has no authenticator app to remove.');
    return recordChange(trx, user, 'factor.removed', by, { factor: 'totp' });
  });
}

/** An admin or the operator removes every factor of a user (lost phone and codes); the user's sessions end. */
export async function resetFactors(db: Db, user: Account, by: FactorChange): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const removed = (await factors.deleteFactors(trx, user.hotelId, user.id)) + (await passkeys.deleteUserPasskeys(trx, user.hotelId, user.id));
    return recordChange(trx, user, 'factors.reset', by, { removed: removed > 0 });
  });
}

/**
 * A sign-in's second factor: a current authenticator code not used before (its time step
 * later than the last one taken), or an unused recovery code (used up, with its entry).
 */
export async function verifySecondFactor(db: Db, user: Account, code: string, clientIp: string | null): Promise<boolean> {
  const text = code.trim();
  if (/^\d{6}$/.test(text)) {
    const totp = await factors.findTotp(db, user.hotelId, user.id);
    const step = totp?.confirmed ? await totpStep(totp.secret, text) : null;
    return step !== null && factors.takeTotpStep(db, user.hotelId, user.id, step);
  }
  return db.transaction().execute(async (trx) => {
    if (!(await factors.takeRecoveryCode(trx, user.hotelId, user.id, codeHash(text)))) return false;
    const left = await factors.countRecoveryCodes(trx, user.hotelId, user.id);
    await insertSecurityEvent(trx, {
      hotelId: user.hotelId,
      kind: 'recovery_code.used',
      actor: { type: 'staff', userId: user.id },
      subjectUserId: user.id,
      clientIp,
      detail: { left },
    });
    return true;
  });
}

/** What the My account page shows of the user's factors. */
export async function factorsOf(db: Db, user: Account): Promise<{ totp: boolean; recoveryCodesLeft: number; required: boolean }> {
  const [totp, recoveryCodesLeft, required] = await Promise.all([
    hasTotp(db, user.hotelId, user.id),
    factors.countRecoveryCodes(db, user.hotelId, user.id),
    factors.secondFactorRequired(db, user.hotelId),
  ]);
  return { totp, recoveryCodesLeft, required };
}

/** The hotel's rule: every staff sign-in needs a second factor (an account without one enrols at its next sign-in). */
export async function setSecondFactorRequirement(db: Db, hotelId: string, required: boolean, by: Omit<FactorChange, 'keepSessionId'>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await factors.setSecondFactorRequired(trx, hotelId, required);
    await insertSecurityEvent(trx, { hotelId, kind: required ? 'mfa.required' : 'mfa.not_required', actor: by.actor, clientIp: by.clientIp });
  });
}

/** The hotel's rule and which of its users have a second factor (the Staff page). */
export async function hotelFactors(db: Db, hotelId: string): Promise<{ required: boolean; usersWithFactor: string[] }> {
  const [required, withTotp, withPasskey] = await Promise.all([
    factors.secondFactorRequired(db, hotelId),
    factors.usersWithTotp(db, hotelId),
    passkeys.usersWithPasskey(db, hotelId),
  ]);
  return { required, usersWithFactor: [...new Set([...withTotp, ...withPasskey])] };
}

/** An admin's one-time code that pairs one front-desk display (shown to the admin once; stored as SHA-256), with the name the admin gives the display. */
export async function createPairingCode(db: Db, hotelId: string, adminId: string, label: string | null): Promise<{ code: string; expiresAt: string }> {
  const code = grouped(randomCode(8));
  const now = Date.now();
  const expiresAt = new Date(now + PAIRING_CODE_MS).toISOString();
  await factors.insertPairingCode(db, { hash: codeHash(code), hotelId, createdBy: adminId, label, now: new Date(now).toISOString(), expiresAt });
  return { code, expiresAt };
}

/**
 * A display sign-in with a pairing code: the code is used up and the device gets a token
 * (its cookie; SHA-256 stored) that lets its later display sign-ins skip the second factor.
 * The token and the pairing's id; null when the code is wrong, used or expired.
 */
export async function pairDisplay(db: Db, user: Account, code: string, clientIp: string | null): Promise<{ token: string; displayId: string } | null> {
  return db.transaction().execute(async (trx) => {
    const now = new Date().toISOString();
    const taken = await factors.takePairingCode(trx, user.hotelId, codeHash(code), now);
    if (taken === null) return null;
    const token = randomBytes(32).toString('base64url');
    const displayId = newId('disp');
    await factors.insertPairedDisplay(trx, {
      id: displayId,
      hash: sha256Hex(token),
      hotelId: user.hotelId,
      pairedBy: taken.createdBy,
      label: taken.label,
      now,
    });
    await insertSecurityEvent(trx, {
      hotelId: user.hotelId,
      kind: 'display.paired',
      actor: { type: 'staff', userId: user.id },
      subjectUserId: user.id,
      clientIp,
      detail: { pairedBy: taken.createdBy, displayId },
    });
    return { token, displayId };
  });
}

/** The moment before which a pairing's last use ends it. */
export const pairingUnusedSince = (nowMs: number): string => new Date(nowMs - PAIRED_DISPLAY_UNUSED_MS).toISOString();

/** A display sign-in with a device's token: the id of the hotel's pairing it holds (its last use now), or null (none, or unused too long). */
export async function usePairedDisplay(db: Db, hotelId: string, token: string): Promise<string | null> {
  if (token.length > 200) return null;
  const now = Date.now();
  return factors.usePairedDisplay(db, hotelId, sha256Hex(token), new Date(now).toISOString(), pairingUnusedSince(now));
}

/** The hotel's paired displays (the Staff page). */
export async function pairedDisplays(db: Db, hotelId: string): Promise<factors.PairedDisplay[]> {
  return factors.listPairedDisplays(db, hotelId, pairingUnusedSince(Date.now()));
}

/**
 * An admin unpairs a display: the pairing goes and every session that signed in through it
 * ends, with the `display.unpaired` entry, in one transaction. The ids of the sessions
 * ended (their event streams are closed by the caller).
 */
export async function unpairDisplay(db: Db, hotelId: string, displayId: string, by: ChangedBy): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    const ended = await deletePairedDisplaySessions(trx, hotelId, displayId);
    if (!(await factors.deletePairedDisplay(trx, hotelId, displayId)))
      throw new ApiError('RECORD_NOT_FOUND', { message: 'No paired display with this id in your hotel: reload the Staff page.' });
    await insertSecurityEvent(trx, {
      hotelId,
      kind: 'display.unpaired',
      actor: by.actor,
      clientIp: by.clientIp,
      detail: { displayId, sessionsEnded: ended.length },
    });
    return ended;
  });
}
