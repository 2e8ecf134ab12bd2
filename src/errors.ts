/**
 * The one registry of error codes (docs/pms-interface.md, "Errors"). Every error the service
 * answers is built from this table; the API reference (the OpenAPI document) is generated
 * from it, and a test checks that the reference names each code.
 */
export const ERRORS = {
  IDEMPOTENCY_KEY_REQUIRED: {
    status: 400,
    message: 'The Idempotency-Key header is required on every POST request.',
    meaning: 'POST without an `Idempotency-Key` header.',
  },
  IDEMPOTENCY_KEY_INVALID: {
    status: 400,
    message: 'The Idempotency-Key header must be 1 to 255 characters.',
    meaning: 'The key is empty or longer than 255 characters.',
  },
  MALFORMED_REQUEST: {
    status: 400,
    message: 'The request is not valid HTTP/1.1: check the request line, the headers and the chunked encoding, then send it again on a new connection.',
    meaning: 'The request line or headers could not be parsed (not HTTP, a bad header, a bad chunk). The connection is closed after the answer.',
  },
  HOST_HEADER_REPEATED: {
    status: 400,
    message: 'The request carries more than one Host header: send it again with exactly one.',
    meaning:
      'Two or more `Host` headers (RFC 9112 §3.2): which host the request is for is ambiguous, so it is refused before anything else, a redirect included.',
  },
  INVALID_JSON: {
    status: 400,
    message: 'The request body must be a JSON object.',
    meaning: 'The body is not parseable JSON, or not a JSON object (`[]`, `42`).',
  },
  UNAUTHORIZED: {
    status: 401,
    message: 'Missing or invalid API key for this hotel.',
    meaning: 'Missing, malformed, unknown or revoked key, or a key of another hotel. One code and message for all, so a caller learns nothing about which.',
  },
  HTTPS_REQUIRED: {
    status: 403,
    message: 'This service is served over HTTPS only.',
    meaning: "Any request over plain HTTP but a browser's GET of the dashboard's pages, which is redirected to HTTPS.",
  },
  KEY_NETWORK_REFUSED: {
    status: 403,
    message:
      "This API key's pair may not be used from this address: send the request from one of the pair's allowed networks, or ask the hotel's admin to add this network to the pair (the dashboard's Keys page, or innsync key set).",
    meaning:
      "The key is valid but its pair is limited to networks (CIDR blocks) and the client's address (as `TRUST_PROXY` defines it) is in none of them. The request is logged as the key's.",
  },
  KEY_READ_ONLY: {
    status: 403,
    message:
      "This API key's pair is read-only: it may only read GET /guests. Use a key pair that may write, or ask the hotel's admin to make this one read-write.",
    meaning: 'A key of a read-only pair sent a write (check-in, update, checkout or sync); only `GET /guests` is open to it. Nothing was changed.',
  },
  GUEST_NOT_FOUND: {
    status: 404,
    message: 'No active guest with this pmsGuestId.',
    meaning: 'Update or checkout of a `pmsGuestId` with no active PMS guest (never checked in, or already checked out).',
  },
  NOT_FOUND: { status: 404, message: 'No such endpoint.', meaning: 'Unknown path.' },
  METHOD_NOT_ALLOWED: {
    status: 405,
    message: 'This endpoint does not accept this method.',
    meaning: 'Known path, wrong method. The `Allow` header lists the accepted methods.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    message: 'The request was not received in time; send it again (with the same Idempotency-Key, if it had one).',
    meaning:
      'Headers not complete within `HEADERS_TIMEOUT_SECONDS` (default 10, HTTP/1.1), or the whole request not within `REQUEST_TIMEOUT_SECONDS` (default 60): a stalled or very slow upload. Nothing was processed; the HTTP/1.1 connection (or HTTP/2 stream) is closed after the answer.',
  },
  ROOM_OCCUPIED: {
    status: 409,
    message: 'The room is held by another active guest.',
    meaning:
      'Check-in, room move or sync targets a room held by another active guest. Adds `currentGuest` = `{ pmsGuestId, lastName, checkInDate }` (`pmsGuestId` is null for a receptionist guest).',
  },
  GUEST_ALREADY_CHECKED_IN: {
    status: 409,
    message: 'A guest with this pmsGuestId is already checked in.',
    meaning: 'Check-in of a `pmsGuestId` that is already active. Adds `guestId` and `roomNumber` of the active stay.',
  },
  IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    message: 'A request with this Idempotency-Key is still being processed; retry it in a few seconds with the same key.',
    meaning:
      'A request with the same key was still in progress after this one waited 5 seconds for it. Retry after a moment: you then get its stored response, or your retry is processed if the first one failed.',
  },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.', meaning: 'Body over 1 MiB (check-in, update, checkout) or 16 MiB (sync).' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'Content-Type must be application/json.',
    meaning: 'POST whose `Content-Type` is not `application/json` (parameters such as `charset` are allowed, case does not matter).',
  },
  INVALID_DATE_FORMAT: {
    status: 422,
    message: 'A date field is not a real YYYY-MM-DD date.',
    meaning: 'Any date field not a real `YYYY-MM-DD` calendar date. Wins over other field errors; `errors` still lists all.',
  },
  VALIDATION_ERROR: {
    status: 422,
    message: 'The request does not satisfy the field rules.',
    meaning:
      'Any other field rule broken, an unknown member, `syncMode` not `full`, more than 20,000 guests in a sync, a duplicate `pmsGuestId` or `roomNumber` inside one sync list, or an unknown query parameter. `errors` lists every problem found; the check stops after 50.',
  },
  KEY_PAIR_LIMIT: {
    status: 409,
    message: 'This hotel already has as many active key pairs as allowed. Revoke a key pair it no longer uses, then issue a new one.',
    meaning:
      'Dashboard and `innsync key issue`: the hotel already holds `MAX_KEY_PAIRS_PER_HOTEL` active key pairs (10 by default). Revoke one it no longer uses (the Keys page, or `innsync key revoke`), then issue the new pair.',
  },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    message: 'This Idempotency-Key was already used for a different request.',
    meaning: 'The key was already used, within its 24 h lifetime, for a different endpoint or a different body.',
  },
  RATE_LIMITED: {
    status: 429,
    message: 'Rate limit exceeded.',
    meaning: 'Limit exceeded. Adds `retryAfter` (seconds); the `Retry-After` header carries the same value.',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    message: 'The request headers are too large; send at most 16 KiB of headers.',
    meaning:
      'HTTP/1.1: request line and headers over 16 KiB together. The connection is closed after the answer. (HTTP/2 refuses such a stream at the protocol level.)',
  },
  // The staff dashboard's JSON API (/dashboard/api, docs/dashboard.md).
  PASSKEY_INVALID: {
    status: 400,
    message: 'The passkey could not be verified: use a passkey registered for this account on this site, then try again.',
    meaning:
      'Dashboard: a passkey registration or sign-in whose credential is unknown, already registered, or does not verify (signature, origin, relying party id, user verification, counter). One answer for all.',
  },
  PASSKEY_CHALLENGE_EXPIRED: {
    status: 400,
    message: 'The passkey request expired or was already used: start again (a passkey must answer within 5 minutes, once).',
    meaning: 'Dashboard: a passkey registration or sign-in answering a challenge this service did not issue for it, already answered, or older than 5 minutes.',
  },
  NOT_AUTHENTICATED: {
    status: 401,
    message: 'Log in to continue.',
    meaning: 'Dashboard: no session, or the session expired (30 minutes idle, 12 hours at most) or was ended.',
  },
  LOGIN_FAILED: {
    status: 401,
    message: 'E-mail or password is wrong.',
    meaning: 'Dashboard: unknown e-mail, wrong password or deactivated user; one answer for all.',
  },
  CSRF_REJECTED: {
    status: 403,
    message: "The request did not carry this session's CSRF token or came from another site.",
    meaning: "Dashboard: a state-changing request without the session's `X-CSRF-Token`, or a login or setup from another origin.",
  },
  FORBIDDEN: { status: 403, message: 'Your role does not allow this.', meaning: 'Dashboard: an admin-only action by a receptionist.' },
  DISPLAY_READ_ONLY: {
    status: 403,
    message: 'This is a front-desk display: it shows the board only. Log out and log in without display mode to make changes or open a guest.',
    meaning: 'Dashboard: a display session (login with `display: true`) asked for anything but the board, its live events, the session or logout.',
  },
  PASSWORD_INCORRECT: {
    status: 403,
    message: 'The password entered is not the password of your account: type your current password again.',
    meaning:
      "Dashboard: a change to the signed-in account's sign-in (a passkey added or removed, passkeys-only turned on, the authenticator app set up or removed, new recovery codes) whose `password`, entered again, is wrong. Counted as a failed login.",
  },
  PASSKEY_SESSION_REQUIRED: {
    status: 403,
    message: 'Only a session signed in with a passkey can turn off "sign in with passkeys only": log out, sign in with your passkey, then turn it off.',
    meaning: 'Dashboard: `passkeysOnly: false` from a session that was signed in with the password.',
  },
  TOO_MANY_STREAMS: {
    status: 429,
    message:
      'Too many live board connections are open for this account or hotel: close dashboard tabs and log out on screens no longer in use, then reload this page.',
    meaning:
      'Dashboard: `GET /events` when the user already holds LIVE_STREAMS_PER_USER open event streams (default 10), or the hotel LIVE_STREAMS_PER_HOTEL (default 200), on this instance. Adds `limit` (`user` or `hotel`) and `max`.',
  },
  SETUP_LINK_INVALID: {
    status: 404,
    message: 'This setup link is not the current one: open the link the server printed when it started (a new one at every start while no hotel exists).',
    meaning: 'Dashboard: a first-run setup link that is wrong, from an earlier start, or used (then the message says that a hotel exists).',
  },
  RECORD_NOT_FOUND: {
    status: 404,
    message: 'Not found in your hotel.',
    meaning: "Dashboard: no guest, key pair, request or user with this id in the user's hotel (another hotel's ids answer the same).",
  },
  GUEST_MANAGED_BY_PMS: {
    status: 409,
    message: 'This guest belongs to the PMS; change it there.',
    meaning: 'Dashboard: an edit or room move of a PMS guest (staff edit walk-in guests only).',
  },
  CONFIRMATION_REQUIRED: {
    status: 409,
    message: 'Checking out a PMS guest here needs confirmation: the PMS will send the guest again on its next sync unless it is checked out there too.',
    meaning: 'Dashboard: staff check-out of a PMS guest without `confirmPmsGuest: true`.',
  },
  HOTEL_CHOICE_REQUIRED: {
    status: 409,
    message: 'This e-mail and password open accounts at more than one hotel: log in again naming one of the listed hotels (its slug as "hotel").',
    meaning:
      'Dashboard: a login without `hotel` whose e-mail and password open active accounts at several hotels. Adds `hotels` = `[{ slug, name }]`, only the hotels whose account the password opened. No session is started and the attempt does not count as a failed login.',
  },
  EMAIL_TAKEN: {
    status: 409,
    message: 'This hotel already has a user with this e-mail.',
    meaning:
      'Dashboard: a new staff user with an e-mail that already has an account at the same hotel. E-mails are unique per hotel: the same address at another hotel is a separate account.',
  },
  PASSKEY_REQUIRED: {
    status: 409,
    message: 'Add a passkey first: "sign in with passkeys only" needs at least one passkey on your account.',
    meaning: 'Dashboard: `passkeysOnly: true` for an account without a passkey.',
  },
  LAST_PASSKEY: {
    status: 409,
    message: 'This is your last passkey and your account signs in with passkeys only: turn passkeys-only off first, or add another passkey.',
    meaning: 'Dashboard: removing the last passkey of an account that signs in with passkeys only.',
  },
  GUEST_ACTIVE: {
    status: 409,
    message: 'This guest is still checked in: check the guest out first, then erase the personal data.',
    meaning: 'Dashboard and `innsync guest erase`: erasure of a guest with an active stay.',
  },
  ENDPOINT_DISABLED: {
    status: 409,
    message: 'This webhook endpoint is disabled: Enable it first; its waiting events are then sent in order.',
    meaning: 'Dashboard and `innsync webhook test`: a test event for a disabled webhook endpoint.',
  },
  TOO_MANY_ENDPOINTS: {
    status: 409,
    message:
      'This hotel already has as many webhook endpoints as allowed: remove one it no longer needs (or send several event types to one endpoint), or ask the operator to raise WEBHOOK_MAX_ENDPOINTS_PER_HOTEL.',
    meaning:
      'Dashboard and `innsync webhook add`: a new webhook endpoint for a hotel that has WEBHOOK_MAX_ENDPOINTS_PER_HOTEL (default 10) already. Adds `limit`, the number allowed.',
  },
  ROOM_EXISTS: {
    status: 409,
    message: 'This room is already on the room list: edit that room instead, or choose another room number.',
    meaning:
      'Dashboard: a room added to, or renamed on, the room list with a room number the list already holds (compared in its stored form). Adds `roomNumber`.',
  },
  ROOM_LIST_FULL: {
    status: 409,
    message: 'The room list holds as many rooms as allowed (5,000): remove rooms that are not rooms of this hotel, then add again.',
    meaning: "Dashboard: an add, import or adoption would put more than 5,000 rooms on the hotel's room list. Adds `limit`.",
  },
  ROOM_LIST_INVALID: {
    status: 422,
    message: 'The room list CSV has problems on the lines listed in errors: fix each as its message says and import it again; nothing was imported.',
    meaning:
      'Dashboard: a room list import (`POST /rooms/import`) whose CSV breaks a rule (README.md: Rooms). Nothing is changed. Adds `errors` = `[{ line, column, code, message }]` (at most 20; `errorsNotShown` counts the rest; the check stops after 50).',
  },
  ROOM_CSV_TOO_LARGE: {
    status: 413,
    message:
      'The room list CSV is larger than 512 KiB: keep only the columns room, floor, type and out_of_order_reason and one line per room, then import it again.',
    meaning: 'Dashboard: a room list import whose CSV is over 512 KiB (UTF-8). Adds `limit` and `size` in bytes.',
  },
  // The provisioning API (/api/admin/v1, docs/admin-api.md).
  SLUG_TAKEN: {
    status: 409,
    message: 'A hotel with this slug exists already: choose another slug (GET /api/admin/v1/hotels lists the slugs in use).',
    meaning: 'Provisioning API: `POST /hotels` with the slug of an existing hotel (as `innsync hotel create` refuses it, HOTEL_EXISTS). Nothing is created.',
  },
  UNKNOWN_HOTEL: {
    status: 404,
    message: 'No hotel has this slug: check its spelling, or list the hotels with GET /api/admin/v1/hotels.',
    meaning: 'Provisioning API: a hotel route (`/hotels/{slug}`) whose slug names no hotel.',
  },
  CANNOT_DEACTIVATE_SELF: { status: 409, message: 'You cannot deactivate your own account.', meaning: 'Dashboard: an admin deactivating their own account.' },
  CANNOT_CHANGE_OWN_ROLE: {
    status: 409,
    message: 'You cannot change your own role: ask another admin of your hotel to change it.',
    meaning: 'Dashboard: an admin changing their own role (`PATCH /users/:id`).',
  },
  USER_DEACTIVATED: {
    status: 409,
    message: 'This user is deactivated, so their role cannot be changed: choose an active user (the Staff page or `innsync user list` shows who is active).',
    meaning: 'Dashboard and `innsync user role`: a role change of a deactivated user.',
  },
  LAST_ADMIN: {
    status: 409,
    message: "This is the hotel's last active admin: make another user admin first, then change this user's role.",
    meaning:
      'Dashboard and `innsync user role` or `innsync user deactivate`: a change that would leave the hotel without an active admin (its last one made a receptionist, or deactivated). Nothing is changed.',
  },
  SECOND_FACTOR_REQUIRED: {
    status: 403,
    message: 'This sign-in needs its second factor first: enter the code of your authenticator app, or one of your recovery codes.',
    meaning:
      'Dashboard: a session whose password was right but whose second factor was not given yet (`stage: "second_factor"`) asked for anything but `POST /login/second-factor`, the session or logout.',
  },
  SECOND_FACTOR_INVALID: {
    status: 401,
    message: 'This code is wrong or was already used: enter the code your authenticator app shows now (a code works once), or an unused recovery code.',
    meaning:
      'Dashboard: a second-factor code that is not the current authenticator code, a code of a time step already used, or a recovery code that is unknown or used. Counted as a failed login.',
  },
  ENROLMENT_REQUIRED: {
    status: 403,
    message: 'Your hotel requires a second factor: set up an authenticator app or add a passkey on the My account page to continue.',
    meaning:
      'Dashboard: a session of an account without a second factor at a hotel that requires one (`stage: "enrol"`) asked for anything but the enrolment, the session or logout.',
  },
  FACTOR_STATE_CONFLICT: {
    status: 409,
    message: 'Your authenticator app is not in the state this step needs: reload the My account page and start again from what it shows.',
    meaning:
      'Dashboard: an authenticator set up twice (remove it first), a confirmation with no set-up started, or removing or regenerating recovery codes with no authenticator.',
  },
  PAIRING_CODE_INVALID: {
    status: 401,
    message: 'This pairing code is wrong, used or expired: ask an admin for a new one (Staff page, Pair a display) and sign in again with it.',
    meaning:
      "Dashboard: a display sign-in with a `pairingCode` that is not a current, unused code of the account's hotel (codes last 10 minutes, once). Counted as a failed login.",
  },
  INTERNAL_ERROR: {
    status: 500,
    message: 'An internal error occurred. It has been logged; quote the requestId when reporting it.',
    meaning: 'Unexpected failure. Never contains a stack trace or SQL text.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    message: 'Storage is unreachable; retry in a few seconds.',
    meaning:
      'Storage unreachable, or too busy to finish the request in time (a lock held past 5 s: then nothing was changed). When the connection broke while the change was being committed, it may or may not have been applied: send the request again with the same `Idempotency-Key` to get the outcome. Adds `Retry-After`.',
  },
} as const satisfies Record<string, { status: number; message: string; meaning: string }>;

