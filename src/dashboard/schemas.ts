import { Type, type Static, type TProperties, type TUnsafe } from '@sinclair/typebox';
import { EMAIL_MAX, HOTEL_NAME_MAX, PASSWORD_MAX, PASSWORD_MIN, SLUG_PATTERN, SLUG_RULE, STAFF_ROLES, TIME_ZONE_RULE } from '../domain/accounts.js';
import { ACTIVITY_ACTIONS } from '../db/repositories/activity.repository.js';
import { ACCESS_ACTIONS, SECURITY_EVENT_KINDS } from '../db/repositories/security.repository.js';
import { GuestDataSchema, GuestPatchSchema, NewGuestDataSchema, nullable } from '../domain/guest-schema.js';
import { CHECKLIST_ITEMS } from '../pms/key-checklist.js';
import { BOARD_GUEST_FIELDS } from './answers.js';

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

/** GET /setup/:token: any text (a wrong or spent link is 404 SETUP_LINK_INVALID, not 422). */
export const SetupTokenParams = Type.Object({ token: Type.String() });

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: EMAIL_MAX }),
    password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }),
    // The hotel's slug, after a 409 HOTEL_CHOICE_REQUIRED listed the hotels this login opens.
    hotel: Type.Optional(Type.String({ minLength: 1, maxLength: 63 })),
    // A front-desk display: the board read-only, signed in for a shift (12 h) without idle expiry.
    display: Type.Optional(Type.Boolean()),
    // With `display`: the one-time code an admin's "Pair a display" showed (docs/dashboard.md, "Second factors").
    pairingCode: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

export const WalkInBody = Type.Object(NewGuestDataSchema.properties, { additionalProperties: false });
export type WalkInBody = Static<typeof WalkInBody>;

export const GuestPatchBody = Type.Object(GuestPatchSchema.properties, { additionalProperties: false });
export type GuestPatchBody = Static<typeof GuestPatchBody>;

/**
 * POST /guests/:id/checkout: only `confirmPmsGuest: true` confirms the check-out of a PMS
 * guest; any other value, other members or no body at all do not (409
 * CONFIRMATION_REQUIRED for a PMS guest, a walk-in needs none).
 */
export const CheckoutBody = Type.Union([Type.Object({ confirmPmsGuest: Type.Optional(Type.Unknown()) }), Type.Null()]);

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

export const UserRoleBody = Type.Object({ role: Role }, { additionalProperties: false });

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

// ---- answers ----
// docs/dashboard.md, "JSON API (`/dashboard/api/…`)": every answer as its route sends it.
// The serializer writes the members a schema names, in its order, and no other (but where
// an object is open: additionalProperties); a value it cannot write as its type is an error,
// so each member has the type the route gives it. A value from a column that no check
// constraint holds to a list (an activity entry's action, a request's mode) is a string.

const Text = Type.String();
const TextOrNull = nullable(Type.String());
const Count = Type.Integer({ minimum: 0 });

export const SetupLinkAnswer = Type.Object({ valid: Type.Literal(true) });

/** A session (answers.ts sessionView): the user, the hotel and the token every write must echo. */
export const SessionAnswer = Type.Object({
  user: Type.Object({ id: Text, email: Text, role: Text }),
  hotel: Type.Object({ slug: Text, name: Text, timeZone: Text }),
  display: Type.Boolean(),
  csrfToken: Text,
  /** Absent for a full session (docs/dashboard.md, "Second factors"). */
  stage: Type.Optional(Type.Union([Type.Literal('second_factor'), Type.Literal('enrol')])),
});

export const LogoutAnswer = Type.Object({ loggedOut: Type.Literal(true) });

/** One of the user's sessions on the My account page (docs/dashboard.md, "My account"). */
const AccountSession = Type.Object({
  id: Text,
  browser: TextOrNull,
  system: TextOrNull,
  ip: TextOrNull,
  createdAt: Text,
  lastSeenAt: Text,
  display: Type.Boolean(),
  current: Type.Boolean(),
});
/** GET /account/sessions: the user's live sessions, the most recently seen first. */
export const AccountSessionsAnswer = Type.Object({ sessions: Type.Array(AccountSession) });
/** The sessions an end-sessions route ended (0 when none was left to end). */
export const SessionsEndedAnswer = Type.Object({ ended: Count });
export const SessionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/** POST /account/password: the current password, and the new one under the rules of a new user's. */
export const PasswordChangeBody = Type.Object(
  { currentPassword: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }), newPassword: Password },
  { additionalProperties: false },
);
export const PasswordChangedAnswer = Type.Object({ passwordChanged: Type.Literal(true), sessionsEnded: Count });

