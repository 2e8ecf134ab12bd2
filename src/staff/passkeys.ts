import { createHash } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { runTransaction, uniqueViolation, type Db, type DbOrTrx } from '../db/database.js';
import * as passkeys from '../db/repositories/passkey.repository.js';
import { insertSecurityEvent, type SecurityEventKind } from '../db/repositories/security.repository.js';
import * as staff from '../db/repositories/staff.repository.js';
import { newId } from '../domain/ids.js';
import { ApiError } from '../errors.js';

// Passkeys of staff accounts (docs/dashboard.md, "Passkeys"): registered on My account
// after the password is entered again, used to sign in without e-mail or password. Only
// the public key is stored; every challenge is kept (as its SHA-256) in the database, so
// any instance can answer the browser's reply, and is taken once.

/** How long a registration's or sign-in's challenge may be answered. */
const CHALLENGE_MS = 5 * 60_000;

/** Where the dashboard is served: the relying party's id (its host name) and the origin the browser must report. */
export interface RelyingParty {
  rpId: string;
  origin: string;
}

/** Who is changing their passkeys: the signed-in session, and the client's address for the security entry. */
export interface PasskeyActor {
  session: staff.StaffSession;
  clientIp: string | null;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Whether the user has at least one passkey (a second factor, docs/dashboard.md "Passkeys"). */
export async function userHasPasskey(db: DbOrTrx, hotelId: string, userId: string): Promise<boolean> {
  return (await passkeys.countPasskeys(db, hotelId, userId)) > 0;
}

async function storeChallenge(db: Db, challenge: string, kind: 'register' | 'login', sessionId: string | null): Promise<void> {
  const now = Date.now();
  await passkeys.insertChallenge(
    db,
    sha256(challenge),
    { kind, sessionId, expiresAt: new Date(now + CHALLENGE_MS).toISOString() },
    new Date(now).toISOString(),
  );
}

/** The challenge the browser's reply signed (in its clientDataJSON); PASSKEY_INVALID when it carries none. */
function challengeOf(clientDataJSON: string): string {
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    const challenge = (data as { challenge?: unknown } | null)?.challenge;
    if (typeof challenge === 'string' && challenge !== '') return challenge;
  } catch {
    // not JSON: below
  }
  throw new ApiError('PASSKEY_INVALID');
}

/**
 * Takes the reply's challenge (single use, on any instance): it must be one this service
 * issued for this kind (and, for a registration, this session) within CHALLENGE_MS, else
 * PASSKEY_CHALLENGE_EXPIRED. Returns the challenge.
 */
async function takeChallenge(db: Db, clientDataJSON: string, kind: 'register' | 'login', sessionId: string | null): Promise<string> {
  const challenge = challengeOf(clientDataJSON);
  const taken = await passkeys.takeChallenge(db, sha256(challenge));
  const fits = taken !== null && taken.kind === kind && taken.sessionId === sessionId && Date.parse(taken.expiresAt) > Date.now();
  if (!fits) throw new ApiError('PASSKEY_CHALLENGE_EXPIRED');
  return challenge;
}