export type ErrorCode = keyof typeof ERRORS;

/**
 * The codes of the `innsync` command's failures (README.md, Operating it): with `--json`
 * a failure is `{ status: "error", code, message }` on stderr. The command never answers
 * over HTTP, so these carry no status and are not in the API reference; a failure that
 * comes from a use case the API shares (RECORD_NOT_FOUND, VALIDATION_ERROR,
 * TOO_MANY_ENDPOINTS, …) keeps that code of ERRORS above.
 */
/**
 * Why a new staff password is refused as easy to guess (staff/password-strength.ts), one
 * code each: a field error of a 422 in the API, the failure's own code in the command line.
 */
export const PASSWORD_REFUSALS = {
  PASSWORD_TOO_COMMON:
    'The password is one of the most common passwords (or one with small changes): choose another, for example three or four unrelated words.',
  PASSWORD_LIKE_EMAIL: 'The password contains or resembles the e-mail address: choose one without the e-mail or the name in it.',
  PASSWORD_LIKE_HOTEL: "The password contains or resembles the hotel's name: choose one without the hotel's name in it.",
  PASSWORD_TOO_WEAK: 'The password is too easy to guess: make it longer, for example three or four unrelated words.',
} as const;

export const CLI_ERRORS = {
  ...PASSWORD_REFUSALS,
  INVALID_ARGUMENT: 'An argument or option is not valid: the message names it and the rule it must follow.',
  CONFIG_ERROR: 'An environment variable is not valid: the message names it and the values it takes.',
  HOTEL_NOT_FOUND: 'No hotel has this slug: `innsync hotel list` shows the slugs.',
  HOTEL_EXISTS: 'A hotel with this slug exists already: choose another slug.',
  OPERATOR_TOKEN_NOT_FOUND: 'No operator token has this id: `innsync operator token list` shows the tokens.',
  KEY_PAIR_NOT_FOUND: "No key pair has this id: `innsync key list <slug>` shows a hotel's key pairs.",
  USER_NOT_FOUND: 'The hotel has no staff user with this e-mail: `innsync user list <slug>` shows its users.',
  USER_EXISTS: 'The hotel already has a staff user with this e-mail: set their password with `innsync user set-password` instead.',
  PASSWORD_MISMATCH: 'The password typed a second time on the terminal differs from the first: run the command again and type the same password twice.',
  BACKUP_UNSUPPORTED: '`innsync backup` copies the SQLite database; with DATABASE_URL (PostgreSQL) use pg_dump.',
  BACKUP_FAILED: 'The backup file could not be written: the message says why (an existing file, a missing folder, permissions).',
  RESTORE_UNSUPPORTED:
    '`innsync restore` replaces the SQLite database; with DATABASE_URL (PostgreSQL) restore a `pg_dump -Fc` dump with pg_restore into a new, empty database, then run `innsync migrate` (docs/backup-restore.md).',
  RESTORE_REFUSED:
    'The backup was not restored and nothing was changed: the message names the check that failed and what to do (stop the server, choose another file).',
  RESTORE_FAILED: 'The restore could not be completed and the database was not replaced: the message says why.',
  DATABASE_TOO_NEW:
    'The database was written by a newer release of innsync (it has migrations this build does not know): run that release or a newer one, or restore a backup made by this release (docs/backup-restore.md).',
  WEBHOOK_TEST_FAILED: "The test event's delivery was attempted and failed: the message gives the receiver's answer or the connection error.",
  WEBHOOK_TEST_PENDING:
    'The test event was queued but not attempted in time: the server (`innsync serve`) delivers it; check that it runs, then `innsync webhook deliveries <endpointId>`.',
  OPERATION_FAILED: 'The command could not be completed: the message says why.',
} as const;

