import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { sample } from '../support/metrics.js';
import { scaled } from '../support/test-run.js';

// Webhook metrics: deliveries counted by outcome, and the age of the oldest delivery
// not yet done, on the METRICS_PORT listener.

describe.each(testEngines())('webhook metrics (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  const receiver = new WebhookReceiver();
  const metrics = async () => (await (await request(`http://127.0.0.1:${t.server.metricsPort}/metrics`)).body.text()) as string;

  beforeAll(async () => {
    t = await startTestServer(engine, { METRICS_PORT: '0', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    await addStaffUser(t.server.database.db, t.slug, `admin-${engine}@metrics-hooks.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, `admin-${engine}@metrics-hooks.example`);
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('innsync_webhook_deliveries_total by outcome; innsync_webhook_outbox_oldest_seconds while a delivery waits, 0 once done', async () => {
    const created = (await admin.post('/webhooks', { url: await receiver.listen() })).body.endpoint;
    receiver.trust(created.secret);
    receiver.answerWith(503);
    await admin.post(`/webhooks/${created.endpointId}/test`);
    await vi.waitFor(async () => expect(sample(await metrics(), 'innsync_webhook_deliveries_total', { outcome: 'retry' })).toBe(1), {
      timeout: scaled(10_000),
    });
    await vi.waitFor(async () => expect(sample(await metrics(), 'innsync_webhook_deliveries_total', { outcome: 'succeeded' })).toBe(1), {
      timeout: scaled(10_000),
    });
    expect(sample(await metrics(), 'innsync_webhook_outbox_oldest_seconds')).toBe(0);
    // A receiver that keeps failing: the delivery waits, and the gauge shows its age.
    receiver.answerWith(...Array.from({ length: 50 }, () => 500));
    await admin.post(`/webhooks/${created.endpointId}/test`);
    await vi.waitFor(async () => expect(sample(await metrics(), 'innsync_webhook_outbox_oldest_seconds')).toBeGreaterThan(0), { timeout: scaled(10_000) });
  });
});
