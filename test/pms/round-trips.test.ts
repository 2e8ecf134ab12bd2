import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLater, type DbOrTrx } from '../../src/db/database.js';
import { observeRoundTrips, postgresDialect, postgresPool, type RoundTrip } from '../../src/db/postgres-driver.js';
import type { Database } from '../../src/db/schema.js';
import { insertEndpoint } from '../../src/db/repositories/webhook.repository.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/architecture.md, "Round trips on PostgreSQL": a PMS check-in, update (a room move
// with other changes, the most statements an update makes) and check-out each take at most
// three round trips to the database in their transaction, webhook events included, and
// every statement of the change is still in it (the claim, the hotel's lock, the guest's
// rows, the activity entry, the outbox rows, the stored answer, the NOTIFY, the COMMIT).
// Counted by the driver (observeRoundTrips: one report per message the pool connection
// writes and waits for). This file reaches PostgreSQL through the run's PgBouncer in
// transaction mode (test/support/engines.ts).

const TARGET = 3;

/** The round trips of the one transaction that claimed an idempotency key: from its BEGIN to its COMMIT, on its connection. */
function claimingTransaction(trips: RoundTrip[]): RoundTrip[] {
  const claim = trips.findIndex((t) => t.statements.some((s) => s.includes('insert into "idempotency_records"')));
  expect(claim, 'a round trip with the claim').toBeGreaterThanOrEqual(0);
  const connection = trips[claim]?.connection;
  const mine = trips.filter((t) => t.connection === connection);
  const at = mine.indexOf(trips[claim] as RoundTrip);
  const begin = mine.slice(0, at + 1).findLastIndex((t) => /^begin\b/i.test(t.statements[0] ?? ''));
  const end = mine.slice(at).findIndex((t) => t.statements.some((s) => /^(commit|rollback)$/i.test(s)));
  expect(begin, 'a round trip with BEGIN').toBeGreaterThanOrEqual(0);
  expect(end, 'a round trip with COMMIT').toBeGreaterThanOrEqual(0);
  return mine.slice(begin, at + end + 1);
}