/**
 * The members' types of a schema, none of its rules: what a guest answer holds is what was
 * stored, which need not keep today's rules of a request (an anonymised guest's lastName is
 * empty), and GuestsAnswer tells its two shapes apart by validating against them.
 */
function typesOnly<P extends TProperties>(properties: P) {
  const types = Object.entries(properties).map(([name, schema]) => [name, Type.Unsafe({ type: (schema as { type?: unknown }).type })]);
  return Object.fromEntries(types) as { [K in keyof P]: TUnsafe<Static<P[K]>> };
}

const guestMembers = {
  id: Text,
  source: Type.Union([Type.Literal('pms'), Type.Literal('receptionist')]),
  pmsGuestId: TextOrNull,
  status: Type.Union([Type.Literal('active'), Type.Literal('checked_out')]),
  ...typesOnly(GuestDataSchema.properties),
  createdAt: Text,
  updatedAt: Text,
  anonymisedAt: TextOrNull,
};

/** A guest (answers.ts guestView): every member of the stored guest but its hotel; open, so that a member added to the guest is never left out. */
const GuestView = Type.Object(guestMembers, { additionalProperties: true });

/** What a front-desk display gets of a guest (answers.ts boardGuestView), and no more. */
const BoardGuestView = Type.Pick(Type.Object(guestMembers), BOARD_GUEST_FIELDS, { additionalProperties: false });

/**
 * GET /guests: whole guests, or for a front-desk display session the board's members of
 * each. The serializer writes an answer by the first shape it fits; the board's is closed
 * (no other member), so whole guests fit only theirs.
 */
export const GuestsAnswer = Type.Union([Type.Object({ guests: Type.Array(BoardGuestView) }), Type.Object({ guests: Type.Array(GuestView) })]);

export const GuestAnswer = Type.Object({ guest: GuestView });

export const GuestDetailAnswer = Type.Object({
  guest: GuestView,
  rooms: Type.Array(Type.Object({ roomNumber: Text, assignedAt: Text, releasedAt: TextOrNull })),
});

/** PATCH /guests/:id: the guest as it now is, and one `{ from, to }` per field that changed. */
export const GuestEditAnswer = Type.Object({
  guest: GuestView,
  changes: Type.Record(Type.String(), Type.Object({ from: Type.Unknown(), to: Type.Unknown() })),
});

/** Who made an activity entry: a key pair (pms), a staff user (staff), or no one (system). */
const ActivityActor = Type.Union([
  Type.Object({ keyId: TextOrNull, mode: TextOrNull }, { additionalProperties: false }),
  Type.Object({ userId: TextOrNull, email: TextOrNull }, { additionalProperties: false }),
  Type.Null(),
]);

export const ActivityAnswer = Type.Object({
  entries: Type.Array(
    Type.Object({
      id: Text,
      at: Text,
      actorType: Text,
      actor: ActivityActor,
      action: Text,
      guestId: TextOrNull,
      pmsGuestId: TextOrNull,
      guestName: TextOrNull,
      guestAnonymised: Type.Boolean(),
      roomNumber: TextOrNull,
      changes: Type.Unknown({
        description: "A change set, one { from, to } per field (anonymised ones marked); a guest.erased entry: the erasure's counts; or null.",
      }),
    }),
  ),
  next: TextOrNull,
});

/** What a key pair may do (keys/restrictions.ts): its networks (null: any), its last day (null: until revoked), read-only. */
const restrictionMembers = {
  networks: nullable(Type.Array(Text)),
  expiresOn: TextOrNull,
  readOnly: Type.Boolean(),
};

/** GET /keys: the hotel's key pairs (keys/key-pairs.ts), never a key. */
export const KeysAnswer = Type.Object({
  keys: Type.Array(Type.Object({ keyId: Text, createdAt: Text, revokedAt: TextOrNull, lastUsedAt: TextOrNull, ...restrictionMembers })),
});

