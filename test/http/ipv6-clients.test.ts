import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addStaffUser, DashboardClient, send, STAFF_PASSWORD, withinOneWindow, type Target } from '../support/dashboard-client.js';
import { addIpv6Lab, targetFrom } from '../support/client-addresses.js';
import { startLoggedServer } from '../support/log-capture.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// README (Connections) and docs/dashboard.md (Security): an IPv6 client usually holds a
// whole /64 and may use any of its addresses, so every per-address count takes the /64 as
// one client: the connection cap, the per-IP limit of requests without a key, the
// failed-login limits and the security log's lines per address. Two addresses of one
// private /64 and one of the next are added to `lo` for this file (root only).

const { lab, reason } = addIpv6Lab();
if (!lab) console.warn(`test/http/ipv6-clients.test.ts skipped: ${reason}`);
process.once('exit', () => lab?.remove());
afterAll(() => lab?.remove());

const MINUTE = 60_000;

describe.skipIf(!lab).each(testEngines())('IPv6 clients count by their /64 (%s)', (engine) => {
  const { sameA, sameB, other } = lab ?? { sameA: '', sameB: '', other: '' };
  const open: Array<{ close(): Promise<void> }> = [];
  let t: TestServer;
  /** A client whose connections come from `address`; the server listens on sameA. */
  const from = (address: string): Target => {
    const target = targetFrom({ dataDir: t.config.dataDir, httpsPort: t.server.httpsPort }, address, sameA);
    open.push(target);
    return target;
  };

  // A server per test: each test's requests count against the per-IP limits.
  beforeEach(async () => {
    t = await startTestServer(engine, { HOST: sameA });
  });
  afterEach(async () => {
    for (const c of open.splice(0)) await c.close();
    await t.close();
  });

  it('the per-IP limit of requests without a key (100 a minute): two addresses of one /64 share it, the next /64 has its own', async () => {
    const [a, b, c] = [from(sameA), from(sameB), from(other)];
    await withinOneWindow(MINUTE, 15_000);
    const remaining = async (target: Target): Promise<string | undefined> => (await send(target, 'GET', '/no-such-path')).headers['x-ratelimit-remaining'];
    expect(await remaining(a)).toBe('99');
    expect(await remaining(b)).toBe('98');
    expect(await remaining(c)).toBe('99');
    for (let i = 0; i < 97; i++) await send(a, 'GET', '/no-such-path');
    expect(await remaining(b)).toBe('0');
    const refused = await send(a, 'GET', '/no-such-path');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED' });
    expect((await send(b, 'GET', '/no-such-path')).status).toBe(429);
    expect((await send(c, 'GET', '/no-such-path')).status).toBe(404);
  });

  it('failed logins for one account: 5 wrong from two addresses of one /64 hold that /64, the owner logs in from the next /64', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `v6-pair-${engine}@login.example`, 'receptionist');
    const [a, b, c] = [from(sameA), from(sameB), from(other)];
    await withinOneWindow(15 * MINUTE, 30_000);
    for (const [i, target] of [a, b, a, b, a].entries()) expect((await new DashboardClient(target).login(user.email, `wrong-${i}`)).status).toBe(401);
    expect((await new DashboardClient(b).login(user.email, STAFF_PASSWORD)).status).toBe(429);
    expect((await new DashboardClient(c).login(user.email, STAFF_PASSWORD)).status).toBe(200);
  }, 60_000);

  it('the security log: at most 10 lines a minute per event and /64, whichever of its addresses; the next /64 has its own', async () => {
    const s = await startLoggedServer(engine, { HOST: sameA }, 'info');
    const at = (address: string): Target & { close(): Promise<void> } => targetFrom({ dataDir: s.dataDir, httpsPort: s.server.httpsPort }, address, sameA);
    const [a, b, c] = [at(sameA), at(sameB), at(other)];
    try {
      await withinOneWindow(MINUTE, 15_000);
      const refuse = async (target: Target): Promise<void> => {
        const res = await send(target, 'GET', '/api/pms/v1/no-hotel/guests', { headers: { authorization: 'Bearer pms_live_not-a-key' } });
        expect(res.status).toBe(401);
      };
      for (let i = 0; i < 6; i++) {
        await refuse(a);
        await refuse(b);
      }
      await refuse(c);
      await expect.poll(() => s.lines.filter((l) => l.msg === 'request').length).toBe(13);
      const security = s.lines.filter((l) => l.event === 'UNAUTHORIZED');
      expect(security.filter((l) => l.ip === sameA || l.ip === sameB)).toHaveLength(10);
      expect(security.filter((l) => l.ip === other)).toHaveLength(1);
    } finally {
      for (const target of [a, b, c]) await target.close();
      await s.close();
    }
  });
});
