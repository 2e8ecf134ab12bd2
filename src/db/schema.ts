import type { ColumnType, Generated } from 'kysely';

/** A nullable column that inserts may leave out (added by a later migration). */
type Optional<T> = ColumnType<T | null, T | null | undefined, T | null>;

// Timestamps are ISO 8601 UTC strings in both engines: they sort and compare as text,
// and rows read from SQLite and PostgreSQL look the same to the code above.

interface HotelTable {
  id: string;
  slug: string;
  name: string;
  created_at: string;
  /** The number of the hotel's last outgoing event: events are numbered in commit order. */
  event_seq: Generated<number>;
  /** The hotel's IANA time zone: its "today" for arrivals and departures. */
  time_zone: Generated<string>;
  /** 1: every staff sign-in needs a second factor (docs/dashboard.md, "Second factors"). */
  require_second_factor: Generated<number>;
}

/** One row per key; a live and a test key share a `pair_id` (the key id operators see). */
interface ApiKeyTable {
  id: string;
  pair_id: string;
  hotel_id: string;
  mode: 'live' | 'test';
  /** SHA-256 of the plain key, hex. The plain key is never stored. */
  key_hash: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  /** The last reset of the key's rate-limit counts (innsync key reset-limits); counts before it are forgotten. */
  rate_limits_reset_at: string | null;
  /** JSON list of the CIDR blocks the key may be used from; null: any address. The same on both rows of a pair. */
  allowed_networks: string | null;
  /** The last day (YYYY-MM-DD, UTC) the key works; null: until revoked. */
  expires_on: string | null;
  /** 1: the pair may only read (GET /guests). */
  read_only: Generated<number>;
}

export interface GuestTable {
  id: string;
  hotel_id: string;
  source: 'pms' | 'receptionist';
  pms_guest_id: string | null;
  status: 'active' | 'checked_out';
  first_name: string | null;
  last_name: string;
  phone: string | null;
  email: string | null;
  language: string | null;
  nationality: string | null;
  adults: number | null;
  children: number | null;
  check_in_date: string;
  check_out_date: string;
  /** The current (or last) room; the invariant lives in room_assignments. */
  room_number: string;
  created_at: string;
  updated_at: string;
  checked_out_at: string | null;
  /** Set when the guest's personal data was removed (retention or erasure); the stay itself remains. */
  anonymised_at: Optional<string>;
}

/** History of room assignments; the active one has `released_at` null. */
interface RoomAssignmentTable {
  id: string;
  hotel_id: string;
  guest_id: string;
  room_number: string;
  assigned_at: string;
  released_at: string | null;
}

interface ActivityLogTable {
  id: string;
  hotel_id: string;
  created_at: string;
  actor_type: 'pms' | 'staff' | 'system';
  /** Key pair id for `pms`, user id for `staff`. */
  actor_id: string | null;
  actor_mode: 'live' | 'test' | null;
  action: string;
  guest_id: string | null;
  pms_guest_id: string | null;
  /** JSON: the change set `{ field: { from, to } }` or a summary. */
  changes: string | null;
}

interface IdempotencyRecordTable {
  api_key_id: string;
  idempotency_key: string;
  fingerprint: string;
  /** Null only inside the transaction that inserted the record; committed records hold the response. */
  status_code: number | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
}

export interface RequestLogTable {
  id: string;
  created_at: string;
  hotel_id: string | null;
  slug: string | null;
  api_key_id: string | null;
  key_mode: 'live' | 'test' | null;
  method: string;
  path: string;
  status_code: number;
  /** The stored request and response bodies, by their address in request_log_bodies (null: none kept). */
  request_sha256: Optional<string>;
  response_sha256: Optional<string>;
  client_ip: string;
  user_agent: ColumnType<string | null, string | null | undefined, string | null>;
  duration_ms: number;
  idempotency_key: string | null;
  /** Full size of the body in bytes (null: none, or a row older than the cap). */
  request_bytes: Optional<number>;
  response_bytes: Optional<number>;
  /** Full size in bytes of the path and query, User-Agent, Idempotency-Key as sent when the row keeps them cut (null: stored whole; pms/request-log-fields.ts). */
  path_bytes: Optional<number>;
  user_agent_bytes: Optional<number>;
  idempotency_key_bytes: Optional<number>;
  /** An answer replayed from the idempotency store: the id of the request whose answer it is (null: not a replay, or a row older than the column). */
  replay_of: Optional<string>;
}

/**
 * A request-log body, stored once per hotel whatever the number of rows that name it
 * (pms/request-log-body.ts): its text's UTF-8 bytes, brotli-compressed, addressed by their SHA-256.
 */
