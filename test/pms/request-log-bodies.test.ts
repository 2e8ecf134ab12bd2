import { createHash } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { createHotel, resetKeyLimits } from '../../src/operations.js';
import { runRetention } from '../../src/jobs/retention.js';
import { insertLoggedRequests } from '../../src/db/repositories/request-log.repository.js';
import { bodiesNamingQuery, requestLogNamingQuery } from '../../src/db/repositories/privacy.repository.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';
import { loggedRows } from '../support/request-log.js';

// The request log keeps each body once per hotel (request_log_bodies, brotli, addressed by
// the SHA-256 of its text) and the guests each body names (request_log_guests): a PMS that
// sends the same roster every 5 minutes costs a row of metadata per sync; erasure and
// export read only the rows that name the guest; erasing one guest of a shared roster
// body leaves the other guests in it.

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

const personal = (p: ReturnType<typeof person>): string[] => [p.firstName, p.lastName, p.phone, p.email];

describe.each(testEngines())('request-log bodies stored once, guests indexed (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let hotelId: string;
  let admin: DashboardClient;
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `/api/pms/v1/${t.slug}`;
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
    const row = (id: string, ageMs: number, requestBody: string) => ({
      id,
      at: new Date(Date.now() - ageMs).toISOString(),
      hotelId,
      slug: t.slug,
      keyId: t.keys.keyId,
      mode: 'live' as const,
      method: 'POST',
      path: `${base}/guests/checkin`,
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
    });
    const onlyOld = JSON.stringify(person('purged', 'P1'));
    const shared = JSON.stringify(person('shared', 'P2'));
    const tag = randomId(6);
    await insertLoggedRequests(db(), [row(`req_p1_${tag}`, 91 * day, onlyOld), row(`req_p2_${tag}`, 92 * day, shared)]);
    await insertLoggedRequests(db(), [row(`req_p3_${tag}`, 10 * day, shared)]);
    const has = async (text: string) => (await storedBodies()).some((b) => b.sha256 === sha256(text));
    const entries = async (text: string) =>
      Number((await sql<{ n: number | string }>`select count(*) as n from request_log_guests where sha256 = ${sha256(text)}`.execute(db())).rows[0]?.n);
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
    const row = (id: string, hotel: string, requestBody: string) => ({
      id,
      at: new Date().toISOString(),
      hotelId: hotel,
      slug: null,
      keyId: null,
      mode: 'live' as const,
      method: 'POST',
      path: `/api/pms/v1/x/guests/checkin`,
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
    });
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
    // Each copy indexes the guest for its own hotel.
    const { rows: indexed } = await sql<{ hotel_id: string }>`select hotel_id from request_log_guests
      where kind = 'pms' and ref = ${p.pmsGuestId} order by hotel_id`.execute(db());
    expect(indexed.map((c) => c.hotel_id)).toEqual([hotelId, others[0]?.id, others[1]?.id].sort());
    const rows = await loggedRows(db(), ids);
    expect(ids.map((id) => rows.get(id)?.request_body)).toEqual([sharedText, sharedText, sharedText, ownText]);
  });

  it.runIf(engine === 'postgres')(
    'PostgreSQL: the erasure and export lookups read the guest index and the request log by index, never a sequential scan of request_log',
    async () => {
      // A log of some size, so the planner weighs a scan against the indexes: 20,000 rows of
      // this hotel naming 2,000 bodies, each body naming 5 guests.
      const now = new Date().toISOString();
      await sql`insert into request_log (id, created_at, hotel_id, slug, method, path, status_code, client_ip, duration_ms, request_sha256, response_sha256)
      select 'req_plan_' || i, ${now}, ${hotelId}, ${t.slug}, 'POST', '/api/pms/v1/x/guests/sync', 200, '127.0.0.1', 1, md5('b' || (i % 2000)), md5('r' || i)
      from generate_series(1, 20000) as i`.execute(db());
      await sql`insert into request_log_guests (hotel_id, kind, ref, sha256)
      select ${hotelId}, 'pms', 'PLAN-' || (i % 10000), md5('b' || (i % 2000)) from generate_series(1, 10000) as i`.execute(db());
      await sql`analyze request_log`.execute(db());
      await sql`analyze request_log_guests`.execute(db());
      // A guest is named by several kinds of reference (its pmsGuestId and guestId).
      const refs = [
        { kind: 'pms' as const, ref: 'PLAN-42' },
        { kind: 'guest' as const, ref: 'guest_plan_42' },
      ];
      // request_log is kept by the day (request_log_YYYYMMDD): the day holding the rows is
      // read by its indexes. The empty days ahead are scanned at no cost (nothing to read).
      const filled = `request_log_${now.slice(0, 10).replaceAll('-', '')}`;
      const filledScan = new RegExp(`Seq Scan on (request_log|${filled})\\b(?!_)`);
      for (const query of [
        requestLogNamingQuery(db(), hotelId, refs),
        db()
          .selectFrom('request_log_bodies')
          .select('sha256')
          .where('sha256', 'in', bodiesNamingQuery(db(), hotelId, refs)),
      ]) {
        const plan = (await query.explain()).map((r) => String(r['QUERY PLAN'])).join('\n');
        expect(plan).toMatch(/Index (Only )?Scan using request_log_guests_pk on request_log_guests/);
        expect(plan).not.toMatch(filledScan);
        expect(plan).not.toMatch(/Seq Scan on request_log_guests/);
      }
      const plan = (await requestLogNamingQuery(db(), hotelId, refs).explain()).map((r) => String(r['QUERY PLAN'])).join('\n');
      expect(plan).toMatch(new RegExp(`Index Scan using ${filled}_hotel_id_(request|response)_sha256_idx on ${filled}\\b`));
      expect(plan).not.toMatch(filledScan);
      expect((await requestLogNamingQuery(db(), hotelId, refs).execute()).length).toBe(10);
    },
    120_000,
  );

  it.runIf(engine === 'sqlite')(
    "SQLite: the erasure and export lookups read the guest index by its whole key (hotel, kind, reference) for a guest named by several kinds of reference, not every entry of the hotel's log",
    async () => {
      const refs = [
        { kind: 'pms' as const, ref: 'PLAN-42' },
        { kind: 'guest' as const, ref: 'guest_plan_42' },
      ];
      for (const query of [
        requestLogNamingQuery(db(), hotelId, refs),
        db()
          .selectFrom('request_log_bodies')
          .select('sha256')
          .where('sha256', 'in', bodiesNamingQuery(db(), hotelId, refs)),
      ]) {
        const compiled = query.compile();
        const { rows } = await db().executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
        const reads = rows.map((r) => r.detail).filter((d) => / g USING /.test(d));
        expect(reads.length, rows.map((r) => r.detail).join('\n')).toBeGreaterThanOrEqual(2);
        for (const d of reads) expect(d).toMatch(/USING PRIMARY KEY \(hotel_id=\? AND kind=\? AND ref=\?\)/);
        expect(rows.map((r) => r.detail).join('\n')).not.toMatch(/SCAN r\b/);
      }
    },
  );
});
