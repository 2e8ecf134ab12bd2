import { normalizeRoomNumber } from '../domain/guest.js';
import type { ListedGuest } from '../domain/sync-plan.js';
import type { SyncResult } from '../roster/sync-service.js';

/** spec 4.5 response from a sync result. */
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
 * decisions.md, test mode: validated as live, nothing read or written, every listed
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
