import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withBodies } from '../../src/db/repositories/request-log.repository.js';
import type { RosterChange } from '../../src/events/roster-events.js';
import { runRetention } from '../../src/jobs/retention.js';
import { ensureDaysOf } from '../../src/db/partitions.js';
import { issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';
import { awaitLoggedForPair, loggedRows } from '../support/request-log.js';

const DAY = 24 * 60 * 60 * 1000;

describe.each(testEngines())('request log, activity log and roster events (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let hotelId: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    hotelId = (await t.server.database.db.selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;
  });
  afterAll(() => t.close());

  const db = () => t.server.database.db;
  const freshPair = (): Promise<IssuedKeyPair> => issueKeyPair(db(), t.slug);

  const logRows = (ids: string[]) => loggedRows(db(), ids);

  const activityOf = (pmsGuestId: unknown) =>
    db().selectFrom('activity_log').selectAll().where('hotel_id', '=', hotelId).where('pms_guest_id', '=', String(pmsGuestId)).orderBy('created_at').execute();

  it('live, test, 422, 401 and 400 requests each get one request-log row with payload, response, client IP, User-Agent, duration, idempotency key, key id and mode', async () => {
    const pair = await freshPair();
    const ua = `innsync-log-test/${engine} (+https://pms.example)`;
    const headers = { 'user-agent': ua };

    const liveBody = guest();
    const liveKey = uniqueKey('live');
    const live = await t.api('POST', `${base}/guests/checkin`, { key: pair.live, body: liveBody, idempotencyKey: liveKey, headers });
    expect(live.status).toBe(200);

    const testBody = guest();
    const testKey = uniqueKey('test');
    const test = await t.api('POST', `${base}/guests/checkin`, { key: pair.test, body: testBody, idempotencyKey: testKey, headers });
    expect(test.status).toBe(200);
    expect(test.body.requestId).toMatch(/^req_test_/);

    const badBody = guest({ checkOutDate: 'soon' });
    const badKey = uniqueKey('bad');
    const bad = await t.api('POST', `${base}/guests/checkin`, { key: pair.live, body: badBody, idempotencyKey: badKey, headers });
    expect(bad.status).toBe(422);

    const deniedBody = guest();
    const deniedKey = uniqueKey('denied');
    const denied = await t.api('POST', `${base}/guests/checkin`, { key: `${pair.live}x`, body: deniedBody, idempotencyKey: deniedKey, headers });
    expect(denied.status).toBe(401);

    const overlong = 'k'.repeat(300);
    const refusedKey = await t.api('POST', `${base}/guests/checkin`, { key: pair.live, body: guest(), idempotencyKey: overlong, headers });
    expect(refusedKey.status).toBe(400);
    expect(refusedKey.body.code).toBe('IDEMPOTENCY_KEY_INVALID');

    const list = await t.api('GET', `${base}/guests?source=pms`, { key: pair.live, headers });
    expect(list.status).toBe(200);

    const all = [live, test, bad, denied, refusedKey, list];
    const rows = await logRows(all.map((r) => r.body.requestId as string));
    expect(rows.size).toBe(all.length);
    // One row per request, never two.
    for (const r of all) {
      const n = await db()
        .selectFrom('request_log')
        .select('id')
        .where('id', '=', r.body.requestId as string)
        .execute();
      expect(n).toHaveLength(1);
    }

    const common = { method: 'POST', path: `${base}/guests/checkin`, slug: t.slug, client_ip: '127.0.0.1', user_agent: ua };
    expect(rows.get(live.body.requestId)).toMatchObject({
      ...common,
      status_code: 200,
      request_body: JSON.stringify(liveBody),
      response_body: live.text,
      idempotency_key: liveKey,
      api_key_id: pair.keyId,
      key_mode: 'live',
      hotel_id: hotelId,
    });
    expect(rows.get(test.body.requestId)).toMatchObject({
      ...common,
      status_code: 200,
      request_body: JSON.stringify(testBody),
      response_body: test.text,
      idempotency_key: testKey,
      api_key_id: pair.keyId,
      key_mode: 'test',
      hotel_id: hotelId,
    });
    expect(rows.get(bad.body.requestId)).toMatchObject({
      ...common,
      status_code: 422,
      request_body: JSON.stringify(badBody),
      response_body: bad.text,
      idempotency_key: badKey,
      api_key_id: pair.keyId,
      key_mode: 'live',
      hotel_id: hotelId,
    });
    expect(JSON.parse(rows.get(bad.body.requestId)?.response_body ?? '{}')).toMatchObject({ code: 'INVALID_DATE_FORMAT' });
    // Refused before authentication: no key, no hotel, but the rest of the request, and the
    // sizes of its bodies without the bodies (a request not attributed to a hotel).
    expect(rows.get(denied.body.requestId)).toMatchObject({
      ...common,
      status_code: 401,
      request_body: null,
      request_bytes: Buffer.byteLength(JSON.stringify(deniedBody)),
      response_body: null,
      response_bytes: Buffer.byteLength(denied.text),
      idempotency_key: deniedKey,
      api_key_id: null,
      key_mode: null,
      hotel_id: null,
    });
    // The key is logged as given even when it was refused: its first 256 bytes, then `…`, and its full size.
    expect(rows.get(refusedKey.body.requestId)).toMatchObject({
      ...common,
      status_code: 400,
      idempotency_key: `${overlong.slice(0, 256)}…`,
      idempotency_key_bytes: 300,
      api_key_id: pair.keyId,
      key_mode: 'live',
    });
    expect(rows.get(list.body.requestId)).toMatchObject({
      method: 'GET',
      path: `${base}/guests?source=pms`,
      status_code: 200,
      request_body: null,
      // A GET /guests answer is logged as its count and guest ids, not the roster.
      response_body: JSON.stringify({ count: list.body.count, ids: list.body.guests.map((g: { guestId: string }) => g.guestId) }),
      response_bytes: Buffer.byteLength(list.text),
      idempotency_key: null,
      api_key_id: pair.keyId,
      key_mode: 'live',
      user_agent: ua,
    });
    for (const row of rows.values()) {
      expect(typeof row.duration_ms).toBe('number');
      expect(row.duration_ms).toBeGreaterThan(0);
      expect(Number.isNaN(Date.parse(row.created_at))).toBe(false);
    }
  });

  it('"every request is logged": a body with a raw NUL byte gets its row (the NUL written as \\u0000), and so do the requests written in the same batch', async () => {
    const pair = await freshPair();
    // A raw NUL inside a JSON string is not JSON (400); PostgreSQL text cannot hold it either.
    const nul = await t.api('POST', `${base}/guests/checkin`, {
      key: pair.live,
      rawBody: '{"pmsGuestId":"a\u0000b"}',
      headers: { 'content-type': 'application/json' },
      idempotencyKey: uniqueKey('nul'),
    });
    const ok = await t.api('POST', `${base}/guests/checkin`, { key: pair.live, body: guest(), idempotencyKey: uniqueKey('beside') });
    expect([nul.status, ok.status]).toEqual([400, 200]);
    const rows = await logRows([nul.body.requestId as string, ok.body.requestId as string]);
    expect(rows.size).toBe(2);
    expect(rows.get(nul.body.requestId as string)?.request_body).toBe('{"pmsGuestId":"a\\u0000b"}');
  });

  it('no request-log column ever holds a plain key or the Authorization header', async () => {
    const pair = await freshPair();
    await t.post(`${base}/guests/checkin`, guest(), { key: pair.live });
    await t.post(`${base}/guests/checkin`, guest(), { key: pair.test });
    await t.api('GET', `${base}/guests`, { key: pair.live });
    // The live key with its last character changed (to another one: a key ending in Z stays itself with Z).
    const wrong = `${pair.live.slice(0, -1)}${pair.live.endsWith('Z') ? 'Y' : 'Z'}`;
    const denied = await t.api('GET', `${base}/guests`, { key: wrong });
    expect(denied.status).toBe(401);
    await t.api('GET', `${base}/guests`, { key: null, headers: { authorization: `Basic ${pair.live}` } });
    await logRows([denied.body.requestId as string]);
    // Wait until every request above is logged: three with the pair's id.
    await awaitLoggedForPair(db(), pair.keyId, 3);

    const rows = await withBodies(db(), await db().selectFrom('request_log').selectAll().execute());
    expect(rows.length).toBeGreaterThanOrEqual(5);
    const secrets = [pair.live, pair.test, t.keys.live, t.keys.test].map((k) => k.replace(/^pms_(live|test)_/, ''));
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        if (value === null) continue;
        const text = String(value);
        expect({ column, bearer: /bearer/i.test(text) }).toEqual({ column, bearer: false });
        for (const s of secrets) expect({ column, leaks: text.includes(s.slice(0, 24)) }).toEqual({ column, leaks: false });
      }
    }
  });

  it('request-log rows older than 90 days are purged by the retention job; younger ones stay', async () => {
    const now = Date.now();
    const row = (id: string, ageMs: number) => ({
      id,
      created_at: new Date(now - ageMs).toISOString(),
      hotel_id: hotelId,
      slug: t.slug,
      api_key_id: t.keys.keyId,
      key_mode: 'live' as const,
      method: 'GET',
      path: `${base}/guests`,
      status_code: 200,
      client_ip: '127.0.0.1',
      user_agent: 'old',
      duration_ms: 1.5,
      idempotency_key: null,
    });
    const oldId = `req_old_${uniqueKey()}`;
    const keptId = `req_kept_${uniqueKey()}`;
    const rows = [row(oldId, 91 * DAY), row(keptId, 89 * DAY)];
    // PostgreSQL keeps the log by the day: the service creates only the days it writes.
    await ensureDaysOf(
      db(),
      'request_log',
      rows.map((r) => r.created_at),
    );
    await db().insertInto('request_log').values(rows).execute();
    const recent = await t.api('GET', `${base}/guests`);
    await logRows([recent.body.requestId as string]);

    const result = await runRetention(db(), null);
    expect(typeof result.requestLog).toBe('number');
    const left = await db()
      .selectFrom('request_log')
      .select('id')
      .where('id', 'in', [oldId, keptId, recent.body.requestId as string])
      .execute();
    expect(left.map((r) => r.id).sort()).toEqual([keptId, recent.body.requestId as string].sort());
    const older = await db()
      .selectFrom('request_log')
      .select('id')
      .where('created_at', '<', new Date(Date.now() - 90 * DAY).toISOString())
      .execute();
    expect(older).toEqual([]);
  });

  it('activity log: live check-in, update, room move and checkout each write a pms entry with the key pair id and {from, to} changes', async () => {
    const pair = await freshPair();
    const g = guest({ firstName: 'Ada', phone: '+4930123456' });
    expect((await t.post(`${base}/guests/checkin`, g, { key: pair.live })).status).toBe(200);
    let rows = await activityOf(g.pmsGuestId);
    expect(rows).toHaveLength(1);
    const actor = { hotel_id: hotelId, actor_type: 'pms', actor_id: pair.keyId, actor_mode: 'live' };
    const guestId = rows[0]?.guest_id;
    expect(guestId).toMatch(/^guest_/);
    expect(rows[0]).toMatchObject({ ...actor, action: 'guest.checked_in', pms_guest_id: g.pmsGuestId });
    expect(JSON.parse(rows[0]?.changes ?? 'null')).toMatchObject({
      lastName: { from: null, to: 'Lovelace' },
      firstName: { from: null, to: 'Ada' },
      roomNumber: { from: null, to: g.roomNumber },
      phone: { from: null, to: '+4930123456' },
    });

    expect((await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, firstName: 'Grace', phone: null }, { key: pair.live })).status).toBe(200);
    rows = await activityOf(g.pmsGuestId);
    expect(rows).toHaveLength(2);
    const updated = rows.find((r) => r.action === 'guest.updated');
    expect(updated).toMatchObject({ ...actor, guest_id: guestId });
    expect(JSON.parse(updated?.changes ?? 'null')).toEqual({ firstName: { from: 'Ada', to: 'Grace' }, phone: { from: '+4930123456', to: null } });

    // An update that changes nothing writes nothing.
    const same = await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, firstName: 'Grace', lastName: 'Lovelace' }, { key: pair.live });
    expect(same.status).toBe(200);
    expect(same.body.changes).toEqual({});
    expect(await activityOf(g.pmsGuestId)).toHaveLength(2);

    const newRoom = `${String(g.roomNumber)}-B`;
    expect((await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, roomNumber: newRoom }, { key: pair.live })).status).toBe(200);
    rows = await activityOf(g.pmsGuestId);
    expect(rows).toHaveLength(3);
    const moved = rows.find((r) => r.action === 'guest.room_moved');
    expect(moved).toMatchObject({ ...actor, guest_id: guestId });
    expect(JSON.parse(moved?.changes ?? 'null')).toEqual({ roomNumber: { from: g.roomNumber, to: newRoom } });

    expect((await t.post(`${base}/guests/checkout`, { pmsGuestId: g.pmsGuestId }, { key: pair.live })).status).toBe(200);
    rows = await activityOf(g.pmsGuestId);
    expect(rows).toHaveLength(4);
    const out = rows.find((r) => r.action === 'guest.checked_out');
    expect(out).toMatchObject({ ...actor, guest_id: guestId });
    expect(JSON.parse(out?.changes ?? 'null')).toEqual({ roomNumber: { from: newRoom, to: null } });
    expect(rows.map((r) => r.action).sort()).toEqual(['guest.checked_in', 'guest.checked_out', 'guest.room_moved', 'guest.updated']);
  });

  it('activity log: a failed live request (404, 409, 422) writes no entry', async () => {
    const pair = await freshPair();
    const holder = guest();
    await t.post(`${base}/guests/checkin`, holder, { key: pair.live });
    const g = guest();
    await t.post(`${base}/guests/checkin`, g, { key: pair.live });
    const before = await db().selectFrom('activity_log').select('id').where('actor_id', '=', pair.keyId).execute();
    expect(before).toHaveLength(2);
    expect(
      (await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, roomNumber: holder.roomNumber, firstName: 'X' }, { key: pair.live })).status,
    ).toBe(409);
    expect((await t.post(`${base}/guests/update`, { pmsGuestId: 'nobody-here', firstName: 'X' }, { key: pair.live })).status).toBe(404);
    expect((await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, adults: 200 }, { key: pair.live })).status).toBe(422);
    expect((await t.post(`${base}/guests/checkin`, { ...g, roomNumber: 'elsewhere' }, { key: pair.live })).status).toBe(409);
    expect(await db().selectFrom('activity_log').select('id').where('actor_id', '=', pair.keyId).execute()).toHaveLength(2);
  });

  it('test versus live: test-key check-in, update and checkout write no activity entry', async () => {
    const pair = await freshPair();
    const g = guest();
    expect((await t.post(`${base}/guests/checkin`, g, { key: pair.test })).status).toBe(200);
    expect((await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, firstName: 'Grace', roomNumber: 'T-2' }, { key: pair.test })).status).toBe(200);
    expect((await t.post(`${base}/guests/checkout`, { pmsGuestId: g.pmsGuestId }, { key: pair.test })).status).toBe(200);
    expect(await activityOf(g.pmsGuestId)).toEqual([]);
    expect(await db().selectFrom('activity_log').select('id').where('actor_id', '=', pair.keyId).execute()).toEqual([]);
    expect(await db().selectFrom('activity_log').select('id').where('actor_mode', '=', 'test').execute()).toEqual([]);
    // The test requests are in the request log, marked as test.
    await expect
      .poll(async () => (await db().selectFrom('request_log').select('key_mode').where('api_key_id', '=', pair.keyId).execute()).map((r) => r.key_mode))
      .toEqual(['test', 'test', 'test']);
  });

  it('live check-in, update, room move and checkout publish roster events; test-key requests publish none', async () => {
    const pair = await freshPair();
    const events: RosterChange[] = [];
    const unsubscribe = t.server.bus.subscribe(hotelId, (e) => events.push(e));
    try {
      const g = guest();
      const checkin = await t.post(`${base}/guests/checkin`, g, { key: pair.live });
      const update = await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, firstName: 'Grace' }, { key: pair.live });
      // No change, no event.
      await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, firstName: 'Grace' }, { key: pair.live });
      const newRoom = `${String(g.roomNumber)}-M`;
      await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, roomNumber: newRoom }, { key: pair.live });
      await t.post(`${base}/guests/checkout`, { pmsGuestId: g.pmsGuestId }, { key: pair.live });

      // Test-mode requests, then one live request as a barrier: events arrive in order.
      const tg = guest();
      await t.post(`${base}/guests/checkin`, tg, { key: pair.test });
      await t.post(`${base}/guests/update`, { pmsGuestId: tg.pmsGuestId, firstName: 'X' }, { key: pair.test });
      await t.post(`${base}/guests/checkout`, { pmsGuestId: tg.pmsGuestId }, { key: pair.test });
      const barrier = guest();
      await t.post(`${base}/guests/checkin`, barrier, { key: pair.live });
      await expect.poll(() => events.length).toBeGreaterThanOrEqual(5);

      const flat = events.flatMap((e) => {
        expect(e.hotelId).toBe(hotelId);
        expect(Number.isNaN(Date.parse(e.at))).toBe(false);
        return e.changes.map((c) => [c.action, c.pmsGuestId, c.roomNumber, c.guestId]);
      });
      expect(flat).toEqual([
        ['guest.checked_in', g.pmsGuestId, g.roomNumber, checkin.body.guestId],
        ['guest.updated', g.pmsGuestId, g.roomNumber, update.body.guestId],
        ['guest.room_moved', g.pmsGuestId, newRoom, checkin.body.guestId],
        ['guest.checked_out', g.pmsGuestId, newRoom, checkin.body.guestId],
        ['guest.checked_in', barrier.pmsGuestId, barrier.roomNumber, expect.stringMatching(/^guest_/)],
      ]);
    } finally {
      unsubscribe();
    }
  });
});
