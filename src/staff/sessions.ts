import { createHash } from 'node:crypto';
import Bowser from 'bowser';
import type { DbOrTrx } from '../db/database.js';
import { listUserSessions, type SessionDetails, type SessionStage } from '../db/repositories/staff.repository.js';

// Dashboard sessions as their user sees them (docs/dashboard.md, "My account"): how long one
// lives, the name it is shown and ended by, and the device it was started on.

export const SESSION_IDLE_MS = 30 * 60_000;
export const SESSION_MAX_MS = 12 * 60 * 60_000;

/** A sign-in waiting for its second factor or its enrolment lasts this long from the password. */
const PENDING_MAX_MS = 15 * 60_000;

/**
 * A person's session ends after 30 minutes idle; a front-desk display only at the end of its
 * shift (12 h); a sign-in still waiting for its second factor or enrolment after 15 minutes.
 */
export function sessionExpired(s: { createdAt: string; lastSeenAt: string; display: boolean; stage?: SessionStage }, now: number): boolean {
  const age = now - Date.parse(s.createdAt);
  if (s.stage !== undefined && s.stage !== 'full' && age > PENDING_MAX_MS) return true;
  return (!s.display && now - Date.parse(s.lastSeenAt) > SESSION_IDLE_MS) || age > SESSION_MAX_MS;
}

/**
 * The id a session is shown and ended by. Its row's id is the SHA-256 of the cookie's
 * token, the key every request finds it by: that is never sent out, only this hash of it.
 */
export function publicSessionId(rowId: string): string {
  return createHash('sha256').update(`session:${rowId}`).digest('hex').slice(0, 32);
}

/** The browser (with its major version) and the operating system a User-Agent names, each null when it names none. */
export function deviceOf(userAgent: string | null): { browser: string | null; system: string | null } {
  if (userAgent === null || userAgent.trim() === '') return { browser: null, system: null };
  const parsed = Bowser.parse(userAgent);
  const major = parsed.browser.version?.split('.')[0];
  const browser = parsed.browser.name ? [parsed.browser.name, major].filter(Boolean).join(' ') : null;
  const system = [parsed.platform.model, parsed.os.name].filter(Boolean).join(', ') || null;
  return { browser, system };
}

/** The device as one line of text (the command line's): "Chrome 120 on Linux", or "unknown". */
export function deviceName(userAgent: string | null): string {
  const { browser, system } = deviceOf(userAgent);
  return [browser, system].filter(Boolean).join(' on ') || 'unknown';
}

/** The user's sessions that have not expired, the most recently seen first. */
export async function liveUserSessions(db: DbOrTrx, hotelId: string, userId: string): Promise<SessionDetails[]> {
  const now = Date.now();
  return (await listUserSessions(db, hotelId, userId)).filter((s) => !sessionExpired(s, now));
}
