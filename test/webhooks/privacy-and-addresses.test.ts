import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runRetention } from '../../src/jobs/retention.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

// Issue 12 with issue 10: an erasure is an event too (ids and counts, no personal data)
// and removes the guest's data from the outbox; events are kept 30 days. Addresses: an
// endpoint that resolves into this host's network is refused at delivery time unless the
// operator allows private networks.

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
    expect((await t.post(`/api/pms/v1/${t.slug}/guests/checkin`, g)).status).toBe(200);
    expect((await t.post(`/api/pms/v1/${t.slug}/guests/checkout`, { pmsGuestId: 'ERASE-ME' })).status).toBe(200);
    await vi.waitFor(() => expect(receiver.accepted().length).toBe(2), { timeout: 10_000 });
    const stay = await db().selectFrom('guests').select('id').where('pms_guest_id', '=', 'ERASE-ME').executeTakeFirstOrThrow();
    const erased = await admin.post(`/guests/${stay.id}/erase`, {});
    expect(erased.status).toBe(200);
    expect(erased.body.erased.webhookEvents).toBe(2);
    await vi.waitFor(() => expect(receiver.accepted().length).toBe(3), { timeout: 10_000 });
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

  it('without WEBHOOK_ALLOW_PRIVATE_NETWORKS: plain http:// and loopback URLs are refused when stored, and a name that resolves to a loopback address when a delivery connects', async () => {
    const local = new WebhookReceiver();
    const port = new URL(await local.listen()).port;
    const strict = await startTestServer(engine, {});
    try {
      await addStaffUser(strict.server.database.db, strict.slug, `strict-${engine}@erase.example`, 'admin');
      const strictAdmin = await DashboardClient.loggedIn(strict, `strict-${engine}@erase.example`);
      for (const url of [`https://127.0.0.1:${port}/hooks`, `https://localhost:${port}/hooks`, `https://[::1]:${port}/hooks`]) {
        const refused = await strictAdmin.post('/webhooks', { url });
        expect(refused.status, url).toBe(422);
        expect(refused.body.errors[0], url).toMatchObject({ field: 'url', message: expect.stringContaining('WEBHOOK_ALLOW_PRIVATE_NETWORKS') });
      }
      const plain = await strictAdmin.post('/webhooks', { url: 'http://hooks.example.com/in' });
      expect(plain.status).toBe(422);
      expect(plain.body.errors[0].message).toContain('https://');
      // An endpoint stored while the operator allowed private networks, under a name that
      // resolves to this host: the address is checked when the delivery connects.
      const sdb = strict.server.database.db;
      const hotel = await sdb.selectFrom('hotels').select('id').where('slug', '=', strict.slug).executeTakeFirstOrThrow();
      await sdb
        .insertInto('webhook_endpoints')
        .values({
          id: 'whe_localhost',
          hotel_id: hotel.id,
          url: `https://localhost:${port}/hooks`,
          event_types: null,
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          previous_secret: null,
          previous_secret_until: null,
          created_at: new Date().toISOString(),
          disabled_at: null,
          disabled_reason: null,
        })
        .execute();
      expect((await strictAdmin.post('/webhooks/whe_localhost/test')).status).toBe(200);
      await vi.waitFor(
        async () => {
          const [d] = (await strictAdmin.get('/webhooks/whe_localhost/deliveries')).body.deliveries;
          expect(d).toMatchObject({ status: 'pending', lastStatus: null });
          expect(d.attempts).toBeGreaterThanOrEqual(1);
          expect(d.lastError).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), which is not on the public internet$/);
        },
        { timeout: 10_000 },
      );
      expect(local.received).toHaveLength(0);
      expect(local.unverified).toHaveLength(0);
    } finally {
      await strict.close();
      await local.close();
    }
  });
});
