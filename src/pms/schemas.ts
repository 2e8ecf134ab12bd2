import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ERRORS } from '../errors.js';

// decisions.md: Guest fields. One schema per field gives validation, types and the
// OpenAPI document.

const NO_CONTROL_CHARS = '^[^\\u0000-\\u001F\\u007F-\\u009F]*$';

/** `T` or `null`: decisions.md lets optional fields be sent as null (null clears). */
function nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

export const Fields = {
  pmsGuestId: Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: NO_CONTROL_CHARS,
    description: "The PMS's own identifier for the guest: 1-128 characters, no control characters.",
  }),
  roomNumber: Type.String({
    pattern: NO_CONTROL_CHARS,
    description:
      'Room number, 1-20 characters after trimming (" 305 " is stored as "305"; blanks only are refused), no control characters. A room holds at most one active guest.',
  }),
  lastName: Type.String({ minLength: 1, maxLength: 100, description: '1-100 characters.' }),
  firstName: Type.String({ minLength: 1, maxLength: 100, description: '1-100 characters. An empty string is not "absent".' }),
  checkInDate: Type.String({ format: 'date', description: 'YYYY-MM-DD, a real calendar date.' }),
  checkOutDate: Type.String({ format: 'date', description: 'YYYY-MM-DD, a real calendar date, not before checkInDate.' }),
  phone: Type.String({ pattern: '^\\+[1-9][0-9]{1,14}$', description: 'E.164: "+" then 2-15 digits, the first not 0.' }),
  email: Type.String({ format: 'email', maxLength: 254, description: 'E-mail address, at most 254 characters.' }),
  language: Type.String({ format: 'iso-639-1', description: 'An assigned ISO 639-1 code in lower case ("en", "de").' }),
  nationality: Type.String({ format: 'iso-3166-1-alpha-2', description: 'An assigned ISO 3166-1 alpha-2 code in upper case ("DE", "US").' }),
  adults: Type.Integer({ minimum: 0, maximum: 99, description: 'Integer 0-99.' }),
  children: Type.Integer({ minimum: 0, maximum: 99, description: 'Integer 0-99.' }),
};

/** The optional check-in fields: absent keeps, null clears (decisions.md). */
export const optionalGuestFields = {
  firstName: Type.Optional(nullable(Fields.firstName)),
  phone: Type.Optional(nullable(Fields.phone)),
  email: Type.Optional(nullable(Fields.email)),
  language: Type.Optional(nullable(Fields.language)),
  nationality: Type.Optional(nullable(Fields.nationality)),
  adults: Type.Optional(nullable(Fields.adults)),
  children: Type.Optional(nullable(Fields.children)),
};

/** spec 2.1 / decisions.md: the check-in field set; unknown members are refused. */
export const GuestInput = Type.Object(
  {
    pmsGuestId: Fields.pmsGuestId,
    lastName: Fields.lastName,
    roomNumber: Fields.roomNumber,
    checkInDate: Fields.checkInDate,
    checkOutDate: Fields.checkOutDate,
    ...optionalGuestFields,
  },
  { additionalProperties: false, title: 'GuestInput' },
);
export type GuestInput = Static<typeof GuestInput>;

/** spec 4.3: `pmsGuestId` plus the fields that changed; absent keeps, null clears. */
export const UpdateInput = Type.Object(
  {
    pmsGuestId: Fields.pmsGuestId,
    lastName: Type.Optional(Fields.lastName),
    roomNumber: Type.Optional(Fields.roomNumber),
    checkInDate: Type.Optional(Fields.checkInDate),
    checkOutDate: Type.Optional(Fields.checkOutDate),
    ...optionalGuestFields,
  },
  { additionalProperties: false, title: 'UpdateInput' },
);
export type UpdateInput = Static<typeof UpdateInput>;

/** decisions.md: checkout body is `pmsGuestId` only. */
export const CheckoutInput = Type.Object({ pmsGuestId: Fields.pmsGuestId }, { additionalProperties: false, title: 'CheckoutInput' });
export type CheckoutInput = Static<typeof CheckoutInput>;

/** decisions.md: at most 20,000 guests per sync. */
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
    firstName: Type.Union([Type.String(), Type.Null()]),
    lastName: Type.String(),
    phone: Type.Union([Type.String(), Type.Null()]),
    roomNumber: Type.String(),
    checkInDate: Type.String({ format: 'date' }),
    checkOutDate: Type.String({ format: 'date' }),
    language: Type.Union([Type.String(), Type.Null()]),
    adults: Type.Union([Type.Integer(), Type.Null()]),
    children: Type.Union([Type.Integer(), Type.Null()]),
    nationality: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Guest' },
);

const Change = Type.Object({ from: Type.Unknown(), to: Type.Unknown() });
export const Changes = Type.Record(Type.String(), Change, {
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
export const SyncResponse = Type.Object({
  status: Type.Literal('synced'),
  summary: Type.Object({
    received: Type.Integer(),
    checkedIn: Type.Integer(),
    updated: Type.Integer(),
    checkedOut: Type.Integer(),
    unchanged: Type.Integer(),
    manualSkipped: Type.Integer(),
  }),
  details: Type.Object({
    checkedIn: Type.Array(SyncItem),
    checkedOut: Type.Array(SyncItem),
    updated: Type.Array(Type.Object({ pmsGuestId: Type.String(), roomNumber: Type.String(), lastName: Type.String(), changes: Changes })),
  }),
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
    errorsNotShown: Type.Optional(Type.Integer({ description: 'Field errors found beyond the 20 listed in errors.' })),
    currentGuest: Type.Optional(
      Type.Object(
        { pmsGuestId: Type.Union([Type.String(), Type.Null()]), lastName: Type.String(), checkInDate: Type.String() },
        { description: 'ROOM_OCCUPIED: who holds the room.' },
      ),
    ),
    guestId: Type.Optional(Type.String({ description: 'GUEST_ALREADY_CHECKED_IN: the active stay.' })),
    roomNumber: Type.Optional(Type.String({ description: 'GUEST_ALREADY_CHECKED_IN: the active stay.' })),
    retryAfter: Type.Optional(Type.Integer({ description: 'RATE_LIMITED: seconds to wait.' })),
  },
  { additionalProperties: true, title: 'Error' },
);