/**
 * POST /keys (every member optional, no body at all: no restrictions) and PATCH
 * /keys/:keyId (an absent member keeps the pair's value): `networks` CIDR blocks, an
 * empty list or null for any address; `expiresOn` YYYY-MM-DD, the last day (UTC), null
 * for until revoked. The rules of each value are keys/restrictions.ts's.
 */
export const KeyRestrictionsBody = Type.Union([
  Type.Object(
    {
      networks: Type.Optional(nullable(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 200 }))),
      expiresOn: Type.Optional(nullable(Type.String({ maxLength: 40 }))),
      readOnly: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
  Type.Null(),
]);
export type KeyRestrictionsBody = Static<typeof KeyRestrictionsBody>;

/** POST /keys: the plain keys, this once. */
export const IssuedKeysAnswer = Type.Object({ keyId: Text, live: Text, test: Text });

/** PATCH /keys/:keyId: what the pair may do now. */
export const KeyRestrictionsAnswer = Type.Object({ keyId: Text, ...restrictionMembers });

export const RevokedKeysAnswer = Type.Object({ keyId: Text, revoked: Type.Literal(true) });

/** A request-log row as the console lists it (request-log.repository.ts RequestLogSummary). */
const requestRowMembers = {
  id: Text,
  at: Text,
  method: Text,
  path: Text,
  statusCode: Type.Integer(),
  mode: TextOrNull,
  durationMs: Type.Number(),
  idempotencyKey: TextOrNull,
  keyId: TextOrNull,
  authenticated: Type.Boolean(),
  replayOf: TextOrNull,
};

export const RequestsAnswer = Type.Object({ requests: Type.Array(Type.Object(requestRowMembers)), next: TextOrNull });

const SizeOrNull = nullable(Type.Integer({ minimum: 0 }));

/** GET /requests/:id: the row with its bodies and what the log kept of them (request-log.repository.ts RequestLogDetail). */
export const RequestAnswer = Type.Object({
  request: Type.Object({
    ...requestRowMembers,
    requestBody: TextOrNull,
    responseBody: TextOrNull,
    clientIp: Text,
    userAgent: TextOrNull,
    requestBytes: SizeOrNull,
    responseBytes: SizeOrNull,
    requestCut: Type.Boolean(),
    responseCut: Type.Boolean(),
    requestSha256: TextOrNull,
    responseSha256: TextOrNull,
    responseDigest: TextOrNull,
    bodyWithheld: TextOrNull,
    pathBytes: SizeOrNull,
    userAgentBytes: SizeOrNull,
    idempotencyKeyBytes: SizeOrNull,
  }),
});

/** A staff user (staff-service.ts staffUserView). */
const StaffUserView = Type.Object({ id: Text, email: Text, role: Role, createdAt: Text, deactivatedAt: TextOrNull });
export const UsersAnswer = Type.Object({ users: Type.Array(StaffUserView) });
export const UserAnswer = Type.Object({ user: StaffUserView });

export const HotelSettingsAnswer = Type.Object({ hotel: Type.Object({ slug: Text, name: Text, timeZone: Text }) });

/** POST /guests/:id/erase (privacy/guest-privacy.ts eraseGuest): the records whose personal data was removed, per kind. */
export const ErasureAnswer = Type.Object({
  guestId: Text,
  pmsGuestId: TextOrNull,
  erased: Type.Object({ guests: Count, activity: Count, idempotency: Count, requestLog: Count, webhookEvents: Count }),
});

/** GET /guests/:id/export: the guest's document (privacy/guest-privacy.ts exportGuest), sent as indented JSON text, not through the serializer. */
export const GuestExportAnswer = Type.Unknown({
  description: 'The export document: every stay of the guest, its room history, activity entries, request-log rows and who in the hotel accessed its data.',
});

