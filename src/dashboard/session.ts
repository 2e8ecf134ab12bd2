import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import type { Actor } from '../db/repositories/activity.repository.js';
import * as staff from '../db/repositories/staff.repository.js';
import { ApiError } from '../errors.js';
import type { ChangedBy } from '../db/repositories/security.repository.js';
import { clientOf } from '../http/ip-limit.js';
import { SESSION_MAX_MS, sessionExpired } from '../staff/sessions.js';
import { sessionView } from './answers.js';

// docs/dashboard.md: Security.
/**
 * `__Host-`: browsers accept this cookie only from this exact host over HTTPS with
 * `Path=/` and no `Domain`, so a sibling subdomain cannot plant or overwrite it.
 */
export const SESSION_COOKIE = '__Host-innsync_session';
/** last_seen_at is written at most this often per session (not on every request). */
const TOUCH_EVERY_MS = 60_000;

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** What a session keeps of the browser's User-Agent: enough to name the browser and system, no more. */
const SESSION_USER_AGENT_MAX = 300;

/** Where a session was started from, as the My account page shows it (docs/dashboard.md, "My account"). */
export interface SessionOrigin {
  display?: boolean;
  userAgent?: string | null;
  clientIp?: string | null;
  /** The passkey that signed the user in (docs/dashboard.md, "Passkeys"); null: the password. */
  passkeyId?: string | null;
  /** The pairing a front-desk display signed in through (docs/dashboard.md, "Second factors"); null: none. */
  pairedDisplayId?: string | null;
  /** 'full', or a sign-in waiting for its second factor or its enrolment (docs/dashboard.md, "Second factors"). */
  stage?: staff.SessionStage;
}

/** The request's User-Agent and client address, as a new session keeps them. */
export function originOf(req: FastifyRequest): { userAgent: string | null; clientIp: string } {
  const ua = req.headers['user-agent'];
  return { userAgent: typeof ua === 'string' && ua !== '' ? [...ua].slice(0, SESSION_USER_AGENT_MAX).join('') : null, clientIp: clientOf(req) };
}

/** The cookie's value is a random token; the database holds only its SHA-256. */
export async function startSession(db: Db, user: { id: string; hotelId: string }, origin: SessionOrigin = {}): Promise<{ token: string; csrfToken: string }> {
  const token = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  await staff.insertSession(db, {
    id: sha256(token),
    userId: user.id,
    hotelId: user.hotelId,
    csrfToken,
    now: new Date().toISOString(),
    display: origin.display ?? false,
    userAgent: origin.userAgent ?? null,
    clientIp: origin.clientIp ?? null,
    passkeyId: origin.passkeyId ?? null,
    pairedDisplayId: origin.pairedDisplayId ?? null,
    stage: origin.stage ?? 'full',
  });
  return { token, csrfToken };
}

/** HttpOnly (no script reads it), Secure (HTTPS only), SameSite=Strict (no cross-site sends). */
const COOKIE_OPTIONS = { path: '/', httpOnly: true, secure: true, sameSite: 'strict' } as const;

export function setSessionCookie(reply: FastifyReply, token: string): void {
  void reply.setCookie(SESSION_COOKIE, token, { ...COOKIE_OPTIONS, maxAge: SESSION_MAX_MS / 1000 });
}

export function clearSessionCookie(reply: FastifyReply): void {
  void reply.setCookie(SESSION_COOKIE, '', { ...COOKIE_OPTIONS, maxAge: 0 });
}

/**
 * A front-desk display an admin paired (docs/dashboard.md, "Second factors") holds this
 * cookie: a random token whose SHA-256 the database keeps. It stays for a year; its display
 * sign-ins skip the second factor.
 */
export const DISPLAY_COOKIE = '__Host-innsync_display';
const DISPLAY_COOKIE_MAX_S = 365 * 24 * 60 * 60;

export function setDisplayCookie(reply: FastifyReply, token: string): void {
  void reply.setCookie(DISPLAY_COOKIE, token, { ...COOKIE_OPTIONS, maxAge: DISPLAY_COOKIE_MAX_S });
}

/** The paired-device token the request carries, or null. */
export function displayToken(req: FastifyRequest): string | null {
  const value = req.cookies[DISPLAY_COOKIE];
  return value === undefined || value === '' ? null : value;
}

/** The session token the request's cookie carries (parsed by @fastify/cookie), or null. */
function cookieToken(req: FastifyRequest): string | null {
  const value = req.cookies[SESSION_COOKIE];
  return value === undefined || value === '' ? null : value;
}

/**
 * A display session may only do what showing the board needs: routes that declare
 * `config: { display: true }` (the session, the roster, its live events, logout).
 */
function checkDisplay(req: FastifyRequest, session: staff.StaffSession): void {
  if (session.display && req.routeOptions.config?.display !== true) throw new ApiError('DISPLAY_READ_ONLY');
}

