import type { FastifyRequest } from 'fastify';
import type { Actor } from '../db/repositories/activity.repository.js';
import type { Guest } from '../db/repositories/guest.repository.js';
import type { StaffSession } from '../db/repositories/staff.repository.js';
import { ApiError } from '../errors.js';

/** What the dashboard shows of a session: the user, the hotel and the token every write must echo. */
export function sessionView(
  s: { user: { id: string; email: string; role: string }; hotel: { slug: string; name: string; timeZone: string } },
  csrfToken: string,
  display = false,
) {
  return {
    user: { id: s.user.id, email: s.user.email, role: s.user.role },
    hotel: { slug: s.hotel.slug, name: s.hotel.name, timeZone: s.hotel.timeZone },
    display,
    csrfToken,
  };
}

/** A guest as the dashboard shows it: every member but the hotel id (docs/dashboard.md). */
export function guestView(g: Guest): Omit<Guest, 'hotelId'> {
  const { hotelId: _hotelId, ...view } = g;
  return view;
}

/**
 * What the board shows of a guest (public/dashboard/assets/views/board.js: room, name,
 * dates, party, source, the PMS id its search finds; `updatedAt` for its tile cache,
 * `anonymisedAt` for the name), and all a front-desk display session gets: no contact
 * details, language or nationality (docs/dashboard.md: Front-desk display).
 */
const BOARD_GUEST_FIELDS = [
  'id',
  'source',
  'pmsGuestId',
  'roomNumber',
  'firstName',
  'lastName',
  'checkInDate',
  'checkOutDate',
  'adults',
  'children',
  'updatedAt',
  'anonymisedAt',
] as const satisfies ReadonlyArray<keyof Guest>;

export type BoardGuest = Pick<Guest, (typeof BOARD_GUEST_FIELDS)[number]>;

export function boardGuestView(g: Guest): BoardGuest {
  return Object.fromEntries(BOARD_GUEST_FIELDS.map((field) => [field, g[field]])) as BoardGuest;
}

/** The staff session of a request the session guard let through. */
export function session(req: FastifyRequest): StaffSession {
  if (!req.staff) throw new ApiError('NOT_AUTHENTICATED');
  return req.staff;
}

export function staffActor(s: StaffSession): Actor {
  return { type: 'staff', id: s.user.id, mode: null };
}

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
