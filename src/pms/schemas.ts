import { Type, type Static } from '@sinclair/typebox';
import { GuestDataSchema, GuestPatchSchema, NewGuestDataSchema, PmsGuestId } from '../domain/guest-schema.js';
import { ERRORS } from '../errors.js';

// The PMS API's requests and answers, composed from the one definition of a guest's
// fields (domain/guest-schema.ts).

/** docs/pms-interface.md, "Guest fields": the check-in field set; unknown members are refused. */
export const GuestInput = Type.Object({ pmsGuestId: PmsGuestId, ...NewGuestDataSchema.properties }, { additionalProperties: false, title: 'GuestInput' });
export type GuestInput = Static<typeof GuestInput>;

/** docs/pms-interface.md, "Update and room moves": `pmsGuestId` plus the fields that changed; absent keeps, null clears. */
export const UpdateInput = Type.Object({ pmsGuestId: PmsGuestId, ...GuestPatchSchema.properties }, { additionalProperties: false, title: 'UpdateInput' });
export type UpdateInput = Static<typeof UpdateInput>;

/** docs/pms-interface.md, "Check-out": the body is `pmsGuestId` only. */
export const CheckoutInput = Type.Object({ pmsGuestId: PmsGuestId }, { additionalProperties: false, title: 'CheckoutInput' });
export type CheckoutInput = Static<typeof CheckoutInput>;

/** docs/pms-interface.md, "Full sync": at most 20,000 guests per sync. */
export const MAX_SYNC_GUESTS = 20_000;

export const SyncInput = Type.Object(
  {
    syncMode: Type.Literal('full', { description: 'Must be "full".' }),
    guests: Type.Array(GuestInput, {
      maxItems: MAX_SYNC_GUESTS,
      description:
        'The complete in-house list (at most 20,000); an empty array checks out every PMS-sourced guest. No pmsGuestId or roomNumber may appear twice.',
    }),
  },
  { additionalProperties: false, title: 'SyncInput' },
);
export type SyncInput = Static<typeof SyncInput>;

export const GuestListQuery = Type.Object(
  {
    source: Type.Optional(Type.Union([Type.Literal('pms'), Type.Literal('receptionist')], { description: 'Only guests of this source.' })),
    roomNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the guest in this room (trimmed).' })),
    pmsGuestId: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'Only the guest with this pmsGuestId.' })),
  },
  { additionalProperties: false },
);
export type GuestListQuery = Static<typeof GuestListQuery>;

export const SlugParams = Type.Object({ slug: Type.String({ description: 'The hotel slug.' }) });

// ---- responses ----

const requestId = Type.String({ description: 'req_<id>; req_test_<id> in test mode.' });
const idempotent = Type.Optional(Type.Boolean({ description: 'true only when a stored response is replayed.' }));
const sandbox = Type.Optional(Type.Boolean({ description: 'true on test-key responses only.' }));

export const GuestObject = Type.Object(
  {
    guestId: Type.String(),
    pmsGuestId: Type.Union([Type.String(), Type.Null()], { description: 'null for receptionist guests.' }),
    source: Type.Union([Type.Literal('pms'), Type.Literal('receptionist')]),
    ...GuestDataSchema.properties,
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Guest' },
);

const Change = Type.Object({ from: Type.Unknown(), to: Type.Unknown() });
const Changes = Type.Record(Type.String(), Change, {
  description: 'One member per modified field, each {from, to}; from is null when the field had no value; empty when nothing changed.',
});

export const CheckinResponse = Type.Object({
  status: Type.Literal('created'),
  guestId: Type.String({ description: 'test_<id> in test mode.' }),
  pmsGuestId: Type.String(),
  roomNumber: Type.String(),
  requestId,
  _sandbox: sandbox,
  _idempotent: idempotent,
});

export const UpdateResponse = Type.Object({
  status: Type.Literal('updated'),
  guestId: Type.String(),
  pmsGuestId: Type.String(),
  changes: Changes,
  requestId,
  _idempotent: idempotent,
});

export const CheckoutResponse = Type.Object({
  status: Type.Literal('checked_out'),
  guestId: Type.String(),
  pmsGuestId: Type.String(),
  roomNumber: Type.Union([Type.String(), Type.Null()], { description: 'null in test mode.' }),
  requestId,
  _sandbox: sandbox,
  _idempotent: idempotent,
});

const SyncItem = Type.Object({ pmsGuestId: Type.String(), roomNumber: Type.String(), lastName: Type.String() });
const count = (description: string) => Type.Integer({ minimum: 0, description });
export const SyncResponse = Type.Object({
  status: Type.Literal('synced'),
  summary: Type.Object(
    {
      received: count('The number of guests in the submitted list (the length of `guests`).'),
      checkedIn: count('Listed guests with no active stay: checked in.'),
      updated: count('Listed guests whose submitted fields differed from the stored ones: updated (room moves included).'),
      checkedOut: count('Active PMS guests missing from the list: checked out, their rooms freed.'),
      unchanged: count('Listed guests whose submitted fields all equal the stored ones: untouched.'),
      manualSkipped: count('Active guests entered by hotel staff (source receptionist): never touched by a sync.'),
    },
    { description: 'How many guests each step concerned. received = checkedIn + updated + unchanged.' },
  ),
  details: Type.Object(
    {
      checkedIn: Type.Array(SyncItem, { description: 'One item per guest checked in: `{pmsGuestId, roomNumber, lastName}`.' }),
      checkedOut: Type.Array(SyncItem, {
        description: 'One item per guest checked out: `{pmsGuestId, roomNumber, lastName}`, roomNumber being the room left.',
      }),
      updated: Type.Array(Type.Object({ pmsGuestId: Type.String(), roomNumber: Type.String(), lastName: Type.String(), changes: Changes }), {
        description:
          'One item per guest updated: `{pmsGuestId, roomNumber, lastName, changes}` after the update; `changes` as in the update answer, one `{from, to}` per changed field.',
      }),
    },
    { description: 'Who was checked in, checked out and updated; unchanged and skipped guests are only counted.' },
  ),
  requestId,
  _idempotent: idempotent,
});

export const GuestListResponse = Type.Object({
  guests: Type.Array(GuestObject),
  count: Type.Integer(),
  requestId,
});

export const ErrorResponse = Type.Object(
  {
    status: Type.Literal('error'),
    code: Type.String({ enum: Object.keys(ERRORS), description: 'See the error registry.' } as never),
    message: Type.String(),
    requestId,
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), code: Type.String(), message: Type.String() }), {
        description: 'Field errors (422): every problem found, at most 20 (see errorsNotShown).',
      }),
    ),
    errorsNotShown: Type.Optional(
      Type.Integer({
        description: 'Field errors found beyond the 20 listed in errors. The check stops after 50 problems (the message then says so), so at most 30.',
      }),
    ),
    currentGuest: Type.Optional(
      Type.Union([Type.Object({ pmsGuestId: Type.Union([Type.String(), Type.Null()]), lastName: Type.String(), checkInDate: Type.String() }), Type.Null()], {
        description: 'ROOM_OCCUPIED: who holds the room (null when no one can be named: the holder left meanwhile).',
      }),
    ),
    guestId: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'GUEST_ALREADY_CHECKED_IN: the active stay (null when it ended meanwhile).' }),
    ),
    roomNumber: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'GUEST_ALREADY_CHECKED_IN: the active stay (null when it ended meanwhile).' }),
    ),
    retryAfter: Type.Optional(Type.Integer({ description: 'RATE_LIMITED: seconds to wait.' })),
  },
  { additionalProperties: true, title: 'Error' },
);
