import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { issueKeyPair, revokeKeys } from '../../src/operations.js';
import { guest, startTestServer, testEngines, type ApiResponse, type TestServer } from '../support/harness.js';
import { awaitLoggedForPair } from '../support/request-log.js';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Every text value in every table of the database, as one list of strings. */
async function allStoredText(db: Db): Promise<string[]> {
  const tables = await db.introspection.getTables();
  const out: string[] = [];
  for (const table of tables) {
    // Table names come from the database's own catalogue.
    const rows = (await db
      .selectFrom(table.name as 'hotels')
      .selectAll()
      .execute()) as unknown as Array<Record<string, unknown>>;
    for (const row of rows) for (const v of Object.values(row)) if (v !== null && v !== undefined) out.push(String(v));
  }
  return out;
}

describe.each(testEngines())('PMS authentication (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
  });
  afterAll(() => t.close());

  /** The parts of a 401 that must be identical whatever the cause. */
  const shape = (res: ApiResponse) => {
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.requestId).toMatch(/^req_(?!test_)[a-z0-9]+$/);
    const { requestId: _requestId, ...rest } = res.body as Record<string, unknown>;
    return rest;
  };

  it('RFC 9110: the scheme name is case-insensitive (bearer, BEARER), the key is not', async () => {
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const res = await t.api('GET', `${base}/guests`, { key: null, headers: { authorization: `${scheme} ${t.keys.live}` } });
      expect(res.status, scheme).toBe(200);
    }
    const upper = await t.api('GET', `${base}/guests`, { key: null, headers: { authorization: `Bearer ${t.keys.live.toUpperCase()}` } });
    expect(upper.status).toBe(401);
  });

  it('errors: missing, malformed, unknown, revoked, other-hotel key and unknown slug all get one identical 401 UNAUTHORIZED', async () => {
    const revoked = await issueKeyPair(t.server.database.db, t.slug);
    // The revoked pair worked before revocation.
    expect((await t.api('GET', `${base}/guests`, { key: revoked.live })).status).toBe(200);
    await revokeKeys(t.server.database.db, revoked.keyId);
    const other = await t.addHotel(`other-${engine}-auth`);

    const wellFormedUnknown = `pms_live_${'A'.repeat(32)}`;
    const cases: Array<[string, () => Promise<ApiResponse>]> = [
      ['missing header', () => t.api('GET', `${base}/guests`, { key: null })],
      [
        'Basic scheme',
        () => t.api('GET', `${base}/guests`, { key: null, headers: { authorization: `Basic ${Buffer.from(`user:${t.keys.live}`).toString('base64')}` } }),
      ],
      ['Bearer alone', () => t.api('GET', `${base}/guests`, { key: null, headers: { authorization: 'Bearer' } })],
      ['Bearer and blank', () => t.api('GET', `${base}/guests`, { key: null, headers: { authorization: 'Bearer   ' } })],
      ['key without scheme', () => t.api('GET', `${base}/guests`, { key: null, headers: { authorization: t.keys.live } })],
      ['unknown well-formed key', () => t.api('GET', `${base}/guests`, { key: wellFormedUnknown })],
      ['unknown free-form key', () => t.api('GET', `${base}/guests`, { key: 'not-a-key' })],
      ['revoked live key', () => t.api('GET', `${base}/guests`, { key: revoked.live })],
      ['revoked test key', () => t.api('GET', `${base}/guests`, { key: revoked.test })],
      ['live key of another hotel', () => t.api('GET', `${base}/guests`, { key: other.live })],
      ['test key of another hotel', () => t.api('GET', `${base}/guests`, { key: other.test })],
      ['unknown slug, valid key', () => t.api('GET', `/api/pms/v1/no-such-hotel-${engine}/guests`, { key: t.keys.live })],
      ['unknown slug, no key', () => t.api('GET', `/api/pms/v1/no-such-hotel-${engine}/guests`, { key: null })],
      ['over-long unknown slug, valid key', () => t.api('GET', `/api/pms/v1/${'h'.repeat(300)}/guests`, { key: t.keys.live })],
      ["this hotel's key on another hotel's slug", () => t.api('GET', `/api/pms/v1/other-${engine}-auth/guests`, { key: t.keys.live })],
      // A POST is refused before its body is looked at (order of checks: authentication first).
      ['POST with unknown key and invalid body', () => t.post(`${base}/guests/checkin`, { roomNo: 1 }, { key: wellFormedUnknown })],
      ['POST without Idempotency-Key, key of another hotel', () => t.api('POST', `${base}/guests/checkout`, { key: other.live, body: { pmsGuestId: 'x' } })],
      ['POST with revoked key', () => t.post(`${base}/guests/checkin`, guest(), { key: revoked.live })],
    ];

    const reference = shape(await cases[0]![1]());
    expect(reference).toEqual({ status: 'error', code: 'UNAUTHORIZED', message: expect.any(String) });
    const ids = new Set<string>();
    for (const [name, send] of cases) {
      const res = await send();
      expect({ name, body: shape(res) }).toEqual({ name, body: reference });
      ids.add(res.body.requestId as string);
    }
    expect(ids.size).toBe(cases.length);
    // The hotel of the rejected requests is untouched.
    const list = await t.api('GET', `${base}/guests`);
    expect(list.body.count).toBe(0);
  });

  it('the live and the test key of the pair both authenticate; the test key marks its requestId req_test_', async () => {
    const live = await t.api('GET', `${base}/guests`, { key: t.keys.live });
    expect(live.status).toBe(200);
    expect(live.body.requestId).toMatch(/^req_(?!test_)/);
    const test = await t.api('GET', `${base}/guests`, { key: t.keys.test });
    expect(test.status).toBe(200);
    expect(test.body.requestId).toMatch(/^req_test_/);
  });

  it('key issue/revoke: a hotel holds several key pairs at once; revoking one leaves the other working', async () => {
    const db = t.server.database.db;
    const first = await issueKeyPair(db, t.slug);
    const second = await issueKeyPair(db, t.slug);
    expect(second.keyId).not.toBe(first.keyId);
    for (const key of [first.live, first.test, second.live, second.test, t.keys.live]) {
      expect((await t.api('GET', `${base}/guests`, { key })).status).toBe(200);
    }
    // Each pair writes: a check-in with either live key lands in the same roster.
    const a = guest();
    const b = guest();
    expect((await t.post(`${base}/guests/checkin`, a, { key: first.live })).status).toBe(200);
    expect((await t.post(`${base}/guests/checkin`, b, { key: second.live })).status).toBe(200);

    await revokeKeys(db, first.keyId);
    for (const key of [first.live, first.test]) {
      const res = await t.api('GET', `${base}/guests`, { key });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHORIZED');
    }
    for (const key of [second.live, second.test, t.keys.live]) {
      expect((await t.api('GET', `${base}/guests`, { key })).status).toBe(200);
    }
    // The revoked pair's guests stay; the remaining pair manages them.
    const out = await t.post(`${base}/guests/checkout`, { pmsGuestId: a.pmsGuestId }, { key: second.live });
    expect(out.status).toBe(200);
    expect((await t.post(`${base}/guests/checkin`, guest(), { key: first.live })).status).toBe(401);
  });

  it('keys are stored only as SHA-256 hex; no column of any table holds a plain key', async () => {
    const db = t.server.database.db;
    const pair = await issueKeyPair(db, t.slug);
    // Use both keys so that every log and record that could hold them has been written.
    await t.post(`${base}/guests/checkin`, guest(), { key: pair.live });
    await t.post(`${base}/guests/checkin`, guest(), { key: pair.test });
    await t.api('GET', `${base}/guests`, { key: pair.live });
    await t.api('GET', `${base}/guests`, { key: `${pair.live}x` });
    expect(pair.live).toMatch(/^pms_live_[0-9A-Za-z]{38}$/);
    expect(pair.test).toMatch(/^pms_test_[0-9A-Za-z]{38}$/);

    const rows = await db.selectFrom('api_keys').selectAll().where('pair_id', '=', pair.keyId).orderBy('mode').execute();
    expect(rows.map((r) => [r.mode, r.key_hash])).toEqual([
      ['live', sha256(pair.live)],
      ['test', sha256(pair.test)],
    ]);
    for (const r of rows) expect(r.key_hash).toMatch(/^[0-9a-f]{64}$/);

    // Wait for the batched request log, then search every stored value.
    await awaitLoggedForPair(db, pair.keyId, 3);
    const stored = await allStoredText(db);
    // The scan does see the stored hashes and the logged requests.
    expect(stored).toContain(sha256(pair.live));
    expect(stored).toContain(pair.keyId);
    for (const plain of [pair.live, pair.test, t.keys.live, t.keys.test]) {
      const body = plain.replace(/^pms_(live|test)_/, '');
      expect(stored.filter((v) => v.includes(body))).toEqual([]);
    }
  });
});
