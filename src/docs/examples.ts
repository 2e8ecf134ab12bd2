import { applyChanges, diffGuest, guestDataFromCheckin, type GuestData } from '../domain/guest.js';
import { planSync, summarize, type ListedGuest, type RosterEntry } from '../domain/sync-plan.js';
import { ApiError, ERRORS, type ErrorCode } from '../errors.js';
import { errorBody } from '../http/error-reply.js';
import { rateLimited } from '../http/ip-limit.js';
import { createValidatorCompiler } from '../http/validation.js';
import { checkedInAnswer, checkedOutAnswer, guestListAnswer, sandboxChanges, sandboxSyncResponse, syncResponse, updatedAnswer } from '../pms/answers.js';
import { CheckinBody, CheckoutBody, UpdateBody } from '../pms/routes/guest-events.js';
import { SyncBody } from '../pms/routes/sync.js';
import { GuestListQuery } from '../pms/schemas.js';
import { alreadyCheckedInError, guestNotFoundError, roomHeldError } from '../roster/roster-service.js';
import { syncRoomConflictError } from '../roster/sync-service.js';

// The API reference's examples: one story of a hotel (Ada Lovelace checks in to 401, moves
// to 405, a sync reconciles the house, she checks out), each request's answer built by the
// functions that build the service's answers and errors, each refusal by the routes' own
// validator. test/docs/reference-examples.test.ts sends them to a running server.

export interface Example {
  summary: string;
  value: unknown;
}

export interface OperationExamples {
  method: 'GET' | 'POST';
  /** The request's path below /api/pms/v1/{slug}. */
  path: string;
  /** The main example's Idempotency-Key (POST). */
  idempotencyKey?: string;
  /**
   * Request bodies (for GET: query parameters), the first the main one. Each one's answer
   * is the response example of the same name, `<name>TestKey` the answer to a test key.
   */
  requests: Record<string, Example>;
  /** Response examples by HTTP status, then name; `<name>TestKey` is the answer to a test key. */
  responses: Record<string, Record<string, Example>>;
}

const REQUEST_ID = 'req_4n8w2k6q0d3m7x1c5v9b';
const TEST_REQUEST_ID = 'req_test_9f3k7m1q5w8e2r6t0y4u';
const TEST_GUEST_ID = 'test_2h6j0l4n8p1r5t9v3x7z';
export const ADA_ID = 'guest_8x2k4m9q1w7e3r5t6y0u';

/** Ada's check-in: every field of the check-in set. */
export const ADA = {
  pmsGuestId: 'PMS-100234',
  firstName: 'Ada',
  lastName: 'Lovelace',
  phone: '+442079460000',
  roomNumber: '401',
  checkInDate: '2026-11-23',
  checkOutDate: '2026-11-26',
  language: 'en',
  adults: 2,
  children: 0,
  nationality: 'GB',
  email: 'ada@example.com',
};
const MOVE = { pmsGuestId: ADA.pmsGuestId, roomNumber: '405', checkOutDate: '2026-11-27' };
const adaStored = guestDataFromCheckin(ADA);
const adaMoved = applyChanges(adaStored, diffGuest(adaStored, MOVE));
const adaHolds = { pmsGuestId: ADA.pmsGuestId, lastName: ADA.lastName, checkInDate: ADA.checkInDate };

const validate = createValidatorCompiler();

/** The 422 the route's validator gives `data` (the example must be one it refuses). */
function refusal(schema: object, data: unknown, httpPart: 'body' | 'querystring' = 'body'): ApiError {
  const result = validate({ schema, method: 'POST', url: '', httpPart })(data) as { error?: unknown };
  if (!(result.error instanceof ApiError)) throw new Error(`The example ${JSON.stringify(data)} is meant to be refused.`);
  return result.error;
}

const body = (err: ApiError, summary: string): Example => ({ summary, value: errorBody(err, REQUEST_ID) });
const answer = (value: unknown, summary: string): Example => ({ summary, value });

/** An error of the registry as the service answers it, where the operation has no example of its own. */
export function errorExample(code: ErrorCode): Example {
  const err = code === 'RATE_LIMITED' ? rateLimited({ allowed: false, headers: {}, retryAfterSeconds: 37 }, 'key', undefined) : new ApiError(code);
  // The registry's meaning, its first sentence.
  return body(err, ERRORS[code].meaning.replace(/\.( .*)?$/, ''));
}

