import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteFile } from '../../src/db/database.js';
import { REQUEST_LOG_RETENTION_MS, runRetention } from '../../src/jobs/retention.js';
import { createHotel } from '../../src/operations.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { testEngines } from '../support/engines.js';
import { startTestServer, uniqueKey, type TestServer } from '../support/harness.js';

// docs/architecture.md (SQLite: long work beside short requests): while one client's long
// work runs on SQLite (a 20,000-guest full sync, an erasure of megabytes of stored answers, the
// retention purge of 500,000 request-log rows), a health probe and another hotel's dashboard read are answered. The
// proof is structural: probes are sent and answered 200 *while* the long work is
// demonstrably in progress (the sync's write transaction is open: another connection
// cannot take SQLite's write lock; the purge has deleted some rows but not all), which
// cannot happen when the long work holds the event loop.

const SYNC_GUESTS = 20_000;
const PURGE_ROWS = 500_000;
const PROBE_EVERY_MS = 10;

const run = testEngines().includes('sqlite') ? describe : describe.skip;

interface Probes {
  /** Probes sent and answered 200 while `during()` held both before the request and after its answer. */
  during: { readyz: number; dashboard: number };
  /** Every answer's status. */
  statuses: number[];
}

/** Polls GET /readyz and the small hotel's GET /dashboard/api/guests every PROBE_EVERY_MS until stop(). */
function startProbes(t: TestServer, desk: DashboardClient, smallGuests: number, during: () => boolean): { stop: () => Promise<Probes> } {
  let done = false;
  const out: Probes = { during: { readyz: 0, dashboard: 0 }, statuses: [] };
  const loop = async (name: 'readyz' | 'dashboard'): Promise<void> => {
    while (!done) {
      const before = during();
      const res = name === 'readyz' ? await t.api('GET', '/readyz', { key: null }) : await desk.get('/guests');
      const after = during();
      out.statuses.push(res.status);
      if (name === 'dashboard' && res.status === 200) expect(res.body.guests).toHaveLength(smallGuests);
      if (res.status === 200 && before && after) out.during[name]++;
      await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
    }
  };
  const loops = Promise.all([loop('readyz'), loop('dashboard')]);
  return {
    stop: async () => {
      done = true;
      await loops;
      return out;
    },
  };
}

