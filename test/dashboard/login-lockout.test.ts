import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addStaffUser, DashboardClient, STAFF_PASSWORD, withinOneWindow, type Target } from '../support/dashboard-client.js';
import { targetFrom } from '../support/client-addresses.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md Security: failed logins are limited per account and client address (5
// in 15 minutes), so a guesser locks out the place it guesses from, not the account's
// owner elsewhere; a much higher ceiling per account from any address (50) still stops a
// guesser spread over many addresses. Loopback is all of 127.0.0.0/8: each client below
// is another address.

const WINDOW = 15 * 60_000;

describe.each(testEngines())('failed logins per account and address (%s)', (engine) => {
  let t: TestServer;
  const clients: Array<{ close(): Promise<void> }> = [];
  const from = (address: string): Target => {
    const target = targetFrom({ dataDir: t.config.dataDir, httpsPort: t.server.httpsPort }, address);
    clients.push(target);
    return target;
  };
  const login = (target: Target, email: string, password: string) => new DashboardClient(target).login(email, password);

  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await t.close();
  });

  it('5 wrong passwords from one address hold that address only: the right one from another address logs in', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `pair-${engine}@lockout.example`, 'receptionist');
    const [guesser, owner] = [from('127.0.0.2'), from('127.0.0.3')];
    await withinOneWindow(WINDOW, 60_000);
    for (let i = 0; i < 5; i++) expect((await login(guesser, user.email, `wrong-${i}`)).status, `failure ${i + 1}`).toBe(401);
    const held = await login(guesser, user.email, STAFF_PASSWORD);
    expect(held.status).toBe(429);
    expect(held.body).toMatchObject({ code: 'RATE_LIMITED', retryAfter: expect.any(Number) });
    // Refused attempts at the held address do not count against the account's ceiling.
    for (let i = 0; i < 60; i++) expect((await login(guesser, user.email, `wrong-again-${i}`)).status).toBe(429);
    const res = await login(owner, user.email, STAFF_PASSWORD);
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(user.email);
  }, 120_000);

  it('the ceiling: 50 failures for one account from 10 addresses lock it from any address, even with the right password; other accounts log in', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `ceiling-${engine}@lockout.example`, 'receptionist');
    const bystander = await addStaffUser(t.server.database.db, t.slug, `bystander-${engine}@lockout.example`, 'receptionist');
    const guessers = Array.from({ length: 10 }, (_, i) => from(`127.0.1.${i + 1}`));
    await withinOneWindow(WINDOW, 120_000);
    const statuses = await Promise.all(
      guessers.map(async (g) => {
        const seen: number[] = [];
        for (let i = 0; i < 5; i++) seen.push((await login(g, user.email, `wrong-${i}`)).status);
        return seen;
      }),
    );
    expect(statuses.flat()).toEqual(Array<number>(50).fill(401));
    const owner = from('127.0.2.1');
    const locked = await login(owner, user.email, STAFF_PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({ code: 'RATE_LIMITED', retryAfter: expect.any(Number) });
    expect(locked.headers['retry-after']).toBe(String(locked.body.retryAfter));
    expect(locked.setCookies).toEqual([]);
    expect((await login(owner, bystander.email, STAFF_PASSWORD)).status).toBe(200);
  }, 240_000);
});
