// A test key's trigger values (the API reference, "Test keys: trigger values", src/docs/routes.ts): a
// reserved room number or pmsGuestId that makes the sandbox answer exactly what a live key
// gets in that situation (409, 404, 429, 503), built by the same functions as the live
// answers, so a PMS can rehearse its error handling before it goes live. Every other
// value, and every value sent with a live key, is an ordinary one. Nothing is stored
// either way.

import { ApiError } from '../errors.js';
import { rateLimited } from '../http/ip-limit.js';
import { ENDPOINT_LIMITS, exhaustedLimit, type PmsEndpoint } from '../rate-limit/limits.js';
import { alreadyCheckedInError, guestNotFoundError, roomHeldError } from '../roster/roster-service.js';
import { syncRoomConflictError } from '../roster/sync-service.js';
import { normalizeRoomNumber } from '../domain/guest.js';

/** The names of the rate-limit headers. */
const RATE_LIMIT_HEADERS = Object.keys(exhaustedLimit(ENDPOINT_LIMITS.checkin, 0).headers);

/** The reserved prefix: no trigger value is anything but it followed by what it answers. */
const TRIGGER_PREFIX = 'innsync-test-';

/** The trigger values, as sent (room numbers are trimmed first, both compared in NFKC form). */
const TRIGGERS = {
  /** roomNumber: check-in, update (a move) or a sync list item into a room another guest holds. */
  roomOccupied: `${TRIGGER_PREFIX}409`,
  /** pmsGuestId: a check-in of a guest already in house. */
  alreadyCheckedIn: `${TRIGGER_PREFIX}409`,
  /** pmsGuestId: an update or checkout of a guest not in house. */
  guestNotFound: `${TRIGGER_PREFIX}404`,
  /** pmsGuestId (a sync item's too, or GET /guests?pmsGuestId=): the key's limit of this endpoint is spent. */
  rateLimited: `${TRIGGER_PREFIX}429`,
  /** pmsGuestId (a sync item's too, or GET /guests?pmsGuestId=): storage unreachable. */
  serviceUnavailable: `${TRIGGER_PREFIX}503`,
} as const;

/** The made-up guest a rehearsed ROOM_OCCUPIED names as the room's holder. */
const SANDBOX_HOLDER = { pmsGuestId: `${TRIGGER_PREFIX}holder`, lastName: 'Sandbox' } as const;

/** What a request of the test key carries that a trigger may name. */
export interface TriggerInput {
  endpoint: PmsEndpoint;
  /** Every pmsGuestId of the request (a sync's list: each item's), already normalised. */
  pmsGuestIds: string[];
  /** check-in, update: the room; sync: each item's room with its pmsGuestId. */
  rooms: Array<{ roomNumber: string; pmsGuestId: string }>;
  /** The fake guestId the sandbox answers for a pmsGuestId (pms/modes.ts). */
  guestId: (pmsGuestId: string) => string;
  nowMs: number;
}

/**
 * The refusals that come before the idempotency key is claimed, as live's do: the rate
 * limit (live counts it before anything else) and storage that does not answer.
 */
export function refusalBeforeClaim(input: TriggerInput): ApiError | null {
  if (input.pmsGuestIds.includes(TRIGGERS.rateLimited)) {
    return rateLimited(exhaustedLimit(ENDPOINT_LIMITS[input.endpoint], input.nowMs), 'key', undefined, true);
  }
  if (input.pmsGuestIds.includes(TRIGGERS.serviceUnavailable)) {
    // Live: storage that does not answer refuses the request at the key's lookup, before
    // its rate limit is counted, so the answer carries no rate-limit headers.
    const withoutLimit = Object.fromEntries(RATE_LIMIT_HEADERS.map((name) => [name, null]));
    return new ApiError('SERVICE_UNAVAILABLE', { headers: { ...withoutLimit, 'retry-after': '5' }, rehearsal: true });
  }
  return null;
}

/**
 * The refusals of the roster's state, answered after the key's claim (as live, in its
 * transaction, so an Idempotency-Key reused for another body is still 422 first). A
 * check-in naming both triggers meets the pmsGuestId's first.
 */
export function refusalOfRoster(input: TriggerInput): ApiError | null {
  const [first] = input.rooms;
  const today = new Date(input.nowMs).toISOString().slice(0, 10);
  const holder = { ...SANDBOX_HOLDER, checkInDate: today };
  switch (input.endpoint) {
    case 'checkin': {
      const pmsGuestId = input.pmsGuestIds[0] ?? '';
      if (pmsGuestId === TRIGGERS.alreadyCheckedIn) {
        return alreadyCheckedInError(pmsGuestId, { id: input.guestId(pmsGuestId), roomNumber: normalizeRoomNumber(first?.roomNumber ?? '') });
      }
      return first && isRoomTrigger(first.roomNumber) ? roomHeldError(normalizeRoomNumber(first.roomNumber), holder) : null;
    }
    case 'update': {
      const pmsGuestId = input.pmsGuestIds[0] ?? '';
      if (pmsGuestId === TRIGGERS.guestNotFound) return guestNotFoundError(pmsGuestId);
      return first && isRoomTrigger(first.roomNumber) ? roomHeldError(normalizeRoomNumber(first.roomNumber), holder) : null;
    }
    case 'checkout': {
      const pmsGuestId = input.pmsGuestIds[0] ?? '';
      return pmsGuestId === TRIGGERS.guestNotFound ? guestNotFoundError(pmsGuestId) : null;
    }
    case 'sync': {
      // Live: a listed room held by a guest hotel staff entered (a receptionist guest: no pmsGuestId).
      const listed = input.rooms.find((r) => isRoomTrigger(r.roomNumber));
      if (!listed) return null;
      return syncRoomConflictError({
        roomNumber: normalizeRoomNumber(listed.roomNumber),
        pmsGuestId: listed.pmsGuestId,
        holder: { pmsGuestId: null, data: { lastName: holder.lastName, checkInDate: holder.checkInDate } },
      });
    }
    case 'list':
      return null;
  }
}

const isRoomTrigger = (roomNumber: string): boolean => normalizeRoomNumber(roomNumber) === TRIGGERS.roomOccupied;
