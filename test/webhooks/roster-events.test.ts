import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer, pmsBase } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { WebhookReceiver, type Received } from '../support/webhook-receiver.js';
import { scaled } from '../support/test-run.js';

// README.md, "Webhooks": every roster change reaches the hotel's endpoints as a signed
// event, with the guest as GET /guests shows it, the changes of updates and moves, and
// the actor; test keys never produce one; each endpoint receives a hotel's events in
// commit order.

describe.each(testEngines())('roster changes as webhook events (%s)', (engine) => {
  let t: TestServer;
  let n = 0;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestServer(engine, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await t.close();
  });

  /** A fresh hotel with an admin, a key pair and an endpoint (all event types) whose receiver verifies every signature. */
  async function hotel(events?: string[]) {
    const slug = `hooks-${engine}-${++n}`;
    const keys = await t.addHotel(slug);
    const email = `admin-${slug}@hooks.example`;
    await addStaffUser(t.server.database.db, slug, email, 'admin');
    const admin = await DashboardClient.loggedIn(t, email);
    const receiver = new WebhookReceiver();
    receivers.push(receiver);
    const created = await admin.post('/webhooks', { url: await receiver.listen(), ...(events ? { events } : {}) });
    expect(created.status).toBe(201);
    receiver.trust(created.body.endpoint.secret);
    const base = `${pmsBase(slug)}`;
    return {
      slug,
      keys,
      admin,
      receiver,
      endpointId: created.body.endpoint.endpointId as string,
      post: (path: string, body: unknown, key = keys.live) => t.post(`${base}${path}`, body, { key }),
      list: async () => (await t.api('GET', `${base}/guests`, { key: keys.live })).body.guests as Array<Record<string, unknown>>,
      /** Waits until `count` deliveries were accepted; returns them in arrival order. */
      arrived: async (count: number): Promise<Received[]> => {
        await vi.waitFor(() => expect(receiver.accepted().length).toBeGreaterThanOrEqual(count), { timeout: scaled(15_000) });
        return receiver.accepted();
      },
    };
  }

  it('a check-in, an update, a move with other changes and a check-out: one event each (the move two), with the guest as GET /guests shows it', async () => {
    const h = await hotel();
    const g = guest({ pmsGuestId: 'EVT-1', roomNumber: '101', lastName: 'Lovelace' });
    expect((await h.post('/guests/checkin', g)).status).toBe(200);
    const [listed] = await h.list();
    const [checkedIn] = await h.arrived(1);
    expect(checkedIn?.body).toMatchObject({
      type: 'guest.checked_in',
      hotel: { slug: h.slug },
      data: { guest: listed, actor: { type: 'pms', keyId: h.keys.keyId } },
    });
    expect(checkedIn?.id).toBe(checkedIn?.body.id);

    expect((await h.post('/guests/update', { pmsGuestId: 'EVT-1', lastName: 'King' })).status).toBe(200);
    const updated = (await h.arrived(2))[1];
    expect(updated?.body).toMatchObject({
      type: 'guest.updated',
      data: { guest: { lastName: 'King', roomNumber: '101' }, changes: { lastName: { from: 'Lovelace', to: 'King' } } },
    });

    expect((await h.post('/guests/update', { pmsGuestId: 'EVT-1', roomNumber: '202', adults: 2 })).status).toBe(200);
    const [moved, alsoUpdated] = (await h.arrived(4)).slice(2);
    expect(moved?.body).toMatchObject({
      type: 'guest.room_moved',
      data: { guest: { roomNumber: '202', adults: 2 }, changes: { roomNumber: { from: '101', to: '202' } } },
    });
    expect(moved?.body.data.changes).not.toHaveProperty('adults');
    expect(alsoUpdated?.body).toMatchObject({ type: 'guest.updated', data: { changes: { adults: { from: null, to: 2 } } } });
    const [afterMove] = await h.list();
    expect(alsoUpdated?.body.data.guest).toEqual(afterMove);

    expect((await h.post('/guests/checkout', { pmsGuestId: 'EVT-1' })).status).toBe(200);
    const checkedOut = (await h.arrived(5))[4];
    expect(checkedOut?.body).toMatchObject({ type: 'guest.checked_out', data: { guest: { guestId: listed?.guestId, roomNumber: '202' } } });
    // Each event once, each with its own id, signed (the receiver verified all).
    expect(new Set(h.receiver.accepted().map((r) => r.id)).size).toBe(5);
    expect(h.receiver.unverified).toHaveLength(0);
  });

  it('an update that changes nothing sends nothing; test-key requests never send anything', async () => {
    const h = await hotel();
    expect((await h.post('/guests/checkin', guest({ pmsGuestId: 'SAME', roomNumber: '1', lastName: 'Same' }))).status).toBe(200);
    await h.arrived(1);
    expect((await h.post('/guests/update', { pmsGuestId: 'SAME', lastName: 'Same' })).status).toBe(200);
    const test = h.keys.test;
    expect((await h.post('/guests/checkin', guest({ pmsGuestId: 'T-1', roomNumber: '2' }), test)).status).toBe(200);
    expect((await h.post('/guests/update', { pmsGuestId: 'T-1', lastName: 'X' }, test)).status).toBe(200);
    expect((await h.post('/guests/checkout', { pmsGuestId: 'T-1' }, test)).status).toBe(200);
    expect((await h.post('/guests/sync', { syncMode: 'full', guests: [] }, test)).status).toBe(200);
    // A fence: a live change after them all; when its event has arrived, nothing else came.
    expect((await h.post('/guests/checkout', { pmsGuestId: 'SAME' })).status).toBe(200);
    const all = await h.arrived(2);
    expect(all.map((r) => r.body.type)).toEqual(['guest.checked_in', 'guest.checked_out']);
    const outbox = await t.server.database.db
      .selectFrom('webhook_events')
      .innerJoin('hotels', 'hotels.id', 'webhook_events.hotel_id')
      .select('type')
      .where('hotels.slug', '=', h.slug)
      .execute();
    expect(outbox).toHaveLength(2);
  });

  it('a staff walk-in names its staff actor; an endpoint gets only the types it asked for', async () => {
    const h = await hotel(['guest.checked_out']);
    const walkIn = await h.admin.post('/guests', { lastName: 'Walker', roomNumber: '7', checkInDate: '2026-11-23', checkOutDate: '2026-11-24' });
    expect(walkIn.status).toBe(201);
    const out = await h.admin.post(`/guests/${walkIn.body.guest.id as string}/checkout`, {});
    expect(out.status).toBe(200);
    const [only] = await h.arrived(1);
    expect(only?.body).toMatchObject({
      type: 'guest.checked_out',
      data: { guest: { source: 'receptionist', lastName: 'Walker' }, actor: { type: 'staff', userId: h.admin.session.user.id } },
    });
    // Nothing was queued for the check-in this endpoint did not ask for.
    const kinds = (await h.admin.get(`/webhooks/${h.endpointId}/deliveries`)).body.deliveries.map((d: { eventType: string }) => d.eventType);
    expect(kinds).toEqual(['guest.checked_out']);
  });

  it('a sync sends one event per guest it changed, then sync.completed with the summary', async () => {
    const h = await hotel();
    for (const [id, room] of [
      ['S-STAY', '1'],
      ['S-MOVE', '2'],
      ['S-LEAVE', '3'],
    ] as const)
      expect((await h.post('/guests/checkin', guest({ pmsGuestId: id, roomNumber: room, lastName: id }))).status).toBe(200);
    await h.arrived(3);
    const list = [
      guest({ pmsGuestId: 'S-STAY', roomNumber: '1', lastName: 'S-STAY' }),
      guest({ pmsGuestId: 'S-MOVE', roomNumber: '20', lastName: 'S-MOVE' }),
      guest({ pmsGuestId: 'S-NEW', roomNumber: '4', lastName: 'S-NEW' }),
    ];
    const synced = await t.post(`${pmsBase(h.slug)}/guests/sync`, { syncMode: 'full', guests: list }, { key: h.keys.live, idempotencyKey: uniqueKey('sync') });
    expect(synced.status).toBe(200);
    const fromSync = (await h.arrived(7)).slice(3);
    expect(fromSync.map((r) => r.body.type)).toEqual(['guest.checked_out', 'guest.room_moved', 'guest.checked_in', 'sync.completed']);
    expect(fromSync[0]?.body.data).toMatchObject({ guest: { pmsGuestId: 'S-LEAVE', roomNumber: '3' } });
    expect(fromSync[1]?.body.data).toMatchObject({ guest: { pmsGuestId: 'S-MOVE', roomNumber: '20' }, changes: { roomNumber: { from: '2', to: '20' } } });
    const listed = await h.list();
    expect(fromSync[2]?.body.data.guest).toEqual(listed.find((g) => g.pmsGuestId === 'S-NEW'));
    expect(fromSync[1]?.body.data.guest).toEqual(listed.find((g) => g.pmsGuestId === 'S-MOVE'));
    expect(fromSync[3]?.body.data).toEqual({ summary: synced.body.summary, actor: { type: 'pms', keyId: h.keys.keyId } });
  });

  it("under 50 concurrent changes each endpoint receives the events in commit order (and each guest's in the order they happened)", async () => {
    const h = await hotel();
    // 10 guests, each checked in, updated 3 times and checked out by its own sequence of
    // requests, the 10 sequences running at once: 50 changes.
    await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const id = `ORD-${i}`;
        expect((await h.post('/guests/checkin', guest({ pmsGuestId: id, roomNumber: `O${i}` }))).status).toBe(200);
        for (let k = 1; k <= 3; k++) expect((await h.post('/guests/update', { pmsGuestId: id, adults: k })).status).toBe(200);
        expect((await h.post('/guests/checkout', { pmsGuestId: id })).status).toBe(200);
      }),
    );
    const arrived = await h.arrived(50);
    const committed = await t.server.database.db
      .selectFrom('webhook_events')
      .innerJoin('hotels', 'hotels.id', 'webhook_events.hotel_id')
      .select(['webhook_events.id', 'webhook_events.seq'])
      .where('hotels.slug', '=', h.slug)
      .orderBy('webhook_events.seq')
      .execute();
    expect(arrived.map((r) => r.id)).toEqual(committed.map((e) => e.id));
    for (let i = 0; i < 10; i++) {
      const mine = arrived.filter((r) => (r.body.data.guest as { pmsGuestId: string }).pmsGuestId === `ORD-${i}`);
      expect(mine.map((r) => r.body.type)).toEqual(['guest.checked_in', 'guest.updated', 'guest.updated', 'guest.updated', 'guest.checked_out']);
      expect(mine.slice(1, 4).map((r) => (r.body.data.changes as { adults: { to: number } }).adults.to)).toEqual([1, 2, 3]);
    }
  });
});