interface RequestLogBodyTable {
  hotel_id: string;
  sha256: string;
  /** Size of the text in bytes, uncompressed. */
  bytes: number;
  body: Buffer;
  /** The newest created_at of the rows that named it: the purge takes it once that is past retention and no row names it. */
  last_used_at: string;
  /** PostgreSQL only: the keys of the guests its text names (pms/request-log-guests.ts `guestKey`), a GIN index; decimal strings as read. */
  guest_keys: ColumnType<string[], string[] | undefined, never>;
}

/**
 * SQLite: a guest a stored body names, by its 64-bit key (pms/request-log-guests.ts
 * `guestKey`): erasure and export find the guest's bodies by it. PostgreSQL keeps the keys
 * in the body's row instead (`request_log_bodies.guest_keys`, a GIN index).
 */
interface RequestLogGuestKeyTable {
  key: bigint;
  hotel_id: string;
  sha256: string;
}

/** One behaviour a key has shown, first seen in the request `request_id` (pms/key-checklist.ts). */
export interface KeyChecklistTable {
  pair_id: string;
  mode: 'live' | 'test';
  item: string;
  shown_at: string;
  request_id: string;
}

/** A 409 (`conflict`) or 429 (`rate_limited`) answer waiting for the key's next request to that endpoint. */
export interface KeyChecklistPendingTable {
  pair_id: string;
  mode: 'live' | 'test';
  endpoint: string;
  kind: 'conflict' | 'rate_limited';
  at: string;
  /** conflict: SHA-256 of the refused request's body. */
  body_sha256: string | null;
  /** rate_limited: the answer's time plus its Retry-After. */
  allowed_at: string | null;
}

interface RateLimitCounterTable {
  bucket: string;
  window_start: number;
  count: Generated<number>;
}

interface StaffUserTable {
  id: string;
  hotel_id: string;
  email: string;
  role: 'admin' | 'receptionist';
  password_hash: string;
  created_at: string;
  deactivated_at: string | null;
  /** 1: the password does not sign this user in while they have a passkey (docs/dashboard.md, "Passkeys"). */
  passkeys_only: Generated<number>;
}

/** A staff login; `id` is the SHA-256 of the cookie's token (the token itself is never stored). */
interface StaffSessionTable {
  id: string;
  user_id: string;
  hotel_id: string;
  csrf_token: string;
  created_at: string;
  last_seen_at: string;
  /** 1 for a front-desk display session (read-only board, no idle expiry), else 0. */
  display: Generated<number>;
  /** The browser's User-Agent at sign-in, at most SESSION_USER_AGENT_MAX characters (migration 0025). */
  user_agent: ColumnType<string | null, string | null | undefined, string | null>;
  /** The client's address at sign-in, as the rate limits see it (migration 0025). */
  client_ip: ColumnType<string | null, string | null | undefined, string | null>;
  /** The passkey (staff_passkeys.id) this session was signed in with; null: the password. */
  passkey_id: Optional<string>;
  /** The pairing (paired_displays.id) a display session signed in through (migration 0027); null: none. */
  paired_display_id: Optional<string>;
  /** 'full', or a sign-in still waiting for its second factor ('second_factor') or its enrolment ('enrol'). */
  stage: Generated<'full' | 'second_factor' | 'enrol'>;
}

interface StaffPasskeyTable {
  id: string;
  hotel_id: string;
  user_id: string;
  /** base64url, as the browser sends it; unique over the table. */
  credential_id: string;
  /** The credential's COSE public key, base64url. */
  public_key: string;
  /** The signature counter the authenticator last reported. */
  counter: ColumnType<number | string, number, number>;
  /** JSON array of the transports the browser reported (usb, internal, hybrid, …). */
  transports: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}
interface StaffPasskeyChallengeTable {
  /** SHA-256 of the challenge (base64url as sent to the browser). */
  id: string;
  kind: 'register' | 'login';
  /** The session a registration's challenge belongs to; null for a sign-in's. */
  session_id: string | null;
  expires_at: string;
}

interface StaffTotpTable {
  user_id: string;
  hotel_id: string;
  /** Base32; the server needs it to compute the codes, so it is stored as is (never logged). */
  secret: string;
  created_at: string;
  confirmed_at: string | null;
  /** The time step of the last code accepted. */
  last_step: ColumnType<number | null, number | null, number | null>;
}

interface StaffRecoveryCodeTable {
  /** SHA-256 (hex) of the code as the user types it, upper-cased without separators. */
  code_hash: string;
  user_id: string;
  hotel_id: string;
  created_at: string;
}