export type CliErrorCode = keyof typeof CLI_ERRORS;

/** A failure of the `innsync` command: its code (CLI_ERRORS) and a sentence for the operator. */
export class CliError extends Error {
  readonly code: CliErrorCode;

  constructor(code: CliErrorCode, message?: string) {
    super(message ?? CLI_ERRORS[code]);
    this.code = code;
  }
}

/** Codes that appear inside `errors[]` of a 422 response, one per broken field rule. */
export const FIELD_ERRORS = {
  REQUIRED: 'The field is required.',
  UNKNOWN_FIELD: 'The member is not part of this request; check its spelling.',
  INVALID_TYPE: 'The value has the wrong JSON type.',
  INVALID_DATE_FORMAT: 'Not a real YYYY-MM-DD calendar date.',
  DATE_ORDER: 'checkOutDate is before checkInDate.',
  TOO_SHORT: 'The value is shorter than allowed (an empty string is not "absent").',
  TOO_LONG: 'The value is longer than allowed.',
  INVALID_FORMAT: 'The value does not have the required format.',
  OUT_OF_RANGE: 'The number is outside the allowed range.',
  INVALID_VALUE: 'The value is not one of the allowed values.',
  DUPLICATE: 'The value appears more than once in the list.',
  TOO_MANY: 'The list has more items than allowed.',
  ...PASSWORD_REFUSALS,
} as const;

