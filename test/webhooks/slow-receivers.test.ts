import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { insertEndpoint } from '../../src/db/repositories/webhook.repository.js';
import { guest, startTestServer, testEngines, type TestServer, pmsBase } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { scaled } from '../support/test-run.js';

// One hotel's receivers that never answer hold only their own deliveries (README,
// Webhooks): each delivery goes on its own, and at most WEBHOOK_MAX_ENDPOINTS_PER_HOTEL of
// one hotel's are under way at once, so another hotel's event is sent while they hang.

/** A receiver that reads each request and never answers: it counts the requests it holds open. */
class DeadReceiver {
  open = 0;
  mostOpen = 0;
  private readonly server = http.createServer((req) => {
    this.open++;
    this.mostOpen = Math.max(this.mostOpen, this.open);
    req.resume();
    req.socket.on('close', () => this.open--);
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/dead`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const PER_HOTEL = 5;
const DEAD_ENDPOINTS = 25;

describe.each(testEngines())('slow webhook receivers of one hotel (%s)', (engine) => {
  let t: TestServer;
  const dead = new DeadReceiver();
  const healthy = new WebhookReceiver();
  const db = () => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_MAX_ENDPOINTS_PER_HOTEL: String(PER_HOTEL) });
    await addStaffUser(db(), t.slug, `admin-${engine}@slow.example`, 'admin');
    const admin = await DashboardClient.loggedIn(t, `admin-${engine}@slow.example`);
    const created = await admin.post('/webhooks', { url: await healthy.listen() });
    healthy.trust(created.body.endpoint.secret);
  });
  afterAll(async () => {
    // The dead receiver's connections close first: the deliveries under way end at once.
    await dead.close();
    await healthy.close();
    await t.close();
  });

  it("another hotel's event is delivered while one hotel's 25 deliveries hang, of which at most 5 are under way", async () => {
    const slugA = `dead-${engine}`;
    const keysA = await t.addHotel(slugA);
    const hotelA = await db().selectFrom('hotels').select('id').where('slug', '=', slugA).executeTakeFirstOrThrow();
    // More endpoints than the limit allows now: as if added under a higher limit.
    const deadUrl = await dead.listen();
    const now = new Date().toISOString();
    for (let i = 0; i < DEAD_ENDPOINTS; i++)
      await insertEndpoint(db(), { hotelId: hotelA.id, url: `${deadUrl}/${i}`, eventTypes: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', now });
    expect((await t.post(`${pmsBase(slugA)}/guests/checkin`, guest(), { key: keysA.live })).status).toBe(200);
    await vi.waitFor(() => expect(dead.open).toBe(PER_HOTEL), { timeout: scaled(10_000) });

    // The other hotel's check-in: its event arrives while hotel A's deliveries still hang.
    const checkIn = guest({ pmsGuestId: 'B-WHILE-A-HANGS' });
    expect((await t.post(`${t.pmsBase}/guests/checkin`, checkIn)).status).toBe(200);
    await vi.waitFor(
      () => expect(healthy.accepted().map((r) => r.body.data.guest)).toContainEqual(expect.objectContaining({ pmsGuestId: 'B-WHILE-A-HANGS' })),
      {
        timeout: scaled(15_000),
      },
    );
    // None of hotel A's attempts has ended (each waits for its 10-second limit) ...
    const aDeliveries = await db()
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select(['d.attempts', 'd.claimed_by'])
      .where('e.hotel_id', '=', hotelA.id)
      .execute();
    expect(aDeliveries).toHaveLength(DEAD_ENDPOINTS);
    expect(aDeliveries.filter((d) => Number(d.attempts) > 0)).toEqual([]);
    // ... and the claim rounds since (hotel B's among them) took no more of them than the hotel's share.
    expect(aDeliveries.filter((d) => d.claimed_by !== null)).toHaveLength(PER_HOTEL);
    expect(dead.open).toBe(PER_HOTEL);
    expect(dead.mostOpen).toBe(PER_HOTEL);
  }, 40_000);
});