function checkInExamples(): OperationExamples {
  const invalid = { pmsGuestId: 'PMS-100235', lastName: '', phone: '020 7946 0000', roomNumber: '402', checkInDate: '23.11.2026', checkOutDate: '2026-11-26' };
  const unknown = { ...ADA, pmsGuestId: 'PMS-100236', roomNumber: 'Garden Suite (ground floor)', children: -1, notes: 'Late arrival' };
  return {
    method: 'POST',
    path: '/guests/checkin',
    idempotencyKey: '3f1c9a52-7e4b-4d08-9a61-0c2e5b8d7f14',
    requests: {
      checkIn: answer(ADA, 'A guest with every field'),
      invalidCheckIn: answer(invalid, 'A date not in YYYY-MM-DD, an empty lastName, a phone not in E.164'),
      unknownMember: answer(unknown, 'A room name too long, a negative count, a member the service does not know'),
    },
    responses: {
      200: {
        checkIn: answer(checkedInAnswer(ADA, ADA_ID, REQUEST_ID), 'Checked in'),
        checkInTestKey: answer({ ...checkedInAnswer(ADA, TEST_GUEST_ID, TEST_REQUEST_ID), _sandbox: true }, 'Checked in, with a test key (nothing stored)'),
      },
      409: {
        ROOM_OCCUPIED: body(roomHeldError(ADA.roomNumber, adaHolds), 'Another guest checks in to 401 while Ada holds it'),
        GUEST_ALREADY_CHECKED_IN: body(alreadyCheckedInError(ADA.pmsGuestId, { id: ADA_ID, roomNumber: ADA.roomNumber }), 'Ada checked in again while in house'),
      },
      422: {
        invalidCheckIn: body(refusal(CheckinBody, invalid), 'INVALID_DATE_FORMAT: a date is wrong (every broken field listed)'),
        unknownMember: body(refusal(CheckinBody, unknown), 'VALIDATION_ERROR: every broken field listed'),
      },
    },
  };
}

function updateExamples(): OperationExamples {
  const invalid = { pmsGuestId: ADA.pmsGuestId, adults: '2', nationality: 'uk' };
  const badDate = { pmsGuestId: ADA.pmsGuestId, checkOutDate: '2026-11-31' };
  const walkIn = { pmsGuestId: null, lastName: 'Shelley', checkInDate: '2026-11-22' };
  return {
    method: 'POST',
    path: '/guests/update',
    idempotencyKey: '8b2e6d04-1f9a-4c7e-b3d5-6a0f2c8e4b19',
    requests: {
      roomMove: answer(MOVE, 'A room move and a longer stay'),
      invalidUpdate: answer(invalid, 'adults as text, nationality in lower case'),
      invalidDate: answer(badDate, 'A date that does not exist'),
    },
    responses: {
      200: {
        roomMove: answer(updatedAnswer(ADA.pmsGuestId, ADA_ID, diffGuest(adaStored, MOVE), REQUEST_ID), 'Moved from 401 to 405, staying a night longer'),
        roomMoveTestKey: answer(updatedAnswer(ADA.pmsGuestId, TEST_GUEST_ID, sandboxChanges(MOVE), TEST_REQUEST_ID), 'With a test key: every field sent, from null'),
      },
      404: { GUEST_NOT_FOUND: body(guestNotFoundError(ADA.pmsGuestId), 'No active stay (never checked in, or checked out)') },
      409: { ROOM_OCCUPIED: body(roomHeldError(MOVE.roomNumber, walkIn), 'Room 405 is held by a walk-in guest entered by staff (pmsGuestId null)') },
      422: {
        invalidUpdate: body(refusal(UpdateBody, invalid), 'VALIDATION_ERROR: every broken field listed'),
        invalidDate: body(refusal(UpdateBody, badDate), 'INVALID_DATE_FORMAT'),
      },
    },
  };
}

