import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createHotel, issueKeyPair } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { addEndpoint } from '../../src/webhooks/endpoints.js';
import { recordEvents } from '../../src/webhooks/events.js';
import { createTestStorage, databaseEnv, guest, testEngines, uniqueKey } from '../support/harness.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { Agent, request } from 'undici';
import { readResponse } from '../support/http-response.js';
import { scaled } from '../support/test-run.js';

// README.md, "Webhooks": several instances on one PostgreSQL share the outbox; each
// delivery is sent once between them (claims with FOR UPDATE SKIP LOCKED), each endpoint
// still in order.

describe.runIf(testEngines().includes('postgres'))('two instances on one PostgreSQL', () => {
  const servers: RunningServer[] = [];
  const receivers = [new WebhookReceiver(), new WebhookReceiver()];
  const dirs: string[] = [];

  beforeAll(async () => {
    const storage = await createTestStorage('postgres');
    dirs.push(storage.dataDir);
    for (let i = 0; i < 2; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-two-'));
      dirs.push(dataDir);
      const config = loadConfig({
        PORT: '0',
        HTTP_PORT: 'off',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        ...databaseEnv(storage),
        LOG_LEVEL: 'silent',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      });
      servers.push(await startServer(config, pino({ level: 'silent' })));
    }
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const r of receivers) await r.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a sync of 1,000 arrivals: 1,001 events to each of two endpoints, every one delivered exactly once, in order', async () => {
    const [a, b] = servers;
    if (!a || !b) throw new Error('two servers expected');
    const db = a.database.db;
    const hotel = await createHotel(db, 'two-instances', 'Two Instances Hotel');
    const keys = await issueKeyPair(db, 'two-instances');
    for (const r of receivers) {
      const e = await addEndpoint(db, hotel.id, { url: await r.listen() }, { allowPrivateNetworks: true, maxEndpointsPerHotel: 10 });
      r.trust(e.secret);
    }
    const cert = fs.readFileSync(path.join(dirs[1] ?? '', 'tls', 'cert.pem'), 'utf8');
    const agent = new Agent({ connect: { ca: cert, servername: 'localhost' } });
    const list = Array.from({ length: 1000 }, (_, i) => guest({ pmsGuestId: `TWO-${i}`, roomNumber: String(1000 + i) }));
    const res = await readResponse(
      await request(`https://127.0.0.1:${a.httpsPort}/api/pms/v1/two-instances/guests/sync`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${keys.live}`, 'content-type': 'application/json', 'idempotency-key': uniqueKey('two') },
        body: JSON.stringify({ syncMode: 'full', guests: list }),
      }),
    );
    await agent.close();
    expect(res.status).toBe(200);
    const events = await db.selectFrom('webhook_events').select(['id', 'seq']).where('hotel_id', '=', hotel.id).orderBy('seq').execute();
    expect(events).toHaveLength(1001);
    for (const r of receivers) {
      await vi.waitFor(() => expect(r.accepted().length).toBeGreaterThanOrEqual(1001), { timeout: scaled(60_000), interval: 200 });
      // Each event once, none twice, in the hotel's order.
      expect(r.accepted().map((x) => x.id)).toEqual(events.map((e) => e.id));
      expect(r.received).toHaveLength(1001);
      expect(r.unverified).toHaveLength(0);
    }
    const left = await db.selectFrom('webhook_deliveries').select('status').where('status', '<>', 'succeeded').execute();
    expect(left).toEqual([]);
  }, 120_000);

  it("a stalled instance's claim is taken over when its lease lapses", async () => {
    const [a] = servers;
    if (!a) throw new Error('a server expected');
    const db = a.database.db;
    const hotel = await createHotel(db, 'stalled-claim', 'Stalled Claim Hotel');
    const r = new WebhookReceiver();
    receivers.push(r);
    const e = await addEndpoint(db, hotel.id, { url: await r.listen() }, { allowPrivateNetworks: true, maxEndpointsPerHotel: 10 });
    r.trust(e.secret);
    // A delivery another instance claimed and then stalled on: its lease ran out a moment ago.
    await db.transaction().execute(async (trx) => {
      await recordEvents(trx, hotel.id, () => [{ type: 'webhook.test', data: { message: 'stalled' } }], new Date().toISOString());
      await trx
        .updateTable('webhook_deliveries')
        .set({ claimed_by: 'sender_stalled', claimed_until: new Date(Date.now() + 1_500).toISOString() })
        .where('endpoint_id', '=', e.endpointId)
        .execute();
    });
    await vi.waitFor(() => expect(r.accepted()).toHaveLength(1), { timeout: scaled(10_000) });
    // The sender records the outcome after the receiver's answer has reached it: wait for it.
    await vi.waitFor(
      async () => {
        const d = await db
          .selectFrom('webhook_deliveries')
          .select(['status', 'claimed_by', 'attempts'])
          .where('endpoint_id', '=', e.endpointId)
          .executeTakeFirstOrThrow();
        expect(d).toMatchObject({ status: 'succeeded', claimed_by: null });
      },
      { timeout: scaled(10_000) },
    );
  });
});
