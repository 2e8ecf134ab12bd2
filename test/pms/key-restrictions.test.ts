import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeyPair, revokeKeys } from '../../src/operations.js';
import { changePair } from '../../src/keys/key-pairs.js';
import { OPERATOR } from '../../src/db/repositories/security.repository.js';
import { targetFrom } from '../support/client-addresses.js';
import { send, withoutRequestId, type Target } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type TestServer } from '../support/harness.js';
import { loggedRows } from '../support/request-log.js';

// docs/pms-interface.md, "Keys and authentication": a key pair may be limited to networks
// (403 KEY_NETWORK_REFUSED from elsewhere, the client's address as TRUST_PROXY defines it),
// to a last day (then 401, as a revoked key) and to reading (403 KEY_READ_ONLY on writes).
// Linux routes all of 127.0.0.0/8 to lo, so clients at 127.0.0.1 and 127.0.0.2 differ.

describe.each(testEngines())('key pair restrictions (%s)', (engine) => {
  let t: TestServer;
  let fromTwo: Target & { close(): Promise<void> };
  beforeAll(async () => {
    t = await startTestServer(engine);
    fromTwo = targetFrom({ dataDir: t.config.dataDir, httpsPort: t.server.httpsPort }, '127.0.0.2');
  });
  afterAll(async () => {
    await fromTwo.close();
    await t.close();
  });

  const list = (target: Target, key: string): Promise<ApiResponse> =>
    send(target, 'GET', `${t.pmsBase}/guests`, { headers: { authorization: `Bearer ${key}` } });
  const checkIn = (target: Target, key: string): Promise<ApiResponse> =>
    send(target, 'POST', `${t.pmsBase}/guests/checkin`, { headers: { authorization: `Bearer ${key}`, 'idempotency-key': uniqueKey() }, body: guest() });

  it('networks: both keys of the pair answer from inside (127.0.0.2/32, ::1 listed too) and 403 KEY_NETWORK_REFUSED from 127.0.0.1, logged as the key’s request', async () => {
    const pair = await issueKeyPair(t.server.database.db, t.slug, { restrictions: { networks: ['127.0.0.2/32', '::1/128'] } });
    for (const key of [pair.live, pair.test]) {
      expect((await list(fromTwo, key)).status).toBe(200);
      expect((await checkIn(fromTwo, key)).status).toBe(200);
      const refused = await list(t, key);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ status: 'error', code: 'KEY_NETWORK_REFUSED', message: expect.stringMatching(/allowed networks/) });
      const write = await checkIn(t, key);
      expect([write.status, write.body.code]).toEqual([403, 'KEY_NETWORK_REFUSED']);
      // The request log keeps the refusal as this key's request, with the client's address.
      const row = (await loggedRows(t.server.database.db, [refused.body.requestId as string])).get(refused.body.requestId as string);
      expect(row).toMatchObject({ status_code: 403, api_key_id: pair.keyId, client_ip: '127.0.0.1' });
    }
    // The hotel's other pair, unrestricted, answers from anywhere.
    expect((await list(t, t.keys.live)).status).toBe(200);
  });

  it('networks of IPv6: a client at ::1 answers with ::1/128 listed and is refused by a pair of 2001:db8::/32 alone', async () => {
    const v6 = await startTestServer(engine, { HOST: '::1' });
    const client = targetFrom({ dataDir: v6.config.dataDir, httpsPort: v6.server.httpsPort }, '::1', '::1');
    try {
      const inside = await issueKeyPair(v6.server.database.db, v6.slug, { restrictions: { networks: ['::1/128'] } });
      const outside = await issueKeyPair(v6.server.database.db, v6.slug, { restrictions: { networks: ['2001:db8::/32', '127.0.0.0/8'] } });
      const get = (key: string) => send(client, 'GET', `${v6.pmsBase}/guests`, { headers: { authorization: `Bearer ${key}` } });
      expect((await get(inside.test)).status).toBe(200);
      expect((await get(outside.test)).body.code).toBe('KEY_NETWORK_REFUSED');
    } finally {
      await client.close();
      await v6.close();
    }
  });

  it('networks through TRUST_PROXY: the address X-Forwarded-For gives decides; without a trusted proxy the header is ignored', async () => {
    const proxied = await startTestServer(engine, { TRUST_PROXY: '127.0.0.1' });
    try {
      const pair = await issueKeyPair(proxied.server.database.db, proxied.slug, { restrictions: { networks: ['198.51.100.0/24', '2001:db8::/32'] } });
      const via = (forwarded: string | null): Promise<ApiResponse> =>
        proxied.api('GET', `${proxied.pmsBase}/guests`, { key: pair.live, headers: forwarded ? { 'x-forwarded-for': forwarded } : {} });
      expect((await via('198.51.100.7')).status).toBe(200);
      expect((await via('2001:db8:5::1')).status).toBe(200);
      expect((await via('203.0.113.9')).body.code).toBe('KEY_NETWORK_REFUSED');
      expect((await via(null)).body.code).toBe('KEY_NETWORK_REFUSED');
    } finally {
      await proxied.close();
    }
    // This server trusts no proxy: the header names no client.
    const pair = await issueKeyPair(t.server.database.db, t.slug, { restrictions: { networks: ['198.51.100.0/24'] } });
    const res = await t.api('GET', `${t.pmsBase}/guests`, { key: pair.live, headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect([res.status, res.body.code]).toEqual([403, 'KEY_NETWORK_REFUSED']);
  });

  it('expiry: a pair works through its last day; after it, 401 exactly as a revoked key', async () => {
    const db = t.server.database.db;
    const today = new Date().toISOString().slice(0, 10);
    const pair = await issueKeyPair(db, t.slug, { restrictions: { expiresOn: today } });
    expect((await t.api('GET', `${t.pmsBase}/guests`, { key: pair.live })).status).toBe(200);
    // The day passes: the row as it is once its last day is yesterday.
    await db.updateTable('api_keys').set({ expires_on: '2020-01-01' }).where('pair_id', '=', pair.keyId).execute();
    const revoked = await issueKeyPair(db, t.slug);
    await revokeKeys(db, revoked.keyId);
    const asRevoked = await t.api('GET', `${t.pmsBase}/guests`, { key: revoked.live });
    expect(asRevoked.status).toBe(401);
    for (const key of [pair.live, pair.test]) {
      for (const res of [await t.api('GET', `${t.pmsBase}/guests`, { key }), await t.post(`${t.pmsBase}/guests/checkin`, guest(), { key })]) {
        expect(res.status).toBe(401);
        expect(withoutRequestId(res.body)).toEqual(withoutRequestId(asRevoked.body));
      }
    }
  });

  it('read-only: GET /guests answers; every write is 403 KEY_READ_ONLY and changes nothing; made read-write, it writes', async () => {
    const db = t.server.database.db;
    const pair = await issueKeyPair(db, t.slug, { restrictions: { readOnly: true } });
    const before = (await t.api('GET', `${t.pmsBase}/guests`)).body.count as number;
    for (const key of [pair.live, pair.test]) {
      expect((await t.api('GET', `${t.pmsBase}/guests`, { key })).status).toBe(200);
      const writes = [
        await t.post(`${t.pmsBase}/guests/checkin`, guest(), { key }),
        await t.post(`${t.pmsBase}/guests/update`, { pmsGuestId: 'x', lastName: 'Y' }, { key }),
        await t.post(`${t.pmsBase}/guests/checkout`, { pmsGuestId: 'x' }, { key }),
        await t.post(`${t.pmsBase}/guests/sync`, { syncMode: 'full', guests: [] }, { key }),
      ];
      for (const res of writes) {
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: 'KEY_READ_ONLY', message: expect.stringMatching(/read-only/) });
      }
    }
    expect((await t.api('GET', `${t.pmsBase}/guests`)).body.count).toBe(before);
    await changePair(db, pair.keyId, { readOnly: false }, OPERATOR);
    expect((await t.post(`${t.pmsBase}/guests/checkin`, guest(), { key: pair.live })).status).toBe(200);
    expect((await t.api('GET', `${t.pmsBase}/guests`)).body.count).toBe(before + 1);
  });
});
