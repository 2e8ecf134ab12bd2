import { sql, type Selectable } from 'kysely';
import { expect } from 'vitest';
import type { Db } from '../../src/db/database.js';
import type { RequestLogTable } from '../../src/db/schema.js';
import { requestLogColumns, withBodies, type LoggedRequest, type RequestLogRowWithBodies } from '../../src/db/repositories/request-log.repository.js';
import { packBody } from '../../src/pms/request-log-body.js';
import { guestRefs } from '../../src/pms/request-log-guests.js';

/** A request-log row with the texts of its bodies (stored apart, compressed: request_log_bodies). */
export type RequestLogRecord = RequestLogRowWithBodies;

/** The request-log rows with these ids, once the batched writer has written them all. */
export async function loggedRows(db: Db, ids: string[]): Promise<Map<string, RequestLogRecord>> {
  let rows: Selectable<RequestLogTable>[] = [];
  await expect
    .poll(async () => {
      rows = await db.selectFrom('request_log').selectAll().where('id', 'in', ids).execute();
      return rows.length;
    })
    .toBe(ids.length);
  return new Map((await withBodies(db, rows)).map((r) => [r.id, r]));
}

/** Waits until `n` requests of this key pair are in the request log. */
export async function awaitLoggedForPair(db: Db, pairId: string, n: number): Promise<void> {
  await expect.poll(async () => (await db.selectFrom('request_log').select('id').where('api_key_id', '=', pairId).execute()).length).toBe(n);
}

/**
 * Writes rows as the releases before migration 0020 did: bodies in request_log_bodies and
 * the guests they name in request_log_guests (hotel, kind, reference, body address), for
 * the migration tests that build a database of an earlier release.
 */
export async function insertRowsBeforeGuestKeys(db: Db, rows: LoggedRequest[]): Promise<void> {
  const address = async (hotelId: string | null, text: string | null, at: string): Promise<string | null> => {
    if (text === null || hotelId === null) return null;
    const packed = packBody(text);
    await sql`insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at) values (${hotelId}, ${packed.sha256}, ${packed.bytes}, ${packed.data}, ${at})
      on conflict (hotel_id, sha256) do update set last_used_at = case when excluded.last_used_at > request_log_bodies.last_used_at
        then excluded.last_used_at else request_log_bodies.last_used_at end`.execute(db);
    for (const g of guestRefs([text]))
      await sql`insert into request_log_guests (hotel_id, kind, ref, sha256) values (${hotelId}, ${g.kind}, ${g.ref}, ${packed.sha256}) on conflict do nothing`.execute(
        db,
      );
    return packed.sha256;
  };
  for (const r of rows) {
    const request = await address(r.hotelId, r.requestBody, r.at);
    const response = await address(r.hotelId, r.responseBody, r.at);
    await db
      .insertInto('request_log')
      .values(requestLogColumns(r, request, response))
      .execute();
  }
}