/** GET /access-trail (docs/dashboard.md, "Access trail"): by staff member, guest id and the hotel's day. */
export const AccessTrailQuery = Type.Object(
  {
    staff: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    guest: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    day: Type.Optional(Type.String({ format: 'date', description: "YYYY-MM-DD: the hotel's day, in its time zone." })),
    before: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const AccessTrailAnswer = Type.Object({
  entries: Type.Array(
    Type.Object({
      id: Text,
      at: Text,
      action: Type.String({ description: `One of ${ACCESS_ACTIONS.join(', ')}.` }),
      staff: Type.Object({ userId: Text, email: TextOrNull }),
      clientIp: TextOrNull,
      guestId: TextOrNull,
      guestName: TextOrNull,
      search: TextOrNull,
    }),
  ),
  next: TextOrNull,
});

/** GET /security-events: by kind. */
export const SecurityEventsQuery = Type.Object(
  {
    kind: Type.Optional(Type.Union(SECURITY_EVENT_KINDS.map((k) => Type.Literal(k)))),
    staff: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A staff user id: the events that concern this account.' })),
    before: Type.Optional(Cursor),
    limit: Type.Optional(Limit),
  },
  { additionalProperties: false },
);

export const SecurityEventsAnswer = Type.Object({
  events: Type.Array(
    Type.Object({
      id: Text,
      at: Text,
      kind: Text,
      actorType: Type.String({ description: 'staff, operator (the command line) or anonymous (a failed sign-in).' }),
      actor: Type.Union([Type.Object({ userId: TextOrNull, email: TextOrNull }), Type.Null()]),
      subject: Type.Union([Type.Object({ userId: Text, email: TextOrNull }), Type.Null()]),
      keyPairId: TextOrNull,
      clientIp: TextOrNull,
      detail: Type.Unknown({ description: "What changed (never a secret, a password or a guest's data), or null." }),
    }),
  ),
  next: TextOrNull,
});

export const RoomImportAnswer = Type.Object({ rooms: Count, added: Count, updated: Count, removed: Count });
export const RoomRemovedAnswer = Type.Object({ id: Text, removed: Type.Literal(true) });
export const UnlistedRoomsAnswer = Type.Object({ roomNumbers: Type.Array(Text), max: Type.Integer() });
export const AdoptedRoomsAnswer = Type.Object({ added: Type.Array(Text) });

/** A webhook endpoint (webhooks/endpoints.ts EndpointView): never its secret, but where the answer shows it this once. */
const endpointMembers = {
  endpointId: Text,
  url: Text,
  events: Type.Union([Type.Array(Text), Type.Literal('all')]),
  enabled: Type.Boolean(),
  disabledReason: TextOrNull,
  disabledAt: TextOrNull,
  createdAt: Text,
  previousSecretUntil: TextOrNull,
};

export const WebhooksAnswer = Type.Object({ endpoints: Type.Array(Type.Object(endpointMembers)), eventTypes: Type.Array(Text) });
export const EndpointAnswer = Type.Object({ endpoint: Type.Object(endpointMembers) });
/** POST /webhooks and /webhooks/:id/rotate-secret: the endpoint and its new `whsec_…` secret, this once. */
export const EndpointSecretAnswer = Type.Object({ endpoint: Type.Object({ ...endpointMembers, secret: Text }) });
export const EndpointRemovedAnswer = Type.Object({ endpointId: Text, removed: Type.Literal(true) });
export const TestEventAnswer = Type.Object({ eventId: Text });

/** GET /webhooks/:id/deliveries (webhook.repository.ts DeliveryView): of the receiver's answer only its status is kept. */
export const DeliveriesAnswer = Type.Object({
  deliveries: Type.Array(
    Type.Object({
      id: Text,
      eventId: Text,
      eventType: Text,
      status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
      attempts: Count,
      createdAt: Text,
      lastAttemptAt: TextOrNull,
      lastStatus: nullable(Type.Integer()),
      lastError: TextOrNull,
      lastLatencyMs: nullable(Type.Integer()),
      nextAttemptAt: TextOrNull,
    }),
  ),
});

export const ResentDeliveryAnswer = Type.Object({ deliveryId: Text });

// ---- passkeys (docs/dashboard.md, "Passkeys") ----

const Base64Url = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+={0,2}$' });
/** The password entered again before a change to the account. */
const PasswordAgain = Type.String({ minLength: 1, maxLength: PASSWORD_MAX });

/** The browser's credential as JSON (WebAuthn's `toJSON()`): the members the server reads; others the browser adds pass. */
const CredentialCommon = {
  id: Base64Url(1024),
  rawId: Base64Url(1024),
  type: Type.Literal('public-key'),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 40 })),
  clientExtensionResults: Type.Object({}),
};
const Transports = Type.Array(Type.String({ maxLength: 40 }), { maxItems: 10 });
const RegistrationCredential = Type.Object({
  ...CredentialCommon,
  response: Type.Object({
    clientDataJSON: Base64Url(4096),
    attestationObject: Base64Url(8192),
    transports: Type.Optional(Transports),
  }),
});
const AuthenticationCredential = Type.Object({
  ...CredentialCommon,
  response: Type.Object({
    clientDataJSON: Base64Url(4096),
    authenticatorData: Base64Url(4096),
    signature: Base64Url(2048),
    userHandle: Type.Optional(Base64Url(1024)),
  }),
});

