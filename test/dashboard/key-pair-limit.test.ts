import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// README (configuration): a hotel holds at most MAX_KEY_PAIRS_PER_HOTEL active key pairs;
// the Keys page's "issue" is then 409 KEY_PAIR_LIMIT until an unused pair is revoked. The
// count is taken under the hotel's lock, so parallel issues cannot pass the limit.

describe.each(testEngines())('key pairs per hotel are capped (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  beforeAll(async () => {
    // The harness issued one pair already: 3 allowed leaves 2.
    t = await startTestServer(engine, { MAX_KEY_PAIRS_PER_HOTEL: '3' });
    const user = await addStaffUser(t.server.database.db, t.slug, `keys-${engine}@test.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, user.email);
  });
  afterAll(() => t.close());

  const active = async (): Promise<number> =>
    (await t.server.database.db.selectFrom('api_keys').select('id').where('mode', '=', 'live').where('revoked_at', 'is', null).execute()).length;

  it('POST /keys issues up to the limit, then 409 KEY_PAIR_LIMIT naming the fix; a revoke makes room again', async () => {
    const first = await admin.post('/keys', undefined);
    expect(first.status, first.text).toBe(201);
    const second = await admin.post('/keys', undefined);
    expect(second.status, second.text).toBe(201);
    const refused = await admin.post('/keys', undefined);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body).toMatchObject({ status: 'error', code: 'KEY_PAIR_LIMIT' });
    expect(refused.body.message).toBe('This hotel already has as many active key pairs as allowed. Revoke a key pair it no longer uses, then issue a new one.');
    expect(refused.body.limit).toBe(3);
    expect(refused.body).not.toHaveProperty('live');
    expect(await active()).toBe(3);

    const revoked = await admin.post(`/keys/${first.body.keyId as string}/revoke`, undefined);
    expect(revoked.status, revoked.text).toBeLessThan(300);
    const again = await admin.post('/keys', undefined);
    expect(again.status, again.text).toBe(201);
    expect(await active()).toBe(3);
  });

  it('ten issues at once with one place left: exactly one pair is issued', async () => {
    const list = await t.server.database.db.selectFrom('api_keys').select('pair_id').where('mode', '=', 'live').where('revoked_at', 'is', null).execute();
    const one = list[0]?.pair_id;
    expect(one).toBeDefined();
    expect((await admin.post(`/keys/${one as string}/revoke`, undefined)).status).toBeLessThan(300);
    const answers = await Promise.all(Array.from({ length: 10 }, () => admin.post('/keys', undefined)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.code === 'KEY_PAIR_LIMIT')).toBe(true);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(9);
    expect(await active()).toBe(3);
  });
});