function checkOutExamples(): OperationExamples {
  const checkOut = { pmsGuestId: ADA.pmsGuestId };
  const invalid = { pmsGuestId: ADA.pmsGuestId, roomNumber: '405' };
  return {
    method: 'POST',
    path: '/guests/checkout',
    idempotencyKey: 'c47a1e93-5b2d-4f86-8e0c-d19b7a3f5e62',
    requests: { checkOut: answer(checkOut, "The guest's pmsGuestId"), invalidCheckOut: answer(invalid, 'A member checkout does not take') },
    responses: {
      200: {
        checkOut: answer(checkedOutAnswer(ADA.pmsGuestId, ADA_ID, adaMoved.roomNumber, REQUEST_ID), 'Checked out; 405 is free'),
        checkOutTestKey: answer({ ...checkedOutAnswer(ADA.pmsGuestId, TEST_GUEST_ID, null, TEST_REQUEST_ID), _sandbox: true }, 'With a test key: roomNumber null'),
      },
      404: { GUEST_NOT_FOUND: body(guestNotFoundError(ADA.pmsGuestId), 'Checked out already, or never checked in') },
      422: { invalidCheckOut: body(refusal(CheckoutBody, invalid), 'VALIDATION_ERROR: an unknown member') },
    },
  };
}

/** A stay the PMS knows less of than Ada's: the optional fields unknown. */
const stay = (over: Pick<GuestData, 'lastName' | 'roomNumber'> & Partial<GuestData>): GuestData =>
  guestDataFromCheckin({ checkInDate: ADA.checkInDate, checkOutDate: ADA.checkOutDate, adults: 1, ...over });
const entry = (id: string, source: RosterEntry['source'], pmsGuestId: string | null, data: GuestData): RosterEntry => ({ id, source, pmsGuestId, data });

// The house before the sync: Ada (in 405), Grace Hopper (310) and Charles Babbage (118) from the PMS, Mary Shelley a walk-in in 220.
const ADA_IN_HOUSE = entry(ADA_ID, 'pms', ADA.pmsGuestId, adaMoved);
const GRACE = entry('guest_3c7v1b5n9m2k6j0h4g8f', 'pms', 'PMS-100240', stay({ firstName: 'Grace', lastName: 'Hopper', roomNumber: '310' }));
const BABBAGE = entry('guest_6t0y4u8i2o5p9a3s7d1f', 'pms', 'PMS-100230', stay({ lastName: 'Babbage', roomNumber: '118', checkInDate: '2026-11-20' }));
const MARY = entry('guest_1q5w9e3r7t0y4u8i2o6p', 'receptionist', null, stay({ lastName: 'Shelley', roomNumber: '220', checkInDate: '2026-11-22' }));
const ROSTER = [ADA_IN_HOUSE, GRACE, BABBAGE, MARY];

/** A guest of the list as a PMS sends it: the fields it knows. */
const listed = (pmsGuestId: string, data: GuestData): ListedGuest =>
  ({ pmsGuestId, ...Object.fromEntries(Object.entries(data).filter(([, v]) => v !== null)) }) as ListedGuest;
const TURING = listed('PMS-100251', stay({ firstName: 'Alan', lastName: 'Turing', roomNumber: '210' }));
const GRACE_MOVED = { ...GRACE.data, roomNumber: '312' };
/** The PMS's list: Ada as stored, Grace moved to 312, Alan Turing new; Babbage has left. */
const SYNC_LIST = [listed(ADA.pmsGuestId, adaMoved), listed('PMS-100240', GRACE_MOVED), TURING];

