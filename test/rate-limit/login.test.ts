import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { policyBucket } from '../../src/rate-limit/limits.js';
import { countLoginAttempt, LOGIN_FAILURE_LIMITS } from '../../src/rate-limit/login.js';
import { MemoryRateLimitStore } from '../../src/rate-limit/stores.js';

// docs/dashboard.md, "Security": the login's three limits, counted by countLoginAttempt.
describe('login attempts (rate-limit/login.ts)', () => {
  const window = 15 * 60_000;
  const t0 = Date.UTC(2026, 10, 23, 10, 0, 0);
  const email = 'desk@limits.example';
  const hashed = createHash('sha256').update(email).digest('base64url');

  it('lets 5 attempts of an e-mail from one address through and refuses the 6th until the window ends; another address may still try', async () => {
    const store = new MemoryRateLimitStore();
    const allowed = [];
    for (let i = 0; i < 6; i++) allowed.push((await countLoginAttempt(store, email, '192.0.2.1', t0 + 60_000)).allowed);
    expect(allowed).toEqual([true, true, true, true, true, false]);
    expect(await countLoginAttempt(store, email, '192.0.2.1', t0 + 60_000)).toEqual({ allowed: false, retryAfterSeconds: (window - 60_000) / 1000 });
    expect((await countLoginAttempt(store, email, '192.0.2.2', t0 + 60_000)).allowed).toBe(true);
    expect((await countLoginAttempt(store, email, '192.0.2.1', t0 + window)).allowed).toBe(true);
    store.close();
  });

  it('takes a right password back: its attempts count against no limit', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 10; i++) {
      const attempt = await countLoginAttempt(store, email, '192.0.2.1', t0 + i);
      if (!attempt.allowed) throw new Error(`attempt ${i} refused`);
      await attempt.takeBack();
    }
    for (const [policy, bucket] of [
      [LOGIN_FAILURE_LIMITS.ip, '192.0.2.1'],
      [LOGIN_FAILURE_LIMITS.account, `${hashed}@192.0.2.1`],
      [LOGIN_FAILURE_LIMITS.accountCeiling, hashed],
    ] as const) {
      expect(await store.peek(policyBucket(policy, bucket), policy.windowMs, t0 + 20)).toBe(0);
    }
    store.close();
  });

  it('counts the e-mail by its SHA-256, and an attempt an address limit refuses not against the account ceiling', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < LOGIN_FAILURE_LIMITS.ip.limit; i++) await countLoginAttempt(store, `guess-${i}@limits.example`, '192.0.2.9', t0);
    expect((await countLoginAttempt(store, email, '192.0.2.9', t0)).allowed).toBe(false);
    const ceiling = LOGIN_FAILURE_LIMITS.accountCeiling;
    expect(await store.peek(policyBucket(ceiling, hashed), ceiling.windowMs, t0)).toBe(0);
    expect((await countLoginAttempt(store, email, '192.0.2.10', t0)).allowed).toBe(true);
    expect(await store.peek(policyBucket(ceiling, hashed), ceiling.windowMs, t0)).toBe(1);
    store.close();
  });

  it('stops an e-mail guessed from many addresses at its ceiling (50), from everywhere', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < LOGIN_FAILURE_LIMITS.accountCeiling.limit; i++) {
      expect((await countLoginAttempt(store, email, `198.51.100.${i}`, t0)).allowed).toBe(true);
    }
    expect((await countLoginAttempt(store, email, '203.0.113.1', t0)).allowed).toBe(false);
    expect((await countLoginAttempt(store, 'other@limits.example', '203.0.113.1', t0)).allowed).toBe(true);
    store.close();
  });
});
