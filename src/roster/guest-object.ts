import type { GuestData, GuestSource } from '../domain/guest.js';

/** A guest's state after a change: enough for the answer GET /guests gives and for the events that report it. */
export interface GuestSnapshot extends GuestData {
  id: string;
  pmsGuestId: string | null;
  source: GuestSource;
  /** Unknown (null) where a batch write did not read it; filled in before an event is written. */
  createdAt: string | null;
  updatedAt: string;
}

/** A guest as GET /guests shows it (spec 4.4), and as webhook events carry it. */
export function guestObject(g: GuestSnapshot & { createdAt: string }) {
  return {
    guestId: g.id,
    pmsGuestId: g.pmsGuestId,
    source: g.source,
    firstName: g.firstName,
    lastName: g.lastName,
    phone: g.phone,
    roomNumber: g.roomNumber,
    checkInDate: g.checkInDate,
    checkOutDate: g.checkOutDate,
    language: g.language,
    adults: g.adults,
    children: g.children,
    nationality: g.nationality,
    email: g.email,
    createdAt: g.createdAt,
    updatedAt: g.updatedAt,
  };
}
