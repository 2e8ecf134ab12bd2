import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runRetention } from '../../src/jobs/retention.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { scaled } from '../support/test-run.js';

// An erasure is an event too (ids and counts, no personal data) and removes the guest's
// data from the outbox; events are kept 30 days. Addresses: test/webhooks/addresses.test.ts.

describe.each(testEngines())('webhooks, personal data and addresses (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  const receiver = new WebhookReceiver();
  const db = () => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    await addStaffUser(db(), t.slug, `admin-${engine}@erase.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, `admin-${engine}@erase.example`);
    const created = await admin.post('/webhooks', { url: await receiver.listen() });
    receiver.trust(created.body.endpoint.secret);
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('erasing a guest sends guest.erased (ids and counts only) and leaves no name, phone or e-mail in the outbox', async () => {
    const g = guest({ pmsGuestId: 'ERASE-ME', lastName: 'Eraseme', phone: '+4930555123', email: 'erase.me@mail.example' });
    expect((await t.post(`${t.pmsBase}/guests/checkin`, g)).status).toBe(200);
    expect((await t.post(`${t.pmsBase}/guests/checkout`, { pmsGuestId: 'ERASE-ME' })).status).toBe(200);
    await vi.waitFor(() => expect(receiver.accepted().length).toBe(2), { timeout: scaled(10_000) });
    const stay = await db().selectFrom('guests').select('id').where('pms_guest_id', '=', 'ERASE-ME').executeTakeFirstOrThrow();
    const erased = await admin.post(`/guests/${stay.id}/erase`, {});
    expect(erased.status).toBe(200);
    expect(erased.body.erased.webhookEvents).toBe(2);
    await vi.waitFor(() => expect(receiver.accepted().length).toBe(3), { timeout: scaled(10_000) });
    const event = receiver.accepted()[2];
    expect(event?.body).toMatchObject({
      type: 'guest.erased',
      data: { guestId: stay.id, pmsGuestId: 'ERASE-ME', guestIds: [stay.id], erased: { guests: 1 }, actor: { type: 'staff' } },
    });
    const outbox = (await db().selectFrom('webhook_events').select('payload').execute()).map((r) => r.payload).join('\n');
    for (const personal of ['Eraseme', '+4930555123', 'erase.me@mail.example', 'Ada']) expect(outbox).not.toContain(personal);
    expect(outbox).toContain(stay.id);
  });

  it('the retention job deletes events (and their deliveries) older than 30 days; innsync purge counts them', async () => {
    const before = await db()
      .selectFrom('webhook_events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(before.n)).toBeGreaterThan(0);
    const r = await runRetention(db(), null, Date.now() + 31 * 24 * 3600_000);
    expect(r.webhookEvents).toBe(Number(before.n));
    expect(await db().selectFrom('webhook_deliveries').selectAll().execute()).toEqual([]);
    expect(await db().selectFrom('webhook_events').selectAll().execute()).toEqual([]);
  });
});