interface DisplayPairingCodeTable {
  code_hash: string;
  hotel_id: string;
  created_by: string;
  created_at: string;
  expires_at: string;
  /** The name the admin gave the display to pair (migration 0027); null: none. */
  label: Optional<string>;
}

/** A front-desk display an admin paired (docs/dashboard.md, "Second factors"; migration 0027). */
interface PairedDisplayTable {
  /** The pairing's public id (`disp_…`). */
  id: string;
  /** SHA-256 of the device cookie's token. */
  token_hash: string;
  hotel_id: string;
  paired_by: string;
  label: Optional<string>;
  created_at: string;
  /** The pairing, then each display sign-in with the cookie; unused for 90 days, the pairing ends. */
  last_used_at: string;
}

export interface WebhookEndpointTable {
  id: string;
  hotel_id: string;
  url: string;
  /** JSON array of event types; null: every type. */
  event_types: string | null;
  /** The signing secret (`whsec_…`): kept in full, since every delivery is signed with it. */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  created_at: string;
  disabled_at: string | null;
  disabled_reason: string | null;
}

/** The outbox: one row per outgoing event, written in its change's transaction. */
interface WebhookEventTable {
  id: string;
  hotel_id: string;
  seq: number;
  type: string;
  payload: string;
  created_at: string;
}

interface WebhookDeliveryTable {
  id: string;
  endpoint_id: string;
  event_id: string;
  seq: number;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: Generated<number>;
  next_attempt_at: string;
  claimed_by: string | null;
  claimed_until: string | null;
  last_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  created_at: string;
  finished_at: string | null;
}

/** A room of the hotel's room list (no personal data); `out_of_order_reason` null: in order. */
interface RoomTable {
  id: string;
  hotel_id: string;
  room_number: string;
  floor: string | null;
  room_type: string | null;
  out_of_order_reason: string | null;
}

/** One view of a guest's personal data in the dashboard (docs/dashboard.md, "Access trail"). */
interface AccessLogTable {
  id: string;
  hotel_id: string;
  created_at: string;
  staff_user_id: string;
  client_ip: string | null;
  action: string;
  /** The guest whose data was shown, or null for a search. */
  guest_id: string | null;
  /** What a search asked for, or null. */
  search: string | null;
}

/** A security event of a staff account or a key (docs/dashboard.md, "Access trail"). */
interface SecurityEventTable {
  id: string;
  hotel_id: string;
  created_at: string;
  kind: string;
  actor_type: 'staff' | 'operator' | 'anonymous';
  /** The staff user who acted (`staff`), else null. */
  actor_id: string | null;
  /** The staff account the event concerns, if any. */
  subject_user_id: string | null;
  /** The key pair the event concerns, if any. */
  subject_key_pair_id: string | null;
  client_ip: string | null;
  /** JSON: what changed, with no secret and no guest data. */
  detail: string | null;
}

/** An operator's token of the provisioning API (docs/admin-api.md): kept as its SHA-256 only. */
interface OperatorTokenTable {
  id: string;
  name: string;
  token_sha256: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** One request of the provisioning API (docs/admin-api.md, "Request log"); no bodies. */
interface OperatorRequestLogTable {
  id: string;
  at: string;
  /** Null: no valid token. */
  token_id: string | null;
  method: string;
  /** The route's pattern (`/api/admin/v1/hotels/:slug`), not the path sent. */
  route: string;
  status: number;
  duration_ms: number;
  client_ip: string;
}

export interface Database {
  operator_tokens: OperatorTokenTable;
  operator_request_log: OperatorRequestLogTable;
  access_log: AccessLogTable;
  security_events: SecurityEventTable;
  rooms: RoomTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_events: WebhookEventTable;
  webhook_deliveries: WebhookDeliveryTable;
  hotels: HotelTable;
  api_keys: ApiKeyTable;
  guests: GuestTable;
  room_assignments: RoomAssignmentTable;
  activity_log: ActivityLogTable;
  idempotency_records: IdempotencyRecordTable;
  request_log: RequestLogTable;
  request_log_bodies: RequestLogBodyTable;
  request_log_guest_keys: RequestLogGuestKeyTable;
  staff_users: StaffUserTable;
  staff_sessions: StaffSessionTable;
  staff_passkeys: StaffPasskeyTable;
  staff_passkey_challenges: StaffPasskeyChallengeTable;
  rate_limit_counters: RateLimitCounterTable;
  key_checklist: KeyChecklistTable;
  key_checklist_pending: KeyChecklistPendingTable;
  staff_totp: StaffTotpTable;
  staff_recovery_codes: StaffRecoveryCodeTable;
  display_pairing_codes: DisplayPairingCodeTable;
  paired_displays: PairedDisplayTable;
}