export type FieldErrorCode = keyof typeof FIELD_ERRORS;

export interface FieldError {
  field: string;
  code: FieldErrorCode;
  message: string;
}

/** The one error type: thrown anywhere, rendered into the error envelope by the error handler. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: Record<string, unknown>;
  /** Headers of the answer; null: the answer must not carry this header (set before the error). */
  readonly headers: Record<string, string | null>;
  /** A test key's rehearsal of this answer (pms/sandbox-triggers.ts): answered as live, not logged as a security event. */
  readonly rehearsal: boolean;

  constructor(code: ErrorCode, opts: { message?: string; extra?: Record<string, unknown>; headers?: Record<string, string | null>; rehearsal?: boolean } = {}) {
    super(opts.message ?? ERRORS[code].message);
    this.code = code;
    this.status = ERRORS[code].status;
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
    this.rehearsal = opts.rehearsal ?? false;
  }
}

/** An error body lists at most this many field errors; `errorsNotShown` counts the rest. */
export const MAX_LISTED_ERRORS = 20;

/**
 * 422 for field errors; INVALID_DATE_FORMAT wins over other field errors
 * (docs/pms-interface.md, "Errors"). The list is capped (MAX_LISTED_ERRORS), so no answer
 * grows with the input. `stopped`: the check ended after the problems it found
 * (http/validation.ts MAX_FOUND_ERRORS), so there may be more than `errors` and
 * `errorsNotShown` count.
 */
