import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHotel } from '../../src/operations.js';
import type { Db } from '../../src/db/database.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { startLoggedServer } from '../support/log-capture.js';
import { runCli, storageEnv } from '../cli/cli-helpers.js';

// Which addresses a webhook may reach without WEBHOOK_ALLOW_PRIVATE_NETWORKS (README,
// Webhooks): https:// on port 443 or 8443, to a public unicast address. One classification
// (ipaddr.js's ranges) when an endpoint is stored and when a delivery connects; what the
// hotel's admin reads of a refusal says only that the address is not allowed.

/** This host, its networks, or an IPv4 address of them embedded in IPv6, in the forms a URL can write them. */
const LOCAL_URLS = [
  'https://localhost./hooks', // the root's trailing dot
  'https://LocalHost../hooks',
  'https://app.localhost/hooks',
  'https://[::7f00:1]/hooks', // IPv4-compatible ::127.0.0.1
  'https://[::127.0.0.1]/hooks',
  'https://[::ffff:0:7f00:1]/hooks', // IPv4-translated (RFC 6145)
  'https://[::ffff:127.0.0.1]/hooks', // IPv4-mapped
  'https://[2002:7f00:1::]/hooks', // 6to4 of 127.0.0.1
  'https://[64:ff9b::a00:1]/hooks', // NAT64 of 10.0.0.1
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hooks', // Teredo
  'https://2130706433/hooks', // 127.0.0.1 as one decimal number
  'https://0177.0.0.1/hooks', // octal
  'https://127.1/hooks',
  'https://10.1.2.3/hooks',
  'https://169.254.169.254/hooks',
  'https://[fd00::1]/hooks',
  'https://[::1]/hooks',
  'https://[::]/hooks',
];

/** The four the first review found accepted. */
const REPORTED = ['https://localhost./', 'https://[::7f00:1]/', 'https://[::ffff:0:7f00:1]/', 'https://[2002:7f00:1::]/'];

async function endpointCount(db: Db, slug: string): Promise<number> {
  const rows = await db.selectFrom('webhook_endpoints as e').innerJoin('hotels as h', 'h.id', 'e.hotel_id').select('e.id').where('h.slug', '=', slug).execute();
  return rows.length;
}

describe.each(testEngines())('webhook addresses without WEBHOOK_ALLOW_PRIVATE_NETWORKS (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  const db = () => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine, {});
    await addStaffUser(db(), t.slug, `admin-${engine}@addresses.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, `admin-${engine}@addresses.example`);
  });
  afterAll(async () => {
    await t.close();
  });

  it('the dashboard refuses every local or embedded-local address (422 at the url, naming WEBHOOK_ALLOW_PRIVATE_NETWORKS); none is stored', async () => {
    for (const url of LOCAL_URLS) {
      const refused = await admin.post('/webhooks', { url });
      expect(refused.status, url).toBe(422);
      // The field is named once: "url: The URL …", never "url: url: The URL …".
      expect(refused.body.message, url).toBe(
        'url: The URL points into a private or local network; use a public address (or set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).',
      );
      expect(refused.body.errors[0], url).toMatchObject({
        field: 'url',
        message: 'The URL points into a private or local network; use a public address (or set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).',
      });
    }
    expect(await endpointCount(db(), t.slug)).toBe(0);
  });

  it('ports: 443 and 8443 are accepted, any other is refused naming the fix; plain http:// is refused', async () => {
    for (const url of ['https://hooks.example.com:8080/in', 'https://hooks.example.com:80/in', 'https://203.0.114.7:22/in']) {
      const refused = await admin.post('/webhooks', { url });
      expect(refused.status, url).toBe(422);
      expect(refused.body.errors[0].message, url).toBe(
        'The URL must use port 443 or 8443 (leave the port out for 443); other ports need WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.',
      );
    }
    expect((await admin.post('/webhooks', { url: 'http://hooks.example.com/in' })).body.errors[0].message).toContain('https://');
    const accepted = [];
    for (const url of ['https://hooks.example.com/in', 'https://hooks.example.com:8443/in', 'https://[2606:4700:4700::1111]/in', 'https://203.0.114.7/in']) {
      const added = await admin.post('/webhooks', { url });
      expect(added.status, url).toBe(201);
      accepted.push(added.body.endpoint.endpointId as string);
    }
    for (const id of accepted) expect((await admin.post(`/webhooks/${id}/remove`)).status).toBe(200);
  });

  it('innsync webhook add refuses the reported addresses (exit 1, the fix named); none is stored', async () => {
    const env = storageEnv(t.config);
    for (const url of REPORTED) {
      const r = await runCli(['webhook', 'add', t.slug, url], { env: { ...env, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' } });
      expect(r.code, url).toBe(1);
      expect(r.stderr, url).toContain('The URL points into a private or local network; use a public address (or set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).');
    }
    expect(await endpointCount(db(), t.slug)).toBe(0);
  }, 60_000);
});

describe.each(testEngines())('webhook addresses when a delivery connects (%s)', (engine) => {
  it('an endpoint stored while private networks were allowed: its deliveries say only "the address is not allowed"; the operator\'s log says why', async () => {
    const s = await startLoggedServer(engine, {}, 'warn');
    try {
      const sdb = s.server.database.db;
      const slug = `connect-${engine}`;
      const hotel = await createHotel(sdb, slug, 'Connect Hotel');
      await addStaffUser(sdb, slug, `admin-${engine}@connect.example`, 'admin');
      const admin = await DashboardClient.loggedIn({ baseUrl: s.baseUrl, agent: s.agent }, `admin-${engine}@connect.example`);
      // Stored directly: as an endpoint added while the operator allowed private networks.
      const urls = {
        whe_name: 'https://localhost/hooks', // a name that resolves to loopback: refused by the resolver's check
        whe_literal: 'https://[::ffff:0:7f00:1]/hooks', // a literal: refused before any connection
        whe_port: 'https://hooks.example.com:8080/hooks',
      };
      for (const [id, url] of Object.entries(urls))
        await sdb
          .insertInto('webhook_endpoints')
          .values({
            id,
            hotel_id: hotel.id,
            url,
            event_types: null,
            secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
            previous_secret: null,
            previous_secret_until: null,
            created_at: new Date().toISOString(),
            disabled_at: null,
            disabled_reason: null,
          })
          .execute();
      for (const id of Object.keys(urls)) expect((await admin.post(`/webhooks/${id}/test`)).status).toBe(200);
      const expected = { whe_name: 'the address is not allowed', whe_literal: 'the address is not allowed', whe_port: 'the port must be 443 or 8443' };
      for (const [id, lastError] of Object.entries(expected))
        await vi.waitFor(
          async () => {
            const page = await admin.get(`/webhooks/${id}/deliveries`);
            const [d] = page.body.deliveries;
            expect(d).toMatchObject({ status: 'pending', lastStatus: null, lastError });
            expect(d.attempts).toBeGreaterThanOrEqual(1);
            // Nothing of how the name resolved reaches the hotel.
            expect(page.text).not.toMatch(/127\.0\.0\.1|::1|resolves/);
          },
          { timeout: 10_000 },
        );
      const refusals = s.lines.filter((l) => l.msg === 'webhook delivery refused: address not allowed');
      expect(refusals.find((l) => l.endpointId === 'whe_name')?.detail).toMatch(
        /^localhost resolves to (127\.0\.0\.1|::1), which is not on the public internet$/,
      );
      expect(refusals.find((l) => l.endpointId === 'whe_literal')).toMatchObject({ host: '[::ffff:0:7f00:1]', refused: 'address' });
    } finally {
      await s.close();
    }
  });
});
