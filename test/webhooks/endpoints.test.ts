import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { scaled } from '../support/test-run.js';

// README.md, "Webhooks": endpoints managed by a hotel's admin; a test event signed per Standard
// Webhooks (verified with the `standardwebhooks` package), retried with the same
// webhook-id, sent again on request, and signed by both secrets during a rotation.

describe.each(testEngines())('webhook endpoints (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  const receiver = new WebhookReceiver();
  let url: string;

  beforeAll(async () => {
    t = await startTestServer(engine, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    await addStaffUser(t.server.database.db, t.slug, `admin-${engine}@hooks.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, `admin-${engine}@hooks.example`);
    url = await receiver.listen();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const deliveries = async (endpointId: string) => (await admin.get(`/webhooks/${endpointId}/deliveries`)).body.deliveries as Array<Record<string, unknown>>;

  it('an admin adds an endpoint: its whsec_ secret is in the answer once, never in the list', async () => {
    const res = await admin.post('/webhooks', { url, events: ['guest.checked_in', 'guest.checked_out'] });
    expect(res.status).toBe(201);
    expect(res.body.endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(res.body.endpoint).toMatchObject({ url, events: ['guest.checked_in', 'guest.checked_out'], enabled: true });
    const list = await admin.get('/webhooks');
    expect(list.body.endpoints.map((e: { endpointId: string }) => e.endpointId)).toContain(res.body.endpoint.endpointId);
    expect(list.text).not.toContain(res.body.endpoint.secret);
    expect(list.text).not.toContain('whsec_');
  });

  it('an unknown event type and a URL that is not a URL are 422 naming the field and the fix', async () => {
    const badType = await admin.post('/webhooks', { url, events: ['guest.arrived'] });
    expect(badType.status).toBe(422);
    expect(badType.body.errors[0]).toMatchObject({ field: 'events' });
    expect(badType.body.errors[0].message).toContain('guest.checked_in');
    const badUrl = await admin.post('/webhooks', { url: 'hooks.example.com/in' });
    expect(badUrl.status).toBe(422);
    expect(badUrl.body.errors[0]).toMatchObject({ field: 'url' });
  });

  it('a receptionist sees no webhooks (403)', async () => {
    await addStaffUser(t.server.database.db, t.slug, `desk-${engine}@hooks.example`, 'receptionist');
    const desk = await DashboardClient.loggedIn(t, `desk-${engine}@hooks.example`);
    expect((await desk.get('/webhooks')).status).toBe(403);
  });

  it('"Send a test event": one signed webhook.test that standardwebhooks verifies, with the documented body', async () => {
    const created = (await admin.post('/webhooks', { url })).body.endpoint;
    receiver.trust(created.secret);
    const before = receiver.accepted().length;
    const sent = await admin.post(`/webhooks/${created.endpointId}/test`);
    expect(sent.status).toBe(200);
    await vi.waitFor(() => expect(receiver.accepted().length).toBe(before + 1), { timeout: scaled(10_000) });
    const got = receiver.accepted().at(-1);
    expect(got?.id).toBe(sent.body.eventId);
    expect(got?.body).toMatchObject({ id: sent.body.eventId, type: 'webhook.test', hotel: { slug: t.slug }, data: { message: expect.any(String) } });
    expect(Date.parse(got?.body.createdAt ?? '')).not.toBeNaN();
    expect(receiver.unverified).toHaveLength(0);
    const [d] = await deliveries(created.endpointId);
    expect(d).toMatchObject({ eventType: 'webhook.test', status: 'succeeded', attempts: 1, lastStatus: 200 });
    // Of the receiver's answer only its status is kept (its body could echo a guest's data).
    expect(d).not.toHaveProperty('lastResponse');
    expect(d?.lastLatencyMs).toEqual(expect.any(Number));
  });

  it('a receiver answering 500 twice, then 200, gets the same webhook-id three times; the delivery shows 3 attempts', async () => {
    const created = (await admin.post('/webhooks', { url })).body.endpoint;
    receiver.trust(created.secret);
    receiver.answerWith(500, 500);
    const sent = await admin.post(`/webhooks/${created.endpointId}/test`);
    await vi.waitFor(() => expect(receiver.received.filter((r) => r.id === sent.body.eventId).length).toBe(3), { timeout: scaled(15_000) });
    const tries = receiver.received.filter((r) => r.id === sent.body.eventId);
    expect(tries.map((r) => r.at >= 0)).toEqual([false, false, true]);
    await vi.waitFor(async () => expect((await deliveries(created.endpointId))[0]).toMatchObject({ status: 'succeeded', attempts: 3, lastStatus: 200 }));
  });

  it('"Send again" delivers the same event once more, with the same webhook-id', async () => {
    const created = (await admin.post('/webhooks', { url })).body.endpoint;
    receiver.trust(created.secret);
    const sent = await admin.post(`/webhooks/${created.endpointId}/test`);
    await vi.waitFor(() => expect(receiver.accepted().filter((r) => r.id === sent.body.eventId)).toHaveLength(1), { timeout: scaled(10_000) });
    const [first] = await deliveries(created.endpointId);
    const again = await admin.post(`/webhooks/${created.endpointId}/deliveries/${String(first?.id)}/resend`);
    expect(again.status).toBe(200);
    await vi.waitFor(() => expect(receiver.accepted().filter((r) => r.id === sent.body.eventId)).toHaveLength(2), { timeout: scaled(10_000) });
  });

  it('rotating the secret: for 24 hours each delivery carries both signatures, and a receiver with either secret verifies it', async () => {
    const created = (await admin.post('/webhooks', { url })).body.endpoint;
    const rotated = await admin.post(`/webhooks/${created.endpointId}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.endpoint.secret as string;
    expect(fresh).not.toBe(created.secret);
    expect(Date.parse(rotated.body.endpoint.previousSecretUntil) - Date.now()).toBeGreaterThan(23 * 3600_000);
    receiver.trust(created.secret, fresh);
    const sent = await admin.post(`/webhooks/${created.endpointId}/test`);
    await vi.waitFor(() => expect(receiver.accepted().filter((r) => r.id === sent.body.eventId)).toHaveLength(1), { timeout: scaled(10_000) });
    const got = receiver.accepted().find((r) => r.id === sent.body.eventId);
    expect(got?.signature.split(' ')).toHaveLength(2);
    expect(got?.verifiedWith.sort()).toEqual([created.secret, fresh].sort());
    // Each secret alone verifies the same delivery.
    const body = JSON.stringify(got?.body);
    for (const secret of [created.secret as string, fresh]) {
      expect(() =>
        new Webhook(secret).verify(body, { 'webhook-id': got?.id ?? '', 'webhook-timestamp': got?.timestamp ?? '', 'webhook-signature': got?.signature ?? '' }),
      ).not.toThrow();
    }
  });

  it('a delivery failing for 3 days is given up and its endpoint disabled, the reason shown; later events wait, and are sent once an admin enables it again', async () => {
    const created = (await admin.post('/webhooks', { url })).body.endpoint;
    receiver.trust(created.secret);
    receiver.answerWith(...Array.from({ length: 50 }, () => 500));
    const first = await admin.post(`/webhooks/${created.endpointId}/test`);
    await vi.waitFor(async () => expect((await deliveries(created.endpointId))[0]?.attempts).toBeGreaterThanOrEqual(1), { timeout: scaled(10_000) });
    // The first attempt was three days and a minute ago: the next failure is the last.
    await t.server.database.db
      .updateTable('webhook_deliveries')
      .set({ created_at: new Date(Date.now() - 3 * 24 * 3600_000 - 60_000).toISOString() })
      .where('event_id', '=', first.body.eventId)
      .execute();
    await vi.waitFor(async () => expect((await deliveries(created.endpointId))[0]).toMatchObject({ status: 'failed', lastStatus: 500 }), {
      timeout: scaled(10_000),
    });
    const listed = (await admin.get('/webhooks')).body.endpoints.find((e: { endpointId: string }) => e.endpointId === created.endpointId);
    expect(listed).toMatchObject({ enabled: false });
    expect(listed.disabledReason).toContain('HTTP 500');
    expect(listed.disabledReason).toContain('enable the endpoint again');
    // A disabled endpoint takes no new events, and its test event is refused, naming the fix.
    const refused = await admin.post(`/webhooks/${created.endpointId}/test`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('Enable');
    receiver.answerNormally();
    expect((await admin.post(`/webhooks/${created.endpointId}/enable`)).body.endpoint).toMatchObject({ enabled: true, disabledReason: null });
    const next = await admin.post(`/webhooks/${created.endpointId}/test`);
    await vi.waitFor(() => expect(receiver.accepted().map((r) => r.id)).toContain(next.body.eventId), { timeout: scaled(10_000) });
  });

  // The 10-second limit is the same code on both engines: run once.
  it.runIf(engine === 'sqlite')(
    'a receiver that does not answer within 10 seconds: the attempt counts as failed and is retried',
    async () => {
      const silent = http.createServer(() => undefined); // reads the request, never answers
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      try {
        const created = (await admin.post('/webhooks', { url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/slow` })).body.endpoint;
        await admin.post(`/webhooks/${created.endpointId}/test`);
        await vi.waitFor(
          async () =>
            expect((await deliveries(created.endpointId))[0]).toMatchObject({
              status: 'pending',
              attempts: 1,
              lastStatus: null,
              lastError: 'no answer within 10 seconds',
            }),
          { timeout: scaled(20_000), interval: 500 },
        );
      } finally {
        silent.closeAllConnections();
        silent.close();
      }
    },
    30_000,
  );
});