export function validationError(errors: FieldError[], opts: { stopped?: boolean } = {}): ApiError {
  const dateError = errors.some((e) => e.code === 'INVALID_DATE_FORMAT');
  const code: ErrorCode = dateError ? 'INVALID_DATE_FORMAT' : 'VALIDATION_ERROR';
  const first = errors[0];
  const shown =
    errors.length > MAX_LISTED_ERRORS
      ? (dateError ? [...errors.filter((e) => e.code === 'INVALID_DATE_FORMAT'), ...errors.filter((e) => e.code !== 'INVALID_DATE_FORMAT')] : errors).slice(
          0,
          MAX_LISTED_ERRORS,
        )
      : errors;
  const message = opts.stopped
    ? `More than ${errors.length} problems with the fields; the check stopped there. The first ${shown.length} are listed in errors.`
    : errors.length === 1 && first
      ? `${first.field}: ${first.message}`
      : errors.length > MAX_LISTED_ERRORS
        ? `${errors.length} problems with the fields; the first ${MAX_LISTED_ERRORS} are listed in errors.`
        : `${errors.length} fields break the rules; see errors.`;
  const extra: Record<string, unknown> = { errors: shown };
  if (errors.length > shown.length) extra.errorsNotShown = errors.length - shown.length;
  return new ApiError(code, { message, extra });
}

export function fieldError(field: string, code: FieldErrorCode, message?: string): FieldError {
  return { field, code, message: message ?? FIELD_ERRORS[code] };
}
