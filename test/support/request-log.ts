import type { Selectable } from 'kysely';
import { expect } from 'vitest';
import type { Db } from '../../src/db/database.js';
import type { RequestLogTable } from '../../src/db/schema.js';

export type RequestLogRecord = Selectable<RequestLogTable>;

/** The request-log rows with these ids, once the batched writer has written them all. */
export async function loggedRows(db: Db, ids: string[]): Promise<Map<string, RequestLogRecord>> {
  let rows: RequestLogRecord[] = [];
  await expect
    .poll(async () => {
      rows = await db.selectFrom('request_log').selectAll().where('id', 'in', ids).execute();
      return rows.length;
    })
    .toBe(ids.length);
  return new Map(rows.map((r) => [r.id, r]));
}

/** Waits until `n` requests of this key pair are in the request log. */
export async function awaitLoggedForPair(db: Db, pairId: string, n: number): Promise<void> {
  await expect.poll(async () => (await db.selectFrom('request_log').select('id').where('api_key_id', '=', pairId).execute()).length).toBe(n);
}
