import type { SessionStage } from '../db/repositories/staff.repository.js';
import type { Guest } from '../db/repositories/guest.repository.js';

// The dashboard API's answers: what it shows of a session and of a guest.

/** What the dashboard shows of a session: the user, the hotel and the token every write must echo. */
export function sessionView(
  s: { user: { id: string; email: string; role: string }; hotel: { slug: string; name: string; timeZone: string } },
  csrfToken: string,
  display = false,
  stage: SessionStage = 'full',
) {
  return {
    user: { id: s.user.id, email: s.user.email, role: s.user.role },
    hotel: { slug: s.hotel.slug, name: s.hotel.name, timeZone: s.hotel.timeZone },
    display,
    csrfToken,
    // Only a sign-in still waiting for its second factor or enrolment says its stage.
    ...(stage === 'full' ? {} : { stage }),
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
export const BOARD_GUEST_FIELDS = [
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