/**
 * A sign-in that still needs its second factor, or must enrol one first (docs/dashboard.md,
 * "Second factors"), may use only the routes that list its stage in `config.stages`; a full
 * session goes on to the display check.
 */
export function checkStage(req: FastifyRequest, session: staff.StaffSession): void {
  if (session.stage === 'full') return checkDisplay(req, session);
  if (req.routeOptions.config?.stages?.includes(session.stage) === true) return;
  throw new ApiError(session.stage === 'enrol' ? 'ENROLMENT_REQUIRED' : 'SECOND_FACTOR_REQUIRED');
}

/** Which of these sessions are still live: not ended, not expired, user not deactivated. */
export async function liveSessionIds(db: Db, ids: string[]): Promise<Set<string>> {
  const now = Date.now();
  const rows = await staff.findActiveSessionTimes(db, ids);
  return new Set(rows.filter((r) => !sessionExpired(r, now)).map((r) => r.id));
}

/** The request's live session, or null. An expired one is deleted on sight. */
export async function loadSession(db: Db, req: FastifyRequest): Promise<staff.StaffSession | null> {
  const token = cookieToken(req);
  if (token === null || token.length > 200) return null;
  const session = await staff.findSession(db, sha256(token));
  if (!session) return null;
  const now = Date.now();
  if (sessionExpired(session, now)) {
    await staff.deleteSession(db, session.hotel.id, session.id);
    return null;
  }
  // A refetch the page makes on its own (after a live event) is not the user at work:
  // it must not keep an unattended desk logged in (idle expiry).
  const background = req.headers['x-background-refresh'] === '1';
  if (!background && now - Date.parse(session.lastSeenAt) > TOUCH_EVERY_MS)
    await staff.touchSession(db, session.hotel.id, session.id, new Date(now).toISOString());
  return session;
}

export async function endSession(db: Db, session: staff.StaffSession): Promise<void> {
  await staff.deleteSession(db, session.hotel.id, session.id);
}

/**
 * A pending sign-in made whole (docs/dashboard.md, "Second factors"): a new session (new
 * cookie and CSRF token) replaces the one that waited for its second factor or enrolment,
 * so a token seen before cannot be promoted.
 */
export async function promoteSession(db: Db, req: FastifyRequest, s: staff.StaffSession, reply: FastifyReply) {
  const { token, csrfToken } = await startSession(db, s.user, { display: s.display, ...originOf(req) });
  await endSession(db, s);
  setSessionCookie(reply, token);
  return sessionView(s, csrfToken, s.display);
}

/**
 * The session after the user added a second factor (an authenticator app or a passkey): a
 * sign-in that was enrolling is promoted to a full one; a full session stays as it is.
 */
export async function sessionWithNewFactor(db: Db, req: FastifyRequest, s: staff.StaffSession, reply: FastifyReply) {
  return s.stage === 'enrol' ? promoteSession(db, req, s, reply) : sessionView(s, s.csrfToken, s.display);
}

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * CSRF (docs/dashboard.md): a state-changing request must carry the session's token in
 * `X-CSRF-Token`. A cross-site page can make the browser send the cookie (not with
 * SameSite=Strict, but older browsers ignore it) but cannot read the token.
 */
export function checkCsrf(req: FastifyRequest, session: staff.StaffSession): void {
  if (!STATE_CHANGING.has(req.method)) return;
  const given = req.headers['x-csrf-token'];
  if (typeof given !== 'string' || !sameToken(given, session.csrfToken)) throw new ApiError('CSRF_REJECTED');
}

/**
 * Login and setup have no session yet: they must be JSON (a cross-site form cannot send
 * that without a CORS preflight, which is never granted) and, when the browser says where
 * it comes from, from this origin.
 */
export function checkSameOrigin(req: FastifyRequest): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw new ApiError('CSRF_REJECTED');
  }
  if (host !== requestHost(req)) throw new ApiError('CSRF_REJECTED');
}

/** The host (and port) the request was sent to, as the browser named it. */
export function requestHost(req: FastifyRequest): string | undefined {
  // HTTP/2 carries the host as the :authority pseudo-header (RFC 9113 §8.3.1), not Host.
  const requested = req.headers.host ?? req.headers[':authority'];
  return typeof requested === 'string' ? requested : undefined;
}

/** The staff session of a request the session guard let through. */
export function sessionOf(req: FastifyRequest): staff.StaffSession {
  if (!req.staff) throw new ApiError('NOT_AUTHENTICATED');
  return req.staff;
}

/** Who a session's writes are recorded as in the activity log. */
export function staffActor(s: staff.StaffSession): Actor {
  return { type: 'staff', id: s.user.id, mode: null };
}

/** The signed-in staff member, with the client's address, as the actor of a change's security entry (docs/dashboard.md, "Access trail"). */
export function changedBy(req: FastifyRequest): ChangedBy {
  return { actor: { type: 'staff', userId: sessionOf(req).user.id }, clientIp: clientOf(req) };
}
