import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { clientOf } from '../http/ip-limit.js';
import { countLoginAttempt } from '../rate-limit/login.js';
import * as staff from '../db/repositories/staff.repository.js';
import { verifyPassword } from '../staff/passwords.js';
import type { DashboardDeps } from './deps.js';

/**
 * A guess at an account's secrets (its password, a second-factor code, a pairing code),
 * counted by the failed-login limits (rate-limit/login.ts) before it is checked; refused
 * with 429 once a limit is reached. Returns the call that takes the attempt back when it
 * turned out right.
 */
export async function countedAttempt(deps: Pick<DashboardDeps, 'rateLimits' | 'metrics'>, req: FastifyRequest, email: string): Promise<() => Promise<void>> {
  const attempt = await countLoginAttempt(deps.rateLimits, email, clientOf(req), Date.now());
  if (attempt.allowed) return attempt.takeBack;
  deps.metrics?.rateLimited('login');
  const retryAfter = attempt.retryAfterSeconds;
  throw new ApiError('RATE_LIMITED', {
    message: `Too many failed logins; try again in ${Math.ceil(retryAfter / 60)} minutes.`,
    extra: { retryAfter },
    headers: { 'retry-after': String(retryAfter) },
  });
}

/**
 * The signed-in user's password entered again before a change to their sign-in (a factor, a
 * passkey, passkeys-only): counted as a login attempt of the account's e-mail, taken back
 * when right; 403 PASSWORD_INCORRECT when it is not the password of the (active) user.
 */
export async function passwordAgain(
  deps: Pick<DashboardDeps, 'db' | 'rateLimits' | 'metrics'>,
  req: FastifyRequest,
  s: staff.StaffSession,
  password: string,
): Promise<void> {
  const takeBack = await countedAttempt(deps, req, s.user.email);
  const hash = await staff.findPasswordHash(deps.db, s.hotel.id, s.user.id);
  if (hash === null || !(await verifyPassword(password, hash))) throw new ApiError('PASSWORD_INCORRECT');
  await takeBack();
}
