import { GUEST_DATA_FIELDS, normalizeRoomNumber, type ChangeSet } from '../domain/guest.js';
import type { ListedGuest } from '../domain/sync-plan.js';
import { guestObject, type GuestSnapshot } from '../roster/guest-object.js';
import type { SyncResult } from '../roster/sync-service.js';
import type { GuestInput, UpdateInput } from './schemas.js';

// The PMS API's answers (docs/pms-interface.md, "Answers"), built from the request and
// what the roster did. The routes answer with them, and the API reference's examples are
// made by them.

/** docs/pms-interface.md, "Check-in": the stay created for `body` (its room as stored: trimmed). */
export function checkedInAnswer(body: Pick<GuestInput, 'pmsGuestId' | 'roomNumber'>, guestId: string, requestId: string) {
  return { status: 'created' as const, guestId, pmsGuestId: body.pmsGuestId, roomNumber: normalizeRoomNumber(body.roomNumber), requestId };
}

/** docs/pms-interface.md, "Update and room moves": the fields that changed, each `{from, to}`. */
export function updatedAnswer(pmsGuestId: string, guestId: string, changes: ChangeSet, requestId: string) {
  return { status: 'updated' as const, guestId, pmsGuestId, changes, requestId };
}

/** docs/pms-interface.md, "Check-out": the stay ended and the room it left (null in test mode). */
export function checkedOutAnswer(pmsGuestId: string, guestId: string, roomNumber: string | null, requestId: string) {
  return { status: 'checked_out' as const, guestId, pmsGuestId, roomNumber, requestId };
}

/** docs/pms-interface.md, "Test mode": every submitted field reported as changed from null. */
export function sandboxChanges(body: UpdateInput): ChangeSet {
  const changes: ChangeSet = {};
  for (const f of GUEST_DATA_FIELDS) {
    const v = body[f];
    if (v !== undefined) changes[f] = { from: null, to: f === 'roomNumber' && typeof v === 'string' ? normalizeRoomNumber(v) : v };
  }
  return changes;
}

/** docs/pms-interface.md, "Guest list": the current guests. */
export function guestListAnswer(guests: Array<GuestSnapshot & { createdAt: string }>, requestId: string) {
  return { guests: guests.map(guestObject), count: guests.length, requestId };
}

/** The answer to a sync (docs/pms-interface.md, "Full sync") from its result. */
export function syncResponse(r: SyncResult, requestId: string) {
  return {
    status: 'synced' as const,
    summary: r.summary,
    details: {
      checkedIn: r.plan.checkIn.map((c) => ({ pmsGuestId: c.pmsGuestId, roomNumber: c.data.roomNumber, lastName: c.data.lastName })),
      checkedOut: r.plan.checkOut.map((g) => ({ pmsGuestId: g.pmsGuestId ?? '', roomNumber: g.data.roomNumber, lastName: g.data.lastName })),
      updated: r.plan.update.map((u) => ({
        pmsGuestId: u.guest.pmsGuestId ?? '',
        roomNumber: u.next.roomNumber,
        lastName: u.next.lastName,
        changes: u.changes,
      })),
    },
    requestId,
  };
}

/**
 * docs/pms-interface.md, "Test mode": validated as live, nothing read or written, every listed
 * guest counted as checkedIn.
 */
export function sandboxSyncResponse(list: ListedGuest[], requestId: string) {
  return {
    status: 'synced' as const,
    summary: { received: list.length, checkedIn: list.length, updated: 0, checkedOut: 0, unchanged: 0, manualSkipped: 0 },
    details: {
      checkedIn: list.map((g) => ({ pmsGuestId: g.pmsGuestId, roomNumber: normalizeRoomNumber(g.roomNumber), lastName: g.lastName })),
      checkedOut: [],
      updated: [],
    },
    requestId,
  };
}
