import type { Selectable } from 'kysely';
import { expect } from 'vitest';
import type { Db } from '../../src/db/database.js';
import type { RequestLogTable } from '../../src/db/schema.js';
import { withBodies, type RequestLogRowWithBodies } from '../../src/db/repositories/request-log.repository.js';

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
