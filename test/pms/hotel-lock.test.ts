import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOTEL_LOCK_SPACE } from '../../src/db/repositories/hotel.repository.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';

// A hotel's roster lock held by a transaction that does not end: a change of that hotel
// waits at most the lock timeout (5 s), then is answered 503 with Retry-After, and sent
// again once the lock is gone it is processed, once (docs/deployment.md, "Through
// PgBouncer": the limit travels with each BEGIN). This file reaches PostgreSQL through
// the run's PgBouncer in transaction mode (test/support/engines.ts), and so does the
// transaction that holds the lock.

describe.runIf(testEngines().includes('postgres'))('a hotel lock held elsewhere (postgres)', () => {
  let t: TestServer;
  let hotelId: string;
  beforeAll(async () => {
    t = await startTestServer('postgres');
    hotelId = (await t.server.database.db.selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a check-in behind a transaction holding the hotel lock is answered 503 with Retry-After after the lock timeout; sent again after the lock is released it is processed once', async () => {
    const holder = new pg.Client({ connectionString: t.config.databaseUrl ?? '' });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock($1, hashtext($2))', [HOTEL_LOCK_SPACE, hotelId]);
      const g = guest();
      const key = uniqueKey();
      let answered = false;
      const pending = t.post(`${t.pmsBase}/guests/checkin`, g, { idempotencyKey: key }).finally(() => (answered = true));
      // The check-in waits for the hotel's lock (PostgreSQL shows its wait) before it is answered.
      const waiting = async () =>
        Number(
          (await sql<{ n: string }>`select count(*) as n from pg_locks where locktype = 'advisory' and not granted`.execute(t.server.database.db)).rows[0]?.n,
        );
      await expect.poll(waiting).toBe(1);
      expect(answered).toBe(false);
      const blocked = await pending;
      expect(blocked.status).toBe(503);
      expect(blocked.body).toMatchObject({ status: 'error', code: 'SERVICE_UNAVAILABLE' });
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      expect(await waiting()).toBe(0);
      await holder.query('rollback');
      const again = await t.post(`${t.pmsBase}/guests/checkin`, g, { idempotencyKey: key });
      expect(again.status).toBe(200);
      expect(again.body.status).toBe('created');
      const list = await t.api('GET', `${t.pmsBase}/guests?pmsGuestId=${String(g.pmsGuestId)}`);
      expect(list.body.count).toBe(1);
    } finally {
      await holder.end();
    }
  });
});