run('SQLite: long work beside short requests', () => {
  let t: TestServer;
  let desk: DashboardClient;
  let observer: SqliteDatabase.Database;

  beforeAll(async () => {
    t = await startTestServer('sqlite');
    // Another hotel, whose receptionist watches the dashboard.
    await createHotel(t.server.database.db, 'small-hotel', 'Small hotel');
    await addStaffUser(t.server.database.db, 'small-hotel', 'desk@example.com', 'receptionist');
    desk = await DashboardClient.loggedIn(t, 'desk@example.com');
    expect(
      (await desk.post('/guests', { firstName: 'Grace', lastName: 'Hopper', roomNumber: '7', checkInDate: '2026-11-23', checkOutDate: '2026-11-26' })).status,
    ).toBe(201);
    // A connection of the test's own on the database file, to see what the server is doing.
    observer = new SqliteDatabase(sqliteFile(t.config.dataDir));
    observer.pragma('busy_timeout = 0');
  });

  afterAll(async () => {
    observer?.close();
    await t?.close();
  });

  /** True while another connection holds SQLite's write lock (an open write transaction). */
  const writeLocked = (): boolean => {
    try {
      observer.exec('BEGIN IMMEDIATE');
      observer.exec('ROLLBACK');
      return false;
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
      throw err;
    }
  };

  it('probes and another hotel’s dashboard read are answered while a 20,000-guest full sync’s transaction is open; the sync checks everyone in', async () => {
    const guests = Array.from({ length: SYNC_GUESTS }, (_, i) => ({
      pmsGuestId: `G${i}`,
      roomNumber: `${1000 + i}`,
      firstName: 'Ada',
      lastName: 'Lovelace',
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-26',
    }));
    let syncing = false;
    const probes = startProbes(t, desk, 1, () => syncing && writeLocked());
    syncing = true;
    const res = await t.api('POST', `${t.pmsBase}/guests/sync`, { body: { syncMode: 'full', guests }, idempotencyKey: uniqueKey('sync') });
    syncing = false;
    const seen = await probes.stop();

    expect(res.status).toBe(200);
    expect(res.body.summary).toMatchObject({ received: SYNC_GUESTS, checkedIn: SYNC_GUESTS, updated: 0, checkedOut: 0 });
    const active = observer
      .prepare(
        `select count(*) as n from guests g join hotels h on h.id = g.hotel_id
         where h.slug = ? and g.checked_out_at is null`,
      )
      .get(t.slug) as { n: number };
    expect(active.n).toBe(SYNC_GUESTS);
    expect(seen.statuses.every((s) => s === 200)).toBe(true);
    // Answered while the sync's write transaction was open, before its answer.
    expect(seen.during.readyz).toBeGreaterThanOrEqual(3);
    expect(seen.during.dashboard).toBeGreaterThanOrEqual(3);
  }, 240_000);

  it('a second 20,000-guest sync, every guest updated against the full roster, runs in one transaction while probes are answered; its entries are written in it and a replay answers the same text', async () => {
    // After the first sync: the same 20,000 guests, each leaving a day later.
    const guests = Array.from({ length: SYNC_GUESTS }, (_, i) => ({
      pmsGuestId: `G${i}`,
      roomNumber: `${1000 + i}`,
      firstName: 'Ada',
      lastName: 'Lovelace',
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-27',
    }));
    const idempotencyKey = uniqueKey('sync-again');
    const entries = observer.prepare(
      `select count(*) as n from activity_log a join hotels h on h.id = a.hotel_id where h.slug = ? and a.action = 'guest.updated'`,
    );
    const updatedBefore = (entries.get(t.slug) as { n: number }).n;
    let syncing = false;
    const probes = startProbes(t, desk, 1, () => syncing && writeLocked());
    syncing = true;
    const res = await t.api('POST', `${t.pmsBase}/guests/sync`, { body: { syncMode: 'full', guests }, idempotencyKey });
    syncing = false;
    const seen = await probes.stop();

    expect(res.status).toBe(200);
    expect(res.body.summary).toMatchObject({ received: SYNC_GUESTS, checkedIn: 0, updated: SYNC_GUESTS, checkedOut: 0, unchanged: 0 });
    expect(res.body.details.updated).toHaveLength(SYNC_GUESTS);
    expect((entries.get(t.slug) as { n: number }).n - updatedBefore).toBe(SYNC_GUESTS);
    const departing = observer
      .prepare(
        `select count(*) as n from guests g join hotels h on h.id = g.hotel_id
         where h.slug = ? and g.checked_out_at is null and g.check_out_date = '2026-11-27'`,
      )
      .get(t.slug) as { n: number };
    expect(departing.n).toBe(SYNC_GUESTS);
    expect(seen.statuses.every((s) => s === 200)).toBe(true);
    expect(seen.during.readyz).toBeGreaterThanOrEqual(3);
    expect(seen.during.dashboard).toBeGreaterThanOrEqual(3);

    // The replay sends the stored answer: the first answer's text, marked as a replay.
    const replay = await t.api('POST', `${t.pmsBase}/guests/sync`, { body: { syncMode: 'full', guests }, idempotencyKey });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(`${res.text.slice(0, -1)},"_idempotent":true}`);
  }, 240_000);

  it('probes and another hotel’s dashboard read are answered while an erasure redacts the megabytes of stored sync answers that name the guest', async () => {
    // After the two syncs: the same list without G0, so G0 leaves. Three stored answers name
    // G0 now (checked in, updated, checked out), each with 20,000 guests or more beside it.
    const guests = Array.from({ length: SYNC_GUESTS - 1 }, (_, i) => ({
      pmsGuestId: `G${i + 1}`,
      roomNumber: `${1001 + i}`,
      firstName: 'Ada',
      lastName: 'Lovelace',
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-27',
    }));
    const left = await t.api('POST', `${t.pmsBase}/guests/sync`, { body: { syncMode: 'full', guests }, idempotencyKey: uniqueKey('sync-leave') });
    expect(left.status).toBe(200);
    expect(left.body.summary).toMatchObject({ checkedOut: 1, unchanged: SYNC_GUESTS - 1 });
    const g0 = observer
      .prepare(`select g.id from guests g join hotels h on h.id = g.hotel_id where h.slug = ? and g.pms_guest_id = 'G0'`)
      .pluck()
      .get(t.slug) as string;
    await addStaffUser(t.server.database.db, t.slug, 'admin-long-work@example.com', 'admin');
    const admin = await DashboardClient.loggedIn(t, 'admin-long-work@example.com');

    let erasing = false;
    const probes = startProbes(t, desk, 1, () => erasing && writeLocked());
    erasing = true;
    const res = await admin.post(`/guests/${g0}/erase`, {});
    erasing = false;
    const seen = await probes.stop();

    expect(res.status).toBe(200);
    expect(res.body.erased.idempotency).toBe(3);
    // Each stored answer lost G0's name and kept every other guest's.
    const answers = observer.prepare(`select response_body from idempotency_records where response_body like '%"pmsGuestId":"G0"%'`).pluck().all() as string[];
    expect(answers).toHaveLength(3);
    for (const text of answers) {
      const items = Object.values((JSON.parse(text) as { details: Record<string, Array<{ pmsGuestId: string; lastName: string | null }>> }).details).flat();
      expect(items.filter((g) => g.pmsGuestId === 'G0').map((g) => g.lastName)).toEqual([null]);
      expect(items.filter((g) => g.pmsGuestId === 'G1').map((g) => g.lastName)).toEqual(items.some((g) => g.pmsGuestId === 'G1') ? ['Lovelace'] : []);
    }
    expect(seen.statuses.every((s) => s === 200)).toBe(true);
    // Answered while the erasure's write transaction was open, before its answer.
    expect(seen.during.readyz).toBeGreaterThanOrEqual(3);
    expect(seen.during.dashboard).toBeGreaterThanOrEqual(3);
  }, 240_000);

  it('probes and another hotel’s dashboard read are answered while a long read (a search, an export) runs on a reader', async () => {
    // A read of the server's own that runs for seconds on a read connection (a plain read:
    // SQLite reports it read-only). Its statement is posted to a reader before the next turn
    // of the event loop; every probe is sent after that. Were there one reader, every probe's
    // read would queue behind it and be answered only after it.
    const ROWS = 20_000_000;
    let done = false;
    const long = sql<{ c: number }>`with recursive n(i) as (select 0 union all select i + 1 from n where i < ${ROWS - 1}) select count(*) as c from n`
      .execute(t.server.database.db)
      .finally(() => {
        done = true;
      });
    await new Promise((resolve) => setImmediate(resolve));
    const probes = startProbes(t, desk, 1, () => !done);
    const counted = await long;
    const seen = await probes.stop();

    expect(counted.rows[0]?.c).toBe(ROWS);
    expect(seen.statuses.every((s) => s === 200)).toBe(true);
    // Sent after the long read was posted and answered before it ended.
    expect(seen.during.readyz).toBeGreaterThanOrEqual(3);
    expect(seen.during.dashboard).toBeGreaterThanOrEqual(3);
  }, 240_000);

  it('probes and another hotel’s dashboard read are answered while the retention purge deletes 500,000 request-log rows; every old row goes', async () => {
    const cutoffMs = Date.now() - REQUEST_LOG_RETENTION_MS;
    // The old rows, written in one statement through the server's own writer (a connection
    // of the test's own would wait for the write lock beside the server's work).
    const oldest = cutoffMs - 24 * 60 * 60 * 1000;
    await sql`insert into request_log (id, created_at, hotel_id, slug, method, path, status_code, client_ip, duration_ms)
      with recursive n(i) as (select 0 union all select i + 1 from n where i < ${PURGE_ROWS - 1})
      select 'req_old_' || i, strftime('%Y-%m-%dT%H:%M:%fZ', (${oldest} + i) / 1000.0, 'unixepoch'), null, 'old', 'POST', '/guests/checkin', 200, '127.0.0.1', 1.5 from n`.execute(
      t.server.database.db,
    );
    observer.pragma('wal_checkpoint(TRUNCATE)');
    observer.pragma('busy_timeout = 0');
    const count = observer.prepare(`select count(*) as n from request_log where slug = 'old'`);
    const remaining = (): number => (count.get() as { n: number }).n;
    expect(remaining()).toBe(PURGE_ROWS);
    // The purge goes oldest first: the first row gone and the last still there is a purge half done.
    const present = observer.prepare('select 1 from request_log where id = ?').pluck();
    const halfDone = (): boolean => present.get('req_old_0') === undefined && present.get(`req_old_${PURGE_ROWS - 1}`) !== undefined;

    let purging = false;
    const probes = startProbes(t, desk, 1, () => purging && halfDone());
    purging = true;
    const result = await runRetention(t.server.database.db, null);
    purging = false;
    const seen = await probes.stop();

    // The service's own retention run (5 s after its start) may purge beside this one and
    // take a share of the rows: together they delete every old row.
    expect(result.requestLog).toBeGreaterThan(0);
    expect(result.requestLog).toBeLessThanOrEqual(PURGE_ROWS);
    expect(remaining()).toBe(0);
    expect(seen.statuses.every((s) => s === 200)).toBe(true);
    // Answered while part of the rows was deleted and part still there.
    expect(seen.during.readyz).toBeGreaterThanOrEqual(3);
    expect(seen.during.dashboard).toBeGreaterThanOrEqual(3);
  }, 240_000);
});