export const PasswordAgainBody = Type.Object({ password: PasswordAgain }, { additionalProperties: false });
export const PasskeyRegisterBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 60, pattern: '\\S' }), credential: RegistrationCredential },
  { additionalProperties: false },
);
export const PasskeysOnlyBody = Type.Object({ passkeysOnly: Type.Boolean(), password: Type.Optional(PasswordAgain) }, { additionalProperties: false });
export const PasskeyLoginBody = Type.Object({ credential: AuthenticationCredential, display: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

/** What `navigator.credentials.create()` / `get()` is given (as @simplewebauthn/server makes it), written as made. */
export const PasskeyOptionsAnswer = Type.Object({ options: Type.Object({}, { additionalProperties: true }) });
const PasskeyView = Type.Object({ id: Text, name: Text, createdAt: Text, lastUsedAt: TextOrNull });
export const PasskeysAnswer = Type.Object({ passkeys: Type.Array(PasskeyView), passkeysOnly: Type.Boolean(), signedInWithPasskey: Type.Boolean() });
export const PasskeyAnswer = Type.Object({ passkey: PasskeyView, session: SessionAnswer });
export const PasskeyRemovedAnswer = Type.Object({ id: Text, removed: Type.Literal(true) });
export const PasskeysOnlyAnswer = Type.Object({ passkeysOnly: Type.Boolean() });

// docs/dashboard.md, "Second factors".

/** The most characters of a paired display's name. */
const PAIRING_LABEL_MAX = 60;

/** A second-factor code: six digits of the authenticator app, or a recovery code. */
export const SecondFactorBody = Type.Object({ code: Type.String({ minLength: 1, maxLength: 40 }) }, { additionalProperties: false });

export const SecondFactorRuleBody = Type.Object({ required: Type.Boolean() }, { additionalProperties: false });

export const FactorsAnswer = Type.Object({ totp: Type.Boolean(), recoveryCodesLeft: Count, required: Type.Boolean() });
export const TotpStartAnswer = Type.Object({ secret: Text, uri: Text, qr: Text });
export const TotpConfirmAnswer = Type.Object({ recoveryCodes: Type.Array(Text), session: SessionAnswer });
export const RecoveryCodesAnswer = Type.Object({ recoveryCodes: Type.Array(Text) });
export const FactorRemovedAnswer = Type.Object({ removed: Type.Literal(true) });
export const HotelFactorsAnswer = Type.Object({ required: Type.Boolean(), usersWithFactor: Type.Array(Text) });
export const SecondFactorRuleAnswer = Type.Object({ required: Type.Boolean() });
export const FactorsResetAnswer = Type.Object({ userId: Text, reset: Type.Literal(true) });
export const PairingCodeAnswer = Type.Object({ code: Text, expiresAt: Text });
/** POST /displays/pairing-code: the name the admin gives the display (optional; blank: none). */
export const PairingCodeBody = Type.Object({ label: Type.Optional(Type.String({ maxLength: PAIRING_LABEL_MAX })) }, { additionalProperties: false });
const PairedDisplayView = Type.Object({ id: Text, pairedAt: Text, pairedBy: Text, lastUsedAt: Text, label: TextOrNull });
export const PairedDisplaysAnswer = Type.Object({ displays: Type.Array(PairedDisplayView) });
export const DisplayUnpairedAnswer = Type.Object({ id: Text, unpaired: Type.Literal(true) });
