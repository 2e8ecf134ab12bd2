import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { runCli, storageEnv } from '../cli/cli-helpers.js';

// A hotel has at most WEBHOOK_MAX_ENDPOINTS_PER_HOTEL webhook endpoints (README,
// Webhooks): each costs every event a delivery, and its deliveries a place among the
// sender's; the dashboard and `innsync webhook add` answer 409 TOO_MANY_ENDPOINTS past it.

const FIX = 'ask the operator to raise WEBHOOK_MAX_ENDPOINTS_PER_HOTEL';

describe.each(testEngines())('webhook endpoints per hotel (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  const db = () => t.server.database.db;
  const url = 'https://hooks.example.com/in';

  beforeAll(async () => {
    t = await startTestServer(engine, { WEBHOOK_MAX_ENDPOINTS_PER_HOTEL: '3' });
    await addStaffUser(db(), t.slug, `admin-${engine}@cap.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, `admin-${engine}@cap.example`);
  });
  afterAll(async () => {
    await t.close();
  });

  it('the default is 10', () => {
    expect(loadConfig({}).webhookMaxEndpointsPerHotel).toBe(10);
    expect(() => loadConfig({ WEBHOOK_MAX_ENDPOINTS_PER_HOTEL: '0' })).toThrow('WEBHOOK_MAX_ENDPOINTS_PER_HOTEL must be a whole number from 1 to 1000');
  });

  it('the dashboard adds up to the limit, then answers 409 TOO_MANY_ENDPOINTS naming the fix; a removal makes room; other hotels are not counted', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const added = await admin.post('/webhooks', { url: `${url}/${i}` });
      expect(added.status).toBe(201);
      ids.push(added.body.endpoint.endpointId as string);
    }
    const refused = await admin.post('/webhooks', { url: `${url}/4` });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'TOO_MANY_ENDPOINTS', limit: 3, message: expect.stringContaining(FIX) });
    expect((await admin.get('/webhooks')).body.endpoints).toHaveLength(3);

    // Another hotel has its own three.
    const other = `cap-other-${engine}`;
    await t.addHotel(other);
    await addStaffUser(db(), other, `other-${engine}@cap.example`, 'admin');
    const otherAdmin = await DashboardClient.loggedIn(t, `other-${engine}@cap.example`);
    expect((await otherAdmin.post('/webhooks', { url })).status).toBe(201);

    expect((await admin.post(`/webhooks/${ids[0] ?? ''}/remove`)).status).toBe(200);
    expect((await admin.post('/webhooks', { url: `${url}/5` })).status).toBe(201);
    expect((await admin.post('/webhooks', { url: `${url}/6` })).status).toBe(409);
  });

  it('twelve additions at once for a new hotel: exactly three are stored, the others answered 409', async () => {
    const slug = `cap-race-${engine}`;
    await t.addHotel(slug);
    await addStaffUser(db(), slug, `race-${engine}@cap.example`, 'admin');
    const raceAdmin = await DashboardClient.loggedIn(t, `race-${engine}@cap.example`);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => raceAdmin.post('/webhooks', { url: `${url}/race-${i}` })));
    expect(answers.map((a) => a.status).sort()).toEqual([...Array<number>(3).fill(201), ...Array<number>(9).fill(409)]);
    const stored = await db()
      .selectFrom('webhook_endpoints as e')
      .innerJoin('hotels as h', 'h.id', 'e.hotel_id')
      .select('e.id')
      .where('h.slug', '=', slug)
      .execute();
    expect(stored).toHaveLength(3);
  });

  it('innsync webhook add past the limit exits 1 with the message that names the fix', async () => {
    const slug = `cap-cli-${engine}`;
    await t.addHotel(slug);
    const env = { ...storageEnv(t.config), WEBHOOK_MAX_ENDPOINTS_PER_HOTEL: '1' };
    expect((await runCli(['webhook', 'add', slug, url], { env })).code).toBe(0);
    const refused = await runCli(['webhook', 'add', slug, url], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(FIX);
  }, 60_000);
});
