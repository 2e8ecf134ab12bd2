import { createHash } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { createHotel, resetKeyLimits } from '../../src/operations.js';
import { runRetention } from '../../src/jobs/retention.js';
import { insertLoggedRequests, type LoggedRequest } from '../../src/db/repositories/request-log.repository.js';
import { bodiesByKeysQuery, requestLogNamingQuery } from '../../src/db/repositories/privacy.repository.js';
import { capBody, packBody } from '../../src/pms/request-log-body.js';
import { guestKey } from '../../src/pms/request-log-guests.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';
import { loggedRows } from '../support/request-log.js';

// The request log keeps each body once per hotel (request_log_bodies, brotli, addressed by
// the SHA-256 of its text) and the keys of the guests each body names (PostgreSQL: the
// body's guest_keys; SQLite: request_log_guest_keys): a PMS that sends the same roster
// every 5 minutes costs a row of metadata per sync; erasure and export read only the rows
// that name the guest; erasing one guest of a shared roster body leaves the other guests
// in it; a body found by a key another guest shares is never taken for the guest's.

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** A guest with personal values unique to this run, so a search finds only it. */
function person(tag: string, room: string) {
  const id = randomId(10);
  return guest({
    pmsGuestId: `PMS-${tag}-${id}`,
    firstName: `Fn${tag}${id}`,
    lastName: `Ln${tag}${id}`,
    phone: `+4930${Math.floor(Math.random() * 9e8 + 1e8)}`,
    email: `m.${tag}.${id.toLowerCase()}@example.org`,
    roomNumber: room,
  }) as { pmsGuestId: string; firstName: string; lastName: string; phone: string; email: string; roomNumber: string };
}

/** A live check-in's request-log row as the writer gets it: the request body only, sizes and no cut fields. */
function checkinRow(
  id: string,
  at: string,
  hotelId: string,
  requestBody: string,
  sender: { slug: string | null; keyId: string | null; path: string },
): LoggedRequest {
  return {
    id,
    at,
    hotelId,
    ...sender,
    mode: 'live',
    method: 'POST',
    statusCode: 200,
    requestBody,
    responseBody: null,
    requestBytes: Buffer.byteLength(requestBody),
    responseBytes: null,
    clientIp: '127.0.0.1',
    userAgent: null,
    durationMs: 1,
    idempotencyKey: null,
    pathBytes: null,
    userAgentBytes: null,
    idempotencyKeyBytes: null,
  };
}

const personal = (p: ReturnType<typeof person>): string[] => [p.firstName, p.lastName, p.phone, p.email];

