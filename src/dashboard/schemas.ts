import { Type, type Static } from '@sinclair/typebox';
import { EMAIL_MAX, HOTEL_NAME_MAX, PASSWORD_MAX, PASSWORD_MIN, SLUG_PATTERN, SLUG_RULE, STAFF_ROLES, TIME_ZONE_RULE } from '../domain/accounts.js';
import { ACTIVITY_ACTIONS } from '../db/repositories/activity.repository.js';
import { GuestPatchSchema, NewGuestDataSchema } from '../domain/guest-schema.js';
import { CHECKLIST_ITEMS } from '../pms/key-checklist.js';

// docs/dashboard.md: the dashboard's JSON API. The guest fields are the one definition
// the PMS API uses too (domain/guest-schema.ts): a walk-in obeys exactly the same field
// rules as a check-in.

const Email = Type.String({ format: 'email', maxLength: EMAIL_MAX });
const Password = Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
/** An IANA time zone the runtime knows: the hotel's day. */
const TimeZone = Type.String({ format: 'time-zone', maxLength: 64, description: TIME_ZONE_RULE });

export const HotelSettingsBody = Type.Object({ timeZone: TimeZone }, { additionalProperties: false });

const Role = Type.Union(STAFF_ROLES.map((r) => Type.Literal(r)));

export const SetupBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200 }),
    hotelSlug: Type.String({ pattern: SLUG_PATTERN, description: SLUG_RULE }),
    hotelName: Type.String({ minLength: 1, maxLength: HOTEL_NAME_MAX }),
    email: Email,
    password: Password,
    // The setup form's second entry of the password, checked with the other rules so that
    // every problem of the form is answered at once.
    passwordConfirm: Type.Optional(Type.String({ maxLength: PASSWORD_MAX })),
    timeZone: Type.Optional(TimeZone),
  },
  { additionalProperties: false },
);
export type SetupBody = Static<typeof SetupBody>;

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: EMAIL_MAX }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }),
    // The hotel's slug, after a 409 HOTEL_CHOICE_REQUIRED listed the hotels this login opens.
    hotel: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })),
    // A front-desk display: the board read-only, signed in for a shift (12 h) without idle expiry.
    display: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

export const WalkInBody = Type.Object(NewGuestDataSchema.properties, { additionalProperties: false });
export type WalkInBody = Static<typeof WalkInBody>;

export const GuestPatchBody = Type.Object(GuestPatchSchema.properties, { additionalProperties: false });
export type GuestPatchBody = Static<typeof GuestPatchBody>;

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
export type IdParams = Static<typeof IdParams>;

export const KeyIdParams = Type.Object({ keyId: Type.String({ minLength: 1, maxLength: 100 }) });

/** One mode's state of a checklist item: the request that first showed it, or nulls. */
const ChecklistMode = Type.Object({
  shown: Type.Boolean(),
  shownAt: Type.Union([Type.String(), Type.Null()]),
  requestId: Type.Union([Type.String(), Type.Null()]),
});

/** GET /keys/:keyId/checklist (pms/key-checklist.ts): what each key of the pair has shown. */
export const KeyChecklistAnswer = Type.Object({
  keyId: Type.String(),
  items: Type.Array(
    Type.Object({
      item: Type.Union(CHECKLIST_ITEMS.map((i) => Type.Literal(i))),
      test: ChecklistMode,
      live: ChecklistMode,
    }),
  ),
});
export type KeyChecklistAnswer = Static<typeof KeyChecklistAnswer>;

const Limit = Type.String({ pattern: '^(?:[1-9]|[1-9][0-9]|1[0-9][0-9]|200)$', description: 'a whole number 1-200' });
const Cursor = Type.String({ minLength: 3, maxLength: 200 });

/** GET /guests?ids=a,b: only these guests, as a live event names them (at most 100). */
export const GuestsQuery = Type.Object(
  {
    ids: Type.Optional(Type.String({ minLength: 1, maxLength: 100 * 64, pattern: '^[A-Za-z0-9_-]+(,[A-Za-z0-9_-]+){0,99}$' })),
  },
  { additionalProperties: false },
);
export type GuestsQuery = Static<typeof GuestsQuery>;

export const ActivityQuery = Type.Object(
  {
    actorType: Type.Optional(Type.Union([Type.Literal('pms'), Type.Literal('staff'), Type.Literal('system')])),
    action: Type.Optional(Type.Union(ACTIVITY_ACTIONS.map((a) => Type.Literal(a)))),
    guest: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    before: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);
export type ActivityQuery = Static<typeof ActivityQuery>;

export const RequestsQuery = Type.Object(
  {
    status: Type.Optional(Type.Union([Type.Literal('2xx'), Type.Literal('4xx'), Type.Literal('429'), Type.Literal('5xx')])),
    endpoint: Type.Optional(Type.Union(['checkin', 'update', 'checkout', 'list', 'sync'].map((e) => Type.Literal(e)))),
    mode: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('test')])),
    sender: Type.Optional(Type.Union([Type.Literal('key'), Type.Literal('none')])),
    since: Type.Optional(Type.String({ format: 'date-time' })),
    until: Type.Optional(Type.String({ format: 'date-time' })),
    before: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);
export type RequestsQuery = Static<typeof RequestsQuery>;

export const UserBody = Type.Object({ email: Email, role: Role, password: Password }, { additionalProperties: false });
export type UserBody = Static<typeof UserBody>;

// The room list (README.md: Rooms). Lengths and forms are checked by rooms/room-list.ts
// after normalising (as a guest's room number is), so every problem names its field.
const RoomText = (maxLength: number) => Type.Union([Type.String({ maxLength }), Type.Null()]);
const roomProperties = {
  roomNumber: Type.String({ maxLength: 200 }),
  floor: Type.Optional(RoomText(200)),
  type: Type.Optional(RoomText(400)),
  outOfOrderReason: Type.Optional(RoomText(1000)),
};
export const RoomBody = Type.Object(roomProperties, { additionalProperties: false });
export type RoomBody = Static<typeof RoomBody>;
export const RoomPatchBody = Type.Object({ ...roomProperties, roomNumber: Type.Optional(roomProperties.roomNumber) }, { additionalProperties: false });
export type RoomPatchBody = Static<typeof RoomPatchBody>;
/** The CSV as text (pasted, or a file the page read); its size in bytes is checked by the import. */
export const RoomImportBody = Type.Object({ csv: Type.String({ maxLength: 1024 * 1024 }) }, { additionalProperties: false });
export const RoomAdoptBody = Type.Object(
  { roomNumbers: Type.Array(Type.String({ maxLength: 200 }), { minItems: 1, maxItems: 5_001 }) },
  { additionalProperties: false },
);
const RoomView = Type.Object({
  id: Type.String(),
  roomNumber: Type.String(),
  floor: Type.Union([Type.String(), Type.Null()]),
  type: Type.Union([Type.String(), Type.Null()]),
  outOfOrderReason: Type.Union([Type.String(), Type.Null()]),
});
export const RoomListAnswer = Type.Object({ rooms: Type.Array(RoomView), max: Type.Integer() });
export const RoomAnswer = Type.Object({ room: RoomView });
