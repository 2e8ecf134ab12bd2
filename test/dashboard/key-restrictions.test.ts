import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addStaffUser, DashboardClient, hotelIdOf } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Keys: what a pair may do": an admin issues a key pair with networks, a last day and
// read-only, changes them later (PATCH /keys/:keyId), and a receptionist can do neither.
// Wrong values are 422 field errors naming the fix; every issue, change and revocation
// writes a security entry with the admin and the client's address.

const FUTURE = '2099-06-30';

describe.each(testEngines())('Keys page API: a pair’s networks, last day and read-only (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  let adminId: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    const user = await addStaffUser(t.server.database.db, t.slug, `keys-${engine}@restrict.example`, 'admin');
    adminId = user.id;
    admin = await DashboardClient.loggedIn(t, user.email);
  });
  afterAll(() => t.close());

  const listed = async (keyId: string) => ((await admin.get('/keys')).body.keys as Array<{ keyId: string }>).find((k) => k.keyId === keyId);
  const entries = (pairId: string) =>
    t.server.database.db
      .selectFrom('security_events')
      .select(['kind', 'actor_type', 'actor_id', 'client_ip', 'hotel_id'])
      .where('subject_key_pair_id', '=', pairId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();

  it('POST /keys with restrictions issues a restricted pair; PATCH changes it; GET /keys shows both; each writes its entry', async () => {
    const issued = await admin.post('/keys', { networks: ['127.0.0.0/8', '2001:db8::1/32'], expiresOn: FUTURE, readOnly: true });
    expect(issued.status, issued.text).toBe(201);
    const keyId = issued.body.keyId as string;
    expect(await listed(keyId)).toMatchObject({ networks: ['127.0.0.0/8', '2001:db8::/32'], expiresOn: FUTURE, readOnly: true, revokedAt: null });
    expect((await t.post(`${t.pmsBase}/guests/checkin`, {}, { key: issued.body.live as string })).body.code).toBe('KEY_READ_ONLY');

    const changed = await admin.patch(`/keys/${keyId}`, { networks: [], readOnly: false });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toEqual({ keyId, networks: null, expiresOn: FUTURE, readOnly: false });
    expect(await listed(keyId)).toMatchObject({ networks: null, expiresOn: FUTURE, readOnly: false });
    expect((await admin.patch(`/keys/${keyId}`, { expiresOn: null })).body.expiresOn).toBeNull();
    // The values it has already: answered, and no entry.
    expect((await admin.patch(`/keys/${keyId}`, { readOnly: false, networks: null })).status).toBe(200);

    expect((await admin.post(`/keys/${keyId}/revoke`, undefined)).status).toBe(200);
    const hotelId = await hotelIdOf(t.server.database.db, t.slug);
    const staff = { actor_type: 'staff', actor_id: adminId, client_ip: '127.0.0.1', hotel_id: hotelId };
    expect(await entries(keyId)).toEqual([
      { kind: 'key.issued', ...staff },
      { kind: 'key.changed', ...staff },
      { kind: 'key.changed', ...staff },
      { kind: 'key.revoked', ...staff },
    ]);
    // A revoked pair is not changed.
    expect((await admin.patch(`/keys/${keyId}`, { readOnly: true })).body.code).toBe('RECORD_NOT_FOUND');
  });

  it('wrong networks and dates are 422 with a field error each, naming the fix; nothing is issued', async () => {
    const before = ((await admin.get('/keys')).body.keys as unknown[]).length;
    const refused = await admin.post('/keys', { networks: ['10.0.0.0/8', 'office wifi', '::1/129'], expiresOn: '2027-13-01' });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([
      {
        field: 'networks',
        code: 'INVALID_FORMAT',
        message: expect.stringMatching(/^"office wifi" is not a network: write an IPv4 or IPv6 network in CIDR notation/),
      },
      { field: 'networks', code: 'INVALID_FORMAT', message: expect.stringMatching(/^"::1\/129" is not a network/) },
      { field: 'expiresOn', code: 'INVALID_DATE_FORMAT', message: expect.stringMatching(/write the last day the keys work as YYYY-MM-DD/) },
    ]);
    const past = await admin.patch(`/keys/${t.keys.keyId}`, { expiresOn: '2020-01-01' });
    expect([past.status, past.body.errors]).toEqual([422, [{ field: 'expiresOn', code: 'OUT_OF_RANGE', message: expect.stringMatching(/has passed/) }]]);
    expect((await admin.post('/keys', { readOnly: 'yes' })).status).toBe(422);
    expect(((await admin.get('/keys')).body.keys as unknown[]).length).toBe(before);
  });

  it('a receptionist may not issue or change key pairs; another hotel’s pair is not found', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `desk-${engine}@restrict.example`, 'receptionist');
    const desk = await DashboardClient.loggedIn(t, user.email);
    expect((await desk.patch(`/keys/${t.keys.keyId}`, { readOnly: true })).body.code).toBe('FORBIDDEN');
    const other = await t.addHotel(`other-${engine}-restrict`);
    expect((await admin.patch(`/keys/${other.keyId}`, { readOnly: true })).body.code).toBe('RECORD_NOT_FOUND');
  });
});