describe.runIf(testEngines().includes('postgres'))('round trips of a roster write (postgres)', () => {
  let t: TestServer;
  let trips: RoundTrip[] = [];
  let stop: () => void = () => undefined;

  beforeAll(async () => {
    t = await startTestServer('postgres');
    stop = observeRoundTrips((trip) => trips.push(trip));
  });
  afterAll(async () => {
    stop();
    await t?.close();
  });

  /** Sends a write and returns the statements of its transaction, one list per round trip. */
  async function roundTripsOf(path: string, body: Record<string, unknown>): Promise<string[][]> {
    trips = [];
    const res = await t.post(`${t.pmsBase}${path}`, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const rt = claimingTransaction(trips).map((trip) => trip.statements);
    console.log(
      path,
      JSON.stringify(
        rt.map((r) => r.map((s) => s.slice(0, 60))),
        null,
        1,
      ),
    );
    return rt;
  }

  function expectStatements(rt: string[][], patterns: RegExp[]): void {
    const all = rt.flat();
    for (const p of patterns)
      expect(
        all.some((s) => p.test(s)),
        `a statement matching ${String(p)} in ${JSON.stringify(rt, null, 1)}`,
      ).toBe(true);
  }

  for (const withEndpoint of [false, true]) {
    it(`check-in, update with a room move and check-out take at most ${TARGET} round trips each, every write included (${withEndpoint ? 'a hotel with a webhook endpoint' : 'no endpoint'})`, async () => {
      if (withEndpoint) {
        const hotel = await t.server.database.db.selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow();
        await insertEndpoint(t.server.database.db, {
          hotelId: hotel.id,
          url: 'https://hooks.example/innsync',
          eventTypes: null,
          secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
          now: new Date().toISOString(),
        });
      }
      const g = guest();
      const outbox = withEndpoint ? [/insert into "webhook_events"/, /insert into "webhook_deliveries"/, /update "hotels" set "event_seq"/] : [];
      const common = [
        /insert into "idempotency_records"/,
        /pg_advisory_xact_lock/,
        /insert into "activity_log"/,
        /update "idempotency_records"/,
        /pg_notify/,
        /^commit$/,
      ];

      const checkIn = await roundTripsOf('/guests/checkin', g);
      expectStatements(checkIn, [...common, ...outbox, /insert into "guests"/, /insert into "room_assignments"/]);
      expect(checkIn.length, JSON.stringify(checkIn, null, 1)).toBeLessThanOrEqual(TARGET);
      if (!withEndpoint) expect(checkIn.flat().some((s) => s.includes('webhook_events'))).toBe(false);

      const move = await roundTripsOf('/guests/update', { pmsGuestId: g.pmsGuestId, roomNumber: `${String(g.roomNumber)}-B`, lastName: 'Byron' });
      expectStatements(move, [...common, ...outbox, /for update/, /update "guests"/, /update "room_assignments"/, /insert into "room_assignments"/]);
      expect(move.length, JSON.stringify(move, null, 1)).toBeLessThanOrEqual(TARGET);

      const checkOut = await roundTripsOf('/guests/checkout', { pmsGuestId: g.pmsGuestId });
      expectStatements(checkOut, [...common, ...outbox, /for update/, /update "guests"/, /update "room_assignments"/]);
      expect(checkOut.length, JSON.stringify(checkOut, null, 1)).toBeLessThanOrEqual(TARGET);

      // The order the rules need: BEGIN and the claim first, the hotel's lock before the guest's rows, COMMIT last.
      for (const rt of [checkIn, move, checkOut]) {
        const all = rt.flat();
        expect(all[0]).toMatch(/^begin/);
        expect(all[1]).toMatch(/insert into "idempotency_records"/);
        const lock = all.findIndex((s) => s.includes('pg_advisory_xact_lock'));
        const firstGuest = all.findIndex((s) => /"guests"|"room_assignments"/.test(s));
        expect(lock).toBeGreaterThan(1);
        expect(lock).toBeLessThan(firstGuest);
        expect(all[all.length - 1]).toBe('commit');
      }
    });
  }

  it('a check-in whose insert breaks a unique index in a later round trip is still answered 409, and its key stays free', async () => {
    const g = guest();
    expect((await t.post(`${t.pmsBase}/guests/checkin`, g)).status).toBe(200);
    const key = `dup-${String(g.pmsGuestId)}`;
    const again = { ...g, roomNumber: `${String(g.roomNumber)}-2` };
    const refused = await t.post(`${t.pmsBase}/guests/checkin`, again, { idempotencyKey: key });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'GUEST_ALREADY_CHECKED_IN' });
    const occupied = await t.post(`${t.pmsBase}/guests/checkin`, { ...guest(), roomNumber: g.roomNumber });
    expect(occupied.status).toBe(409);
    expect(occupied.body).toMatchObject({ code: 'ROOM_OCCUPIED', currentGuest: { pmsGuestId: g.pmsGuestId } });
    // The refusal rolled its claim back: once the guest has left, the same key checks the guest in anew.
    expect((await t.post(`${t.pmsBase}/guests/checkout`, { pmsGuestId: g.pmsGuestId })).status).toBe(200);
    const later = await t.post(`${t.pmsBase}/guests/checkin`, again, { idempotencyKey: key });
    expect(later.status).toBe(200);
    expect(later.body).toMatchObject({ status: 'created' });
    expect(later.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a write sent later whose statement fails is thrown by the COMMIT, and nothing of its transaction stays; a transaction that ends before its first statement sends nothing', async () => {
    // A pool of one connection of this test's own, so that its round trips are told apart from the server's.
    const db = new Kysely<Database>({ dialect: postgresDialect(postgresPool(t.config.databaseUrl ?? '', 1, 5_000)) });
    try {
      await sql`select 'this test'`.execute(db);
      const connection = trips.findLast((trip) => trip.statements.includes("select 'this test'"))?.connection;
      const mine = () => trips.filter((trip) => trip.connection === connection).map((trip) => trip.statements);
      const hotel = await db.selectFrom('hotels').select(['id', 'event_seq']).where('slug', '=', t.slug).executeTakeFirstOrThrow();
      const bump = (trx: DbOrTrx) =>
        writeLater(
          trx,
          trx
            .updateTable('hotels')
            .set((eb) => ({ event_seq: eb('event_seq', '+', 1) }))
            .where('id', '=', hotel.id)
            .compile(),
        );
      trips = [];
      const failed = db.transaction().execute(async (trx) => {
        await bump(trx);
        await writeLater(trx, sql`select 1 / 0`.compile(trx));
        await bump(trx);
      });
      await expect(failed).rejects.toMatchObject({ code: '22012' });
      // One round trip: BEGIN, the three statements and the COMMIT, which rolled back; no ROLLBACK after it.
      expect(mine().map((statements) => statements.length)).toEqual([5]);
      expect(mine()[0]?.[4]).toBe('commit');
      const after = await db.selectFrom('hotels').select('event_seq').where('id', '=', hotel.id).executeTakeFirstOrThrow();
      expect(Number(after.event_seq)).toBe(Number(hotel.event_seq));

      trips = [];
      await db.transaction().execute(async () => undefined);
      await expect(db.transaction().execute(() => Promise.reject(new Error('refused before any statement')))).rejects.toThrow('refused');
      expect(mine()).toEqual([]);
    } finally {
      await db.destroy();
    }
  });
});