function syncExamples(): OperationExamples {
  const request = { syncMode: 'full', guests: SYNC_LIST };
  const invalid = { syncMode: 'partial', guests: [TURING, { ...TURING, pmsGuestId: 'PMS-100252', firstName: 'Joan', lastName: 'Clarke' }] };
  const plan = planSync(ROSTER, SYNC_LIST);
  const badDate = { syncMode: 'full', guests: [{ ...TURING, checkInDate: '2026/11/23' }] };
  const [conflict] = planSync(ROSTER, [{ ...TURING, roomNumber: MARY.data.roomNumber }]).conflicts;
  if (!conflict) throw new Error('The sync conflict example must put a guest in a walk-in guest’s room.');
  return {
    method: 'POST',
    path: '/guests/sync',
    idempotencyKey: 'e5d09f27-3a8c-4b61-9f4e-72c1b6a0d835',
    requests: {
      fullList: answer(request, 'Everyone in house'),
      invalidSync: answer(invalid, 'Not "full", and one room listed twice'),
      invalidDate: answer(badDate, 'A date not in YYYY-MM-DD'),
    },
    responses: {
      200: {
        fullList: answer(
          syncResponse({ plan, summary: summarize(plan, SYNC_LIST.length), checkedInIds: [] }, REQUEST_ID),
          'One of each: checked in, moved, checked out, unchanged, and a walk-in skipped',
        ),
        fullListTestKey: answer(sandboxSyncResponse(SYNC_LIST, TEST_REQUEST_ID), 'With a test key: every listed guest counted as checked in'),
      },
      409: { ROOM_OCCUPIED: body(syncRoomConflictError(conflict), 'The list puts a guest in a walk-in guest’s room; nothing changed') },
      422: {
        invalidSync: body(refusal(SyncBody, invalid), 'VALIDATION_ERROR: every problem listed'),
        invalidDate: body(refusal(SyncBody, badDate), 'INVALID_DATE_FORMAT: the item named by its place in the list'),
      },
    },
  };
}

/** A guest as GET /guests shows it. */
const shown = (e: RosterEntry, data: GuestData, createdAt: string, updatedAt: string) => ({ ...data, id: e.id, source: e.source, pmsGuestId: e.pmsGuestId, createdAt, updatedAt });

function listExamples(): OperationExamples {
  const synced = '2026-11-24T10:00:03.905Z';
  // The house after the sync, in natural room order.
  const house = [
    shown(entry('guest_5z9x3c7v1b4n8m2l6k0j', 'pms', TURING.pmsGuestId, guestDataFromCheckin(TURING)), guestDataFromCheckin(TURING), synced, synced),
    shown(MARY, MARY.data, '2026-11-22T19:12:48.206Z', '2026-11-22T19:12:48.206Z'),
    shown(GRACE, GRACE_MOVED, '2026-11-23T16:40:02.731Z', synced),
    shown(ADA_IN_HOUSE, adaMoved, '2026-11-23T14:02:11.482Z', '2026-11-24T09:15:40.118Z'),
  ];
  const unknown = { floor: '4' };
  return {
    method: 'GET',
    path: '/guests',
    requests: { list: answer({}, 'Every guest in house'), unknownParameter: answer(unknown, 'GET /guests?floor=4') },
    responses: {
      200: { list: answer(guestListAnswer(house, REQUEST_ID), 'The house after the sync'), listTestKey: answer(guestListAnswer([], TEST_REQUEST_ID), 'With a test key: always empty') },
      422: { unknownParameter: body(refusal(GuestListQuery, unknown, 'querystring'), 'VALIDATION_ERROR: an unknown query parameter') },
    },
  };
}

export const OPERATION_EXAMPLES: Record<string, OperationExamples> = {
  checkInGuest: checkInExamples(),
  updateGuest: updateExamples(),
  checkOutGuest: checkOutExamples(),
  syncGuests: syncExamples(),
  listGuests: listExamples(),
};

/** A shell word: single-quoted, a quote inside written as '\''. */
const shellWord = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/** The curl command of an operation's main example (the host, slug and key to fill in). */
export function curlCommand(ex: OperationExamples): string {
  const [main] = Object.values(ex.requests);
  const query = ex.method === 'GET' ? new URLSearchParams(main?.value as Record<string, string>).toString() : '';
  const lines = [`curl ${shellWord(`https://<host>/api/pms/v1/<slug>${ex.path}${query ? `?${query}` : ''}`)}`];
  lines.push(`-H ${shellWord('Authorization: Bearer pms_test_…')}`);
  if (ex.method === 'POST') {
    lines.push(`-H ${shellWord(`Idempotency-Key: ${ex.idempotencyKey ?? ''}`)}`, `-H ${shellWord('Content-Type: application/json')}`);
    lines.push(`--data ${shellWord(JSON.stringify(main?.value, null, 2))}`);
  }
  return lines.join(' \\\n  ');
}
