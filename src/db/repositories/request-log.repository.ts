import type { Insertable } from 'kysely';
import type { DbOrTrx } from '../database.js';
import type { RequestLogTable } from '../schema.js';

export type RequestLogRow = Insertable<RequestLogTable>;

// SQLite allows 32,766 bound values per statement; 15 columns per row.
const ROWS_PER_STATEMENT = 500;

export async function insertRequestLogRows(db: DbOrTrx, rows: RequestLogRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    await db.insertInto('request_log').values(rows.slice(i, i + ROWS_PER_STATEMENT)).execute();
  }
}

/** Deletes rows created before `cutoff`; returns how many. */
export async function purgeRequestLog(db: DbOrTrx, cutoff: string): Promise<number> {
  const res = await db.deleteFrom('request_log').where('created_at', '<', cutoff).executeTakeFirst();
  return Number(res.numDeletedRows);
}
