import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpired } from '../../src/db/repositories/idempotency.repository.js';
import { purgeWebhookHistory } from '../../src/db/repositories/webhook.repository.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// The retention purges delete in bounded batches (docs/architecture.md, "SQLite: long work
// beside short requests"): each batch a statement (or a transaction) of its own, until a
// batch comes back short. Every old row goes, every newer row stays, whatever the batch
// size against the number of rows.

const DAY = 24 * 60 * 60 * 1000;
const iso = (ms: number) => new Date(ms).toISOString();

describe.each(testEngines())('retention purges in batches (%s)', (engine) => {
  let t: TestServer;
  let hotelId: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    hotelId = (await t.server.database.db.selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;
    await sql`insert into webhook_endpoints (id, hotel_id, url, secret, created_at, disabled_at, disabled_reason)
      values ('wh_batch', ${hotelId}, 'https://example.org/hook', 'whsec_x', ${iso(Date.now() - 40 * DAY)}, ${iso(Date.now())}, 'test')`.execute(
      t.server.database.db,
    );
  });
  afterAll(async () => t?.close());

  it.each([
    [1, 5],
    [2, 4],
    [2, 5],
    [10, 3],
  ])('batches of %i: %i old webhook events go with their deliveries; the newer stay', async (batch, old) => {
    const db = t.server.database.db;
    const tag = `${batch}_${old}`;
    const now = Date.now();
    const events = [
      ...Array.from({ length: old }, (_, i) => ({ id: `evt_old_${tag}_${i}`, at: iso(now - 31 * DAY - i * 1000) })),
      { id: `evt_new_${tag}`, at: iso(now - 29 * DAY) },
    ];
    const seqBase = Number((await sql<{ n: number | string | null }>`select max(seq) as n from webhook_events`.execute(db)).rows[0]?.n ?? 0);
    for (const [i, e] of events.entries()) {
      await sql`insert into webhook_events (id, hotel_id, seq, type, payload, created_at) values (${e.id}, ${hotelId}, ${seqBase + i + 1}, 'guest.checked_in', '{}', ${e.at})`.execute(
        db,
      );
      await sql`insert into webhook_deliveries (id, endpoint_id, event_id, seq, status, next_attempt_at, created_at)
        values (${`dlv_${e.id}`}, 'wh_batch', ${e.id}, ${seqBase + i + 1}, 'succeeded', ${e.at}, ${e.at})`.execute(db);
    }
    expect(await purgeWebhookHistory(db, iso(now - 30 * DAY), batch)).toBe(old);
    const left = (await db.selectFrom('webhook_events').select('id').where('id', 'like', `evt_%_${tag}%`).execute()).map((r) => r.id);
    expect(left).toEqual([`evt_new_${tag}`]);
    const deliveries = (await db.selectFrom('webhook_deliveries').select('event_id').where('event_id', 'like', `evt_%_${tag}%`).execute()).map(
      (r) => r.event_id,
    );
    expect(deliveries).toEqual([`evt_new_${tag}`]);
  });

  it.each([
    [1, 3],
    [2, 4],
    [3, 7],
  ])('batches of %i: %i expired idempotency records go; the live ones stay', async (batch, expired) => {
    const db = t.server.database.db;
    const now = Date.now();
    const scope = `key_batch_${batch}_${expired}`;
    const rows = [
      ...Array.from({ length: expired }, (_, i) => ({ key: `expired-${i}`, expires: iso(now - (i + 1) * 60_000) })),
      { key: 'alive', expires: iso(now + DAY) },
    ];
    await db
      .insertInto('idempotency_records')
      .values(
        rows.map((r) => ({
          api_key_id: scope,
          idempotency_key: r.key,
          fingerprint: 'fp',
          status_code: 200,
          response_body: '{}',
          created_at: iso(now - DAY),
          expires_at: r.expires,
        })),
      )
      .execute();
    const others = (
      await db.selectFrom('idempotency_records').select('idempotency_key').where('expires_at', '<', iso(now)).where('api_key_id', '!=', scope).execute()
    ).length;
    expect(await purgeExpired(db, iso(now), batch)).toBe(expired + others);
    const left = (await db.selectFrom('idempotency_records').select('idempotency_key').where('api_key_id', '=', scope).execute()).map((r) => r.idempotency_key);
    expect(left).toEqual(['alive']);
  });
});
