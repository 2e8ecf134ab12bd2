import { createHash } from 'node:crypto';
import { consume, policyBucket, type RateLimitPolicy } from './limits.js';
import type { RateLimitStore } from './stores.js';

/**
 * Fixed windows for dashboard login attempts. Every attempt is counted before the password
 * check and a successful one takes its count back, so in effect they limit failed logins:
 * - `account`: per e-mail and client address (an IPv6 client by its /64): guessing from
 *   one place locks that place out, not the account's owner logging in from elsewhere;
 * - `accountCeiling`: per e-mail from any address, much higher: a guesser spread over
 *   many addresses is still stopped (and then, only then, the owner waits too);
 * - `ip`: per client address, any e-mails.
 */
export const LOGIN_FAILURE_LIMITS = {
  account: { name: 'login-account', limit: 5, windowMs: 15 * 60_000 },
  accountCeiling: { name: 'login-account-ceiling', limit: 50, windowMs: 15 * 60_000 },
  ip: { name: 'login-ip', limit: 20, windowMs: 15 * 60_000 },
} as const satisfies Record<string, RateLimitPolicy>;

/**
 * A login attempt as the limits counted it: refused (`retryAfterSeconds`: when the window
 * that refused it ends, at least 1), or let through, with `takeBack` to call once the
 * password proved right.
 */
export type LoginAttempt = { allowed: false; retryAfterSeconds: number } | { allowed: true; takeBack: () => Promise<void> };

/**
 * Counts one login attempt of `email` (as the login compares it: trimmed, lower case) from
 * `client` (clientOf: an address, an IPv6 client's /64) against LOGIN_FAILURE_LIMITS
 * (docs/dashboard.md, "Security"): per address, per account and address, per account from
 * anywhere. Every attempt is counted before the (slow) password check, atomically, so
 * parallel guesses cannot all slip in under a limit; a successful login takes its counts
 * back (`takeBack`, in the window of `nowMs`). An attempt one limit refuses is not counted
 * by the next: a guesser held at one address does not fill the account's ceiling from there.
 */
export async function countLoginAttempt(store: RateLimitStore, email: string, client: string, nowMs: number): Promise<LoginAttempt> {
  // The e-mail is counted by its hash: the counters (in the database with PostgreSQL) hold no address book.
  const account = createHash('sha256').update(email).digest('base64url');
  const counts = [
    { policy: LOGIN_FAILURE_LIMITS.ip, bucket: client },
    { policy: LOGIN_FAILURE_LIMITS.account, bucket: `${account}@${client}` },
    { policy: LOGIN_FAILURE_LIMITS.accountCeiling, bucket: account },
  ];
  for (const { policy, bucket } of counts) {
    const result = await consume(store, bucket, policy, nowMs);
    if (!result.allowed) return { allowed: false, retryAfterSeconds: Math.max(1, result.retryAfterSeconds) };
  }
  return {
    allowed: true,
    takeBack: async () => {
      await Promise.all(counts.map(({ policy, bucket }) => store.unhit(policyBucket(policy, bucket), policy.windowMs, nowMs)));
    },
  };
}