/** What the browser is asked to create: a discoverable credential with user verification, none of the user's existing ones again. */
export async function registrationOptions(db: Db, s: staff.StaffSession, rp: RelyingParty): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await passkeys.listPasskeys(db, s.hotel.id, s.user.id);
  const options = await generateRegistrationOptions({
    rpName: `innsync · ${s.hotel.name}`,
    rpID: rp.rpId,
    userName: s.user.email,
    userDisplayName: `${s.user.email} (${s.hotel.name})`,
    // The account's own id: one person's accounts at two hotels are two credentials.
    userID: new TextEncoder().encode(s.user.id),
    timeout: CHALLENGE_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  await storeChallenge(db, options.challenge, 'register', s.id);
  return options;
}

/** What a passkey looks like on My account: never its key. */
export function passkeyView(p: passkeys.Passkey) {
  return { id: p.id, name: p.name, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt };
}

/** The user's sessions but this one end, and the change is recorded, in the change's transaction; returns the ended sessions' ids. */
async function recordChange(trx: DbOrTrx, actor: PasskeyActor, kind: SecurityEventKind, detail: Record<string, unknown>): Promise<string[]> {
  const { session: s } = actor;
  const ended = await staff.deleteUserSessions(trx, s.hotel.id, s.user.id, { except: s.id });
  await insertSecurityEvent(trx, {
    hotelId: s.hotel.id,
    kind,
    actor: { type: 'staff', userId: s.user.id },
    subjectUserId: s.user.id,
    clientIp: actor.clientIp,
    detail,
  });
  return ended;
}

/** Verifies the browser's new credential against the session's challenge and stores its public key. */
export async function registerPasskey(
  db: Db,
  actor: PasskeyActor,
  rp: RelyingParty,
  input: { name: string; credential: RegistrationResponseJSON },
): Promise<{ passkey: ReturnType<typeof passkeyView>; endedSessions: string[] }> {
  const s = actor.session;
  const challenge = await takeChallenge(db, input.credential.response.clientDataJSON, 'register', s.id);
  const result = await verifyRegistrationResponse({
    response: input.credential,
    expectedChallenge: challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.rpId,
    requireUserVerification: true,
  }).catch(() => ({ verified: false as const }));
  if (!result.verified) throw new ApiError('PASSKEY_INVALID');
  const { credential } = result.registrationInfo;
  const passkey: passkeys.Passkey = {
    id: newId('pk'),
    hotelId: s.hotel.id,
    userId: s.user.id,
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports ?? [],
    name: input.name.trim(),
    createdAt: new Date().toISOString(),
    lastUsedAt: null,
  };
  try {
    const endedSessions = await runTransaction(db, async (trx) => {
      await passkeys.insertPasskey(trx, passkey);
      return recordChange(trx, actor, 'factor.added', { factor: 'passkey' });
    });
    return { passkey: passkeyView(passkey), endedSessions };
  } catch (err) {
    // The same credential registered already (by this account or another).
    if (uniqueViolation(err) !== null) throw new ApiError('PASSKEY_INVALID');
    throw err;
  }
}

/**
 * Removes one of the user's passkeys. The last one is refused (409 LAST_PASSKEY) while the
 * account signs in with passkeys only: turn that off first.
 */
export async function removePasskey(db: Db, actor: PasskeyActor, passkeyId: string): Promise<string[]> {
  const s = actor.session;
  return runTransaction(db, async (trx) => {
    if ((await passkeys.passkeysOnly(trx, s.hotel.id, s.user.id)) && (await passkeys.listPasskeys(trx, s.hotel.id, s.user.id)).length <= 1)
      throw new ApiError('LAST_PASSKEY');
    if (!(await passkeys.deletePasskey(trx, s.hotel.id, s.user.id, passkeyId)))
      throw new ApiError('RECORD_NOT_FOUND', { message: 'You have no passkey with this id.' });
    return recordChange(trx, actor, 'factor.removed', { factor: 'passkey' });
  });
}

/**
 * "Sign in with passkeys only": on needs a passkey (409 PASSKEY_REQUIRED), off a session
 * signed in with a passkey (403 PASSKEY_SESSION_REQUIRED); either ends the user's other sessions.
 */
export async function changePasskeysOnly(db: Db, actor: PasskeyActor, on: boolean): Promise<string[]> {
  const s = actor.session;
  if (!on && s.passkeyId === null) throw new ApiError('PASSKEY_SESSION_REQUIRED');
  return runTransaction(db, async (trx) => {
    if (on && !(await userHasPasskey(trx, s.hotel.id, s.user.id))) throw new ApiError('PASSKEY_REQUIRED');
    await passkeys.setPasskeysOnly(trx, s.hotel.id, s.user.id, on);
    return recordChange(trx, actor, on ? 'passkeys_only.on' : 'passkeys_only.off', {});
  });
}

/** What the browser is asked for at sign-in: any passkey of this site (discoverable), with user verification. */
export async function signInOptions(db: Db, rp: RelyingParty): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await generateAuthenticationOptions({ rpID: rp.rpId, userVerification: 'required', timeout: CHALLENGE_MS });
  await storeChallenge(db, options.challenge, 'login', null);
  return options;
}

/**
 * A passkey sign-in: the challenge taken, the credential's stored public key verifies the
 * signature with user verification, the counter moves on. The credential names its one
 * user and hotel. Anything else is PASSKEY_INVALID, alike.
 */
export async function authenticatePasskey(
  db: Db,
  rp: RelyingParty,
  response: AuthenticationResponseJSON,
): Promise<{ user: staff.StaffUser; hotel: staff.SessionHotel; passkeyId: string }> {
  const challenge = await takeChallenge(db, response.response.clientDataJSON, 'login', null);
  const passkey = await passkeys.findPasskeyByCredential(db, response.id);
  const account = passkey ? await passkeys.findPasskeyAccount(db, passkey.hotelId, passkey.userId) : null;
  if (!passkey || !account) throw new ApiError('PASSKEY_INVALID');
  // The authenticator's user handle, when it sends one, is the account's id (registrationOptions).
  const handle = response.response.userHandle;
  if (handle !== undefined && Buffer.from(handle, 'base64url').toString('utf8') !== passkey.userId) throw new ApiError('PASSKEY_INVALID');
  const result = await verifyAuthenticationResponse({
    response,
    expectedChallenge: challenge,
    expectedOrigin: rp.origin,
    expectedRPID: rp.rpId,
    credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.counter, transports: passkey.transports },
    requireUserVerification: true,
  }).catch(() => ({ verified: false as const }));
  if (!result.verified) throw new ApiError('PASSKEY_INVALID');
  await passkeys.markPasskeyUsed(db, passkey, result.authenticationInfo.newCounter, new Date().toISOString());
  return { ...account, passkeyId: passkey.id };
}