describe.each(testEngines())('request-log bodies stored once, guests indexed (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let hotelId: string;
  let admin: DashboardClient;
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    hotelId = (await db().selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;
    const user = await addStaffUser(db(), t.slug, `bodies-admin-${engine}@api.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, user.email);
  }, 60_000);
  afterAll(() => t.close());

  /** Every stored body of the hotel, decompressed (the bodies table read directly). */
  async function storedBodies(): Promise<Array<{ sha256: string; text: string }>> {
    const { rows } = await sql<{ sha256: string; body: Uint8Array }>`select sha256, body from request_log_bodies where hotel_id = ${hotelId}`.execute(db());
    return rows.map((r) => ({ sha256: r.sha256, text: brotliDecompressSync(r.body).toString('utf8') }));
  }

  /** How many guest keys the index holds for the hotel's body of this text (0: none, or no such body). */
  async function indexedKeys(text: string, hotel = hotelId): Promise<number> {
    const { rows } =
      engine === 'postgres'
        ? await sql<{ n: number | string }>`select coalesce(sum(cardinality(guest_keys)), 0) as n from request_log_bodies
            where hotel_id = ${hotel} and sha256 = ${sha256(text)}`.execute(db())
        : await sql<{ n: number | string }>`select count(*) as n from request_log_guest_keys where hotel_id = ${hotel} and sha256 = ${sha256(text)}`.execute(
            db(),
          );
    return Number(rows[0]?.n);
  }

  /** The hotels whose index holds this key (PostgreSQL: a body's guest_keys; SQLite: an entry). */
  async function hotelsIndexing(key: bigint): Promise<string[]> {
    const { rows } =
      engine === 'postgres'
        ? await sql<{ hotel_id: string }>`select distinct hotel_id from request_log_bodies
            where guest_keys && cast(${[String(key)]} as bigint[]) order by hotel_id`.execute(db())
        : await sql<{ hotel_id: string }>`select distinct hotel_id from request_log_guest_keys where key = ${key} order by hotel_id`.execute(db());
    return rows.map((r) => r.hotel_id);
  }

  it('100 identical full syncs of a 120-guest roster store its body once; the explorer shows it exactly as sent for each of them', async () => {
    const roster = { syncMode: 'full', guests: Array.from({ length: 120 }, (_, i) => person('sync', `S${i}-${randomId(4)}`)) };
    const sent = JSON.stringify(roster);
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) {
      // The sync limit is 10 an hour per key: reset between rounds, as `innsync key reset-limits` does.
      if (i % 10 === 0) await resetKeyLimits(db(), t.keys.keyId);
      const res = await t.api('POST', `${base}/guests/sync`, {
        rawBody: sent,
        headers: { 'content-type': 'application/json' },
        idempotencyKey: uniqueKey('sync'),
      });
      expect(res.status).toBe(200);
      ids.push(res.body.requestId as string);
    }
    const rows = await loggedRows(db(), ids);
    expect(rows.size).toBe(100);
    for (const r of rows.values()) expect(r.request_body).toBe(sent);
    // One row of the bodies table holds the roster, named by all 100 rows.
    const { rows: counted } = await sql<{
      n: number | string;
    }>`select count(*) as n from request_log_bodies where hotel_id = ${hotelId} and sha256 = ${sha256(sent)}`.execute(db());
    expect(Number(counted[0]?.n)).toBe(1);
    const { rows: big } = await sql<{ n: number | string }>`select count(*) as n from request_log_bodies where bytes >= ${Buffer.byteLength(sent)}`.execute(
      db(),
    );
    expect(Number(big[0]?.n)).toBe(1);
    const { rows: named } = await sql<{
      n: number | string;
    }>`select count(distinct request_sha256) as n from request_log where id in (${sql.join(ids)})`.execute(db());
    expect(Number(named[0]?.n)).toBe(1);
    // The explorer shows every one of them byte for byte, with its own answer.
    for (const id of [ids[0], ids[37], ids[99]] as string[]) {
      const res = await admin.get(`/requests/${id}`);
      expect(res.status).toBe(200);
      expect(res.body.request.requestBody).toBe(sent);
      expect(res.body.request.responseBody).toBe(rows.get(id)?.response_body);
      expect(JSON.parse(res.body.request.responseBody as string)).toMatchObject({ requestId: id });
    }
  }, 300_000);

  it("erasing a guest of a roster body shared by several rows removes that guest's data from every row and stored body, and keeps the other guests'", async () => {
    const gone = person('era', `E-${randomId(5)}`);
    const kept = [person('keepa', `K-${randomId(5)}`), person('keepb', `L-${randomId(5)}`)];
    const roster = { syncMode: 'full', guests: [kept[0], gone, kept[1]] };
    const sent = JSON.stringify(roster);
    await resetKeyLimits(db(), t.keys.keyId);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.api('POST', `${base}/guests/sync`, {
        rawBody: sent,
        headers: { 'content-type': 'application/json' },
        idempotencyKey: uniqueKey('share'),
      });
      expect(res.status).toBe(200);
      ids.push(res.body.requestId as string);
    }
    const out = await t.post(`${base}/guests/checkout`, { pmsGuestId: gone.pmsGuestId });
    expect(out.status).toBe(200);
    ids.push(out.body.requestId as string);
    await loggedRows(db(), ids);
    expect((await storedBodies()).filter((b) => b.text.includes(gone.email))).toHaveLength(1);

    const stay = await db().selectFrom('guests').select('id').where('pms_guest_id', '=', gone.pmsGuestId).executeTakeFirstOrThrow();
    const erased = await admin.post(`/guests/${stay.id}/erase`, {});
    expect(erased.status).toBe(200);

    // Every sync row still reads one (the same) body: the guest's values gone, its id and the others' data as sent.
    for (const id of ids.slice(0, 3)) {
      const res = await admin.get(`/requests/${id}`);
      expect(res.status).toBe(200);
      const body = res.body.request.requestBody as string;
      for (const v of personal(gone)) expect(body).not.toContain(v);
      const guests = (JSON.parse(body) as { guests: Array<Record<string, unknown>> }).guests;
      expect(guests.map((g) => g.pmsGuestId)).toEqual([kept[0]?.pmsGuestId, gone.pmsGuestId, kept[1]?.pmsGuestId]);
      expect(guests[0]).toEqual(kept[0]);
      expect(guests[2]).toEqual(kept[1]);
      expect(guests[1]).toMatchObject({ firstName: null, lastName: null, phone: null, email: null, roomNumber: gone.roomNumber });
    }
    const { rows: shas } = await sql<{
      n: number | string;
    }>`select count(distinct request_sha256) as n from request_log where id in (${sql.join(ids.slice(0, 3))})`.execute(db());
    expect(Number(shas[0]?.n)).toBe(1);
    // No stored body of the hotel holds anything of the erased guest any more; the others' values are still there.
    const bodies = await storedBodies();
    for (const b of bodies) for (const v of personal(gone)) expect(b.text).not.toContain(v);
    expect(bodies.some((b) => b.sha256 === sha256(sent))).toBe(false);
    for (const p of kept) for (const v of personal(p)) expect(bodies.some((b) => b.text.includes(v))).toBe(true);

    // The export of a kept guest still finds its sync rows (through the guest index).
    const keptStay = await db()
      .selectFrom('guests')
      .select('id')
      .where('pms_guest_id', '=', kept[0]?.pmsGuestId ?? '')
      .executeTakeFirstOrThrow();
    const exported = await admin.get(`/guests/${keptStay.id}/export`);
    expect(exported.status).toBe(200);
    const syncs = (exported.body.requestLog as Array<{ id: string; requestBody: { guests: unknown[] } }>).filter((r) => ids.includes(r.id));
    expect(syncs).toHaveLength(3);
    for (const s of syncs) expect(s.requestBody.guests).toEqual([kept[0]]);
  }, 120_000);

  it('the retention run deletes the bodies (and their guest-index entries) that only rows past 90 days named, and keeps a body a younger row still names', async () => {
    const day = 24 * 60 * 60 * 1000;
    const row = (id: string, ageMs: number, requestBody: string) =>
      checkinRow(id, new Date(Date.now() - ageMs).toISOString(), hotelId, requestBody, { slug: t.slug, keyId: t.keys.keyId, path: `${base}/guests/checkin` });
    const onlyOld = JSON.stringify(person('purged', 'P1'));
    const shared = JSON.stringify(person('shared', 'P2'));
    const tag = randomId(6);
    await insertLoggedRequests(db(), [row(`req_p1_${tag}`, 91 * day, onlyOld), row(`req_p2_${tag}`, 92 * day, shared)]);
    await insertLoggedRequests(db(), [row(`req_p3_${tag}`, 10 * day, shared)]);
    const has = async (text: string) => (await storedBodies()).some((b) => b.sha256 === sha256(text));
    const entries = (text: string) => indexedKeys(text);
    expect([await has(onlyOld), await has(shared), await entries(onlyOld)]).toEqual([true, true, 1]);

    await runRetention(db(), null);
    expect([await has(onlyOld), await entries(onlyOld)]).toEqual([false, 0]);
    expect([await has(shared), await entries(shared)]).toEqual([true, 1]);
    const left = await loggedRows(db(), [`req_p3_${tag}`]);
    expect(left.get(`req_p3_${tag}`)?.request_body).toBe(shared);
  });

  it('one batch of rows from several hotels stores each hotel its own copy of a body, also when another hotel already has the same text', async () => {
    const tag = randomId(6).toLowerCase();
    const others = [await createHotel(db(), `batch-a-${tag}`, 'Batch A'), await createHotel(db(), `batch-b-${tag}`, 'Batch B')];
    const row = (id: string, hotel: string, requestBody: string) =>
      checkinRow(id, new Date().toISOString(), hotel, requestBody, { slug: null, keyId: null, path: '/api/pms/v1/x/guests/checkin' });
    const p = person('batch', 'B1');
    const sharedText = JSON.stringify(p);
    const ownText = JSON.stringify(person('own', 'B2'));
    // The text is stored for this hotel first; then one batch names it for all three hotels.
    await insertLoggedRequests(db(), [row(`req_b0_${tag}`, hotelId, sharedText)]);
    const ids = [`req_b1_${tag}`, `req_b2_${tag}`, `req_b3_${tag}`, `req_b4_${tag}`];
    await insertLoggedRequests(db(), [
      row(ids[0] as string, hotelId, sharedText),
      row(ids[1] as string, others[0]?.id as string, sharedText),
      row(ids[2] as string, others[1]?.id as string, sharedText),
      row(ids[3] as string, others[1]?.id as string, ownText),
    ]);
    const { rows: copies } = await sql<{
      hotel_id: string;
    }>`select hotel_id from request_log_bodies where sha256 = ${sha256(sharedText)} order by hotel_id`.execute(db());
    expect(copies.map((c) => c.hotel_id)).toEqual([hotelId, others[0]?.id, others[1]?.id].sort());
    // Each copy indexes the guest for its own hotel, by that hotel's key: the same PMS id is three keys.
    const hotels = [hotelId, others[0]?.id as string, others[1]?.id as string];
    const keys = hotels.map((h) => guestKey(h, { kind: 'pms', ref: p.pmsGuestId }));
    expect(new Set(keys).size).toBe(3);
    for (const [i, key] of keys.entries()) expect(await hotelsIndexing(key)).toEqual([hotels[i]]);
    for (const h of hotels) expect(await indexedKeys(sharedText, h)).toBe(1);
    const rows = await loggedRows(db(), ids);
    expect(ids.map((id) => rows.get(id)?.request_body)).toEqual([sharedText, sharedText, sharedText, ownText]);
  });

  it("a body found by a key another guest's reference shares (a forced 64-bit collision) is left alone: the export does not list it, the erasure does not change it", async () => {
    const target = person('coll', `C-${randomId(5)}`);
    const other = person('collother', `D-${randomId(5)}`);
    const own: string[] = [];
    for (const [path, body] of [
      ['checkin', target],
      ['checkout', { pmsGuestId: target.pmsGuestId }],
    ] as const) {
      const res = await t.post(`${base}/guests/${path}`, body);
      expect(res.status).toBe(200);
      own.push(res.body.requestId as string);
    }
    await loggedRows(db(), own);
    const stay = await db().selectFrom('guests').select('id').where('pms_guest_id', '=', target.pmsGuestId).executeTakeFirstOrThrow();
    // Bodies about other guests that the index holds under the target's keys, as a collision
    // would: a cut roster whose guests share the target's phone (the export would list such a
    // body as withheld; the erasure would remove the target's phone from a cut body wherever
    // it stands) and a check-in giving the target's phone as the other's.
    const cut = capBody(
      JSON.stringify({
        syncMode: 'full',
        guests: Array.from({ length: 400 }, (_, i) => ({ ...other, pmsGuestId: `${other.pmsGuestId}-${i}`, phone: target.phone })),
      }),
    );
    expect(cut.length).toBeLessThan(400 * JSON.stringify(other).length);
    const sharedPhone = JSON.stringify({ ...other, phone: target.phone });
    const keys = [guestKey(hotelId, { kind: 'pms', ref: target.pmsGuestId }), guestKey(hotelId, { kind: 'guest', ref: stay.id })];
    const tag = randomId(6);
    const now = new Date().toISOString();
    for (const [i, text] of [cut, sharedPhone].entries()) {
      const packed = packBody(text);
      if (engine === 'postgres') {
        await sql`insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at, guest_keys)
          values (${hotelId}, ${packed.sha256}, ${packed.bytes}, ${packed.data}, ${now}, cast(${keys.map(String)} as bigint[]))`.execute(db());
      } else {
        await sql`insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at) values (${hotelId}, ${packed.sha256}, ${packed.bytes}, ${packed.data}, ${now})`.execute(
          db(),
        );
        for (const key of keys)
          await sql`insert into request_log_guest_keys (key, hotel_id, sha256) values (${key}, ${hotelId}, ${packed.sha256})`.execute(db());
      }
      await sql`insert into request_log (id, created_at, hotel_id, slug, api_key_id, key_mode, method, path, status_code, client_ip, duration_ms, request_sha256, request_bytes)
        values (${`req_coll${i}_${tag}`}, ${now}, ${hotelId}, ${t.slug}, ${t.keys.keyId}, 'live', 'POST', ${`${base}/guests/sync`}, 200, '127.0.0.1', 1, ${packed.sha256}, ${packed.bytes})`.execute(
        db(),
      );
    }
    const collided = [`req_coll0_${tag}`, `req_coll1_${tag}`];

    const exported = await admin.get(`/guests/${stay.id}/export`);
    expect(exported.status).toBe(200);
    const listed = (exported.body.requestLog as Array<{ id: string }>).map((r) => r.id);
    for (const id of own) expect(listed).toContain(id);
    for (const id of collided) expect(listed).not.toContain(id);

    expect((await admin.post(`/guests/${stay.id}/erase`, {})).status).toBe(200);
    const bodies = await storedBodies();
    for (const text of [cut, sharedPhone]) expect(bodies.find((b) => b.sha256 === sha256(text))?.text).toBe(text);
    const rows = await loggedRows(db(), collided);
    expect(collided.map((id) => rows.get(id)?.request_body)).toEqual([cut, sharedPhone]);
    // The target's own bodies lost its values.
    for (const b of bodies) if (b.text.includes(target.pmsGuestId)) for (const v of personal(target)) expect(b.text).not.toContain(v);
  }, 120_000);

  it.runIf(engine === 'postgres')(
    'PostgreSQL: the erasure and export lookups read the bodies by the GIN index of their guest keys and the request log by its partial indexes, never a sequential scan of request_log',
    async () => {
      // A log of some size, so the planner weighs a scan against the indexes: 20,000 rows of
      // this hotel naming 2,000 bodies, each body a roster of 20 guests that changes by one
      // guest every 4 bodies (each guest named by up to 80 bodies); and 40,000 check-ins and updates
      // of a fleet, a tenth of them this hotel's, each naming guests no other body names
      // (keys the statistics cannot list, so the planner guesses many bodies per key).
      const now = new Date().toISOString();
      await sql`insert into request_log (id, created_at, hotel_id, slug, method, path, status_code, client_ip, duration_ms, request_sha256, response_sha256)
      select 'req_plan_' || i, ${now}, ${hotelId}, ${t.slug}, 'POST', '/api/pms/v1/x/guests/sync', 200, '127.0.0.1', 1, md5('b' || (i % 2000)), md5('r' || i)
      from generate_series(1, 20000) as i`.execute(db());
      const keys: string[] = [];
      const bodyOf: number[] = [];
      for (let b = 0; b < 2000; b++)
        for (let g = 0; g < 20; g++) {
          keys.push(String(guestKey(hotelId, { kind: 'pms', ref: `PLAN-${Math.floor(b / 4) + g}` })));
          bodyOf.push(b);
        }
      const body = packBody('{}');
      await sql`insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at, guest_keys)
      select ${hotelId}, md5('b' || b), ${body.bytes}, ${body.data}, ${now}, array_agg(k)
      from unnest(cast(${keys} as bigint[]), cast(${bodyOf} as integer[])) as t(k, b) group by b`.execute(db());
      await sql`insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at, guest_keys)
      select case when i % 10 = 0 then ${hotelId} else 'hotel_plan_' || (i % 90) end, md5('c' || i), ${body.bytes}, ${body.data}, ${now},
        array(select (hashtext('p' || i || '.' || j)::bigint << 32) + j from generate_series(1, 10) as j)
      from generate_series(1, 40000) as i`.execute(db());
      await sql`insert into request_log (id, created_at, hotel_id, slug, method, path, status_code, client_ip, duration_ms, request_sha256, response_sha256)
      select 'req_plan_c' || i, ${now}, ${hotelId}, ${t.slug}, 'POST', '/api/pms/v1/x/guests/checkin', 200, '127.0.0.1', 1, md5('c' || i), md5('rc' || i)
      from generate_series(10, 40000, 10) as i`.execute(db());
      await sql`analyze request_log`.execute(db());
      await sql`analyze request_log_bodies`.execute(db());
      // A guest is named by several kinds of reference (its pmsGuestId and guestId).
      const refs = [
        { kind: 'pms' as const, ref: 'PLAN-0' },
        { kind: 'guest' as const, ref: 'guest_plan_0' },
      ];
      // request_log is kept by the day (request_log_YYYYMMDD): the day holding the rows is
      // read by its indexes. The empty days ahead are scanned at no cost (nothing to read).
      const filled = `request_log_${now.slice(0, 10).replaceAll('-', '')}`;
      const filledScan = new RegExp(`Seq Scan on (request_log|${filled})\\b(?!_)`);
      for (const query of [requestLogNamingQuery(db(), hotelId, refs), bodiesByKeysQuery(db(), hotelId, refs)]) {
        const plan = (await query.explain()).map((r) => String(r['QUERY PLAN'])).join('\n');
        expect(plan).toMatch(/Bitmap Index Scan on request_log_bodies_guest_keys_idx/);
        expect(plan).not.toMatch(filledScan);
        expect(plan).not.toMatch(/Seq Scan on request_log_bodies\b/);
        // The bodies' primary key only by its whole key (hotel and address), never every body of the hotel.
        expect(plan).not.toMatch(/Bitmap Index Scan on request_log_bodies_pk/);
        expect(plan).not.toMatch(/BitmapAnd/);
      }
      const plan = (await requestLogNamingQuery(db(), hotelId, refs).explain()).map((r) => String(r['QUERY PLAN'])).join('\n');
      expect(plan).toMatch(new RegExp(`Index Scan using ${filled}_hotel_id_(request|response)_sha256_idx on ${filled}\\b`));
      expect(plan).not.toMatch(filledScan);
      // PLAN-0 is in the first 4 rosters, each sent by 10 rows.
      expect((await requestLogNamingQuery(db(), hotelId, refs).execute()).length).toBe(40);
    },
    120_000,
  );

  it.runIf(engine === 'sqlite')(
    "SQLite: the erasure and export lookups read the guest-key index by its whole key (key, hotel) for a guest named by several kinds of reference, not every entry of the hotel's log",
    async () => {
      const refs = [
        { kind: 'pms' as const, ref: 'PLAN-42' },
        { kind: 'guest' as const, ref: 'guest_plan_42' },
      ];
      for (const query of [requestLogNamingQuery(db(), hotelId, refs), bodiesByKeysQuery(db(), hotelId, refs)]) {
        const compiled = query.compile();
        const { rows } = await db().executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
        const reads = rows.map((r) => r.detail).filter((d) => / g USING /.test(d));
        expect(reads.length, rows.map((r) => r.detail).join('\n')).toBeGreaterThanOrEqual(1);
        for (const d of reads) expect(d).toMatch(/USING PRIMARY KEY \(key=\? AND hotel_id=\?\)/);
        expect(rows.map((r) => r.detail).join('\n')).not.toMatch(/SCAN (r|g)\b/);
      }
    },
  );
});
