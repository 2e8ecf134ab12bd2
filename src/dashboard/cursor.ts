import { ApiError } from '../errors.js';

// The pages of the dashboard's long lists (the activity log, the request log).

/** Pages are (created_at, id) positions: `next` of one page is `before` of the following one. */
export function parseCursor(cursor: string | undefined): { at: string; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const cut = cursor.lastIndexOf('~');
  if (cut <= 0)
    throw new ApiError('VALIDATION_ERROR', {
      message: 'before: not a cursor this API gave out.',
      extra: { errors: [{ field: 'before', code: 'INVALID_FORMAT', message: 'before must be the `next` value of a previous page.' }] },
    });
  return { at: cursor.slice(0, cut), id: cursor.slice(cut + 1) };
}

export function nextCursor<T extends { at: string; id: string }>(rows: T[], limit: number): string | null {
  const last = rows[rows.length - 1];
  return rows.length === limit && last ? `${last.at}~${last.id}` : null;
}
