import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomId } from '../../src/domain/ids.js';
import { runRetention } from '../../src/jobs/retention.js';
import { hotelBySlug, listHotels, listKeys, listStaff, resetKeyLimits, revokeKeys } from '../../src/operations.js';
import { eraseGuest, exportGuest } from '../../src/privacy/guest-privacy.js';
import { recentDeliveries, removeEndpoint, setEnabled } from '../../src/webhooks/endpoints.js';
import { addStaffUser, DashboardClient, hotelIdOf, STAFF_PASSWORD } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer, pmsBase } from '../support/harness.js';
import { startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { scaled } from '../support/test-run.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

// The partition key (docs/deployment.md, "The partition key"): a sharded PostgreSQL (Citus)
// can distribute every hotel-owned table by hotel_id only if every statement on those
// tables names its hotel. This file starts a PostgreSQL cluster of its own that logs every
// statement, drives a broad workload through the real interfaces (the PMS API, the
// dashboard, the webhook dispatcher, the operator's commands and the retention jobs), then
// reads the server's log and fails, printing them, on the statements that touch a
// hotel-owned table without constraining its hotel, except the fleet-wide ones named in
// FLEET_WIDE below.

const PREFIX = '@@innsync@@';

/**
 * The hotel-owned tables and the column that names their hotel. Tables with a hotel_id are
 * keyed by it. Four have none and belong to a hotel through a parent row (db/schema.ts,
 * db/migrations.ts); until they get a hotel_id, a statement on them must name that parent
 * key, which fixes one hotel (a co-located distribution would need the hotel_id itself:
 * docs/deployment.md, "The partition key").
 */
const HOTEL_KEY: Record<string, string[]> = {
  api_keys: ['hotel_id'],
  guests: ['hotel_id'],
  room_assignments: ['hotel_id'],
  activity_log: ['hotel_id'],
  request_log: ['hotel_id'],
  request_log_bodies: ['hotel_id'],
  request_log_guest_keys: ['hotel_id'], // SQLite only
  staff_users: ['hotel_id'],
  staff_sessions: ['hotel_id'],
  webhook_endpoints: ['hotel_id'],
  webhook_events: ['hotel_id'],
  rooms: ['hotel_id'],
  access_log: ['hotel_id'],
  security_events: ['hotel_id'],
  staff_totp: ['hotel_id'],
  staff_recovery_codes: ['hotel_id'],
  display_pairing_codes: ['hotel_id'],
  paired_displays: ['hotel_id'],
  // No hotel_id: owned through a parent (TODO schema: add hotel_id to co-locate them).
  idempotency_records: ['api_key_id'], // api_keys.id
  key_checklist: ['pair_id'], // api_keys.pair_id
  key_checklist_pending: ['pair_id'], // api_keys.pair_id
  webhook_deliveries: ['endpoint_id', 'event_id'], // webhook_endpoints.id, webhook_events.id
};

interface LoggedStatement {
  text: string;
}

/** Every statement the server logged after `offset` (bytes), in order: `statement:` (simple protocol) and `execute <name>:` (extended) lines. */
function loggedStatements(logPath: string, offset: number, database: string): LoggedStatement[] {
  const text = fs.readFileSync(logPath).subarray(offset).toString('utf8');
  const out: LoggedStatement[] = [];
  // One entry per line that starts with the prefix; lines without it continue the entry before (a multi-line statement).
  for (const entry of text.split(PREFIX)) {
    const m = /^([^@]*)@@\d+@@\s*(\w+):\s+([\s\S]*)$/.exec(entry);
    if (!m || m[1] !== database || m[2] !== 'LOG') continue;
    const s = /^(?:statement|execute [^:]+):\s*([\s\S]*)$/.exec(m[3] ?? '');
    if (s?.[1]) out.push({ text: s[1].replace(/\s+/g, ' ').trim() });
  }
  return out;
}

/** Words that may follow a table's name but are no alias. */
const NOT_ALIAS = new Set(
  'as on where set values inner left right full cross join using order group limit for returning union select default on partition when then and or'.split(' '),
);

interface TableRef {
  table: string;
  /** The names its columns may be qualified with: its own and its alias. */
  names: Set<string>;
  constrained: boolean;
  /** `hotel_id is null` on it: rows of no hotel (a distributed table cannot hold them). */
  noHotel: boolean;
}

const IDENT = '"?([a-z_][a-z0-9_]*)"?';

/**
 * Which hotel-owned tables `sql` names that it does not confine to named hotels (empty: it
 * is confined). The rule, on the SQL as logged (Kysely's and the raw `sql` of the
 * repositories are regular enough; see docs/architecture.md for the raw ones):
 *
 * - A table is named after from / join / into / update / table / partition of, with an
 *   optional alias (`"guests" as "g"`, `webhook_deliveries d`); `request_log_YYYYMMDD` is
 *   request_log. Names that are no hotel-owned table (CTEs, hotels, rate_limit_counters)
 *   are not checked.
 * - A reference is confined when a predicate `<name>.<key> = $n | = '…' | in ($n…) | = any(…)`
 *   holds for it, `<name>` its table or alias, `<key>` its column in HOTEL_KEY; an
 *   unqualified `<key> = $n` counts for each reference whose table has that key (Kysely
 *   qualifies columns whenever a statement names more than one table). An `or` of such
 *   predicates (a batch over several hotels) counts: the statement reaches the hotels it
 *   names, not the fleet.
 * - An insert's target is confined when its column list holds the key: each row carries its hotel.
 * - A reference joined by an equality of two qualified columns (`a.x = b.y`, in a join's
 *   `on`, a `where` or a correlated subquery) to a confined one is confined ("a join through
 *   a table that does"). `hotels.id = $n` confines as a hotel predicate.
 * - `<name>.hotel_id is null` leaves that reference unconfined whatever else holds: those
 *   rows belong to no hotel.
 *
 * The parameters' values are logged apart and not read: `$1` is taken to hold one hotel.
 */
function unconfinedTables(sql: string): string[] {
  const text = sql.toLowerCase();
  const refs: TableRef[] = [];
  const named = new RegExp(
    `\\b(from|join|into|update|table(?:\\s+if\\s+(?:not\\s+)?exists)?|partition\\s+of)\\s+(?:only\\s+)?${IDENT}(?:\\s+(?:as\\s+)?${IDENT})?`,
    'g',
  );
  let hotelsNames = new Set<string>();
  for (const m of text.matchAll(named)) {
    const table = (m[2] ?? '').replace(/^request_log_\d{8}$/, 'request_log');
    const alias = m[3] !== undefined && !NOT_ALIAS.has(m[3]) ? m[3] : undefined;
    if (table === 'hotels') hotelsNames = new Set([...hotelsNames, 'hotels', ...(alias ? [alias] : [])]);
    if (!(table in HOTEL_KEY)) continue;
    const names = new Set([table, ...(alias ? [alias] : [])]);
    const ref: TableRef = { table, names, constrained: false, noHotel: false };
    if (m[1] === 'into') {
      const columns = /^\s*\(([^)]*)\)/.exec(text.slice((m.index ?? 0) + m[0].length))?.[1] ?? '';
      ref.constrained = (HOTEL_KEY[table] ?? []).some((key) => new RegExp(`"?\\b${key}\\b"?`).test(columns));
    }
    refs.push(ref);
  }
  if (refs.length === 0) return [];
  const refsNamed = (qualifier: string | undefined, column: string): TableRef[] =>
    qualifier === undefined
      ? refs.filter((r) => HOTEL_KEY[r.table]?.includes(column))
      : refs.filter((r) => r.names.has(qualifier) && HOTEL_KEY[r.table]?.includes(column));
  const predicate = new RegExp(`(?:${IDENT}\\.)?${IDENT}\\s*(?:=\\s*(?:\\$\\d+|'[^']*'|any\\s*\\()|in\\s*\\(\\s*(?:\\$\\d+|'))`, 'g');
  let hotelPinned = false;
  for (const m of text.matchAll(predicate)) {
    if (m[1] !== undefined && hotelsNames.has(m[1]) && m[2] === 'id') hotelPinned = true;
    for (const r of refsNamed(m[1], m[2] ?? '')) r.constrained = true;
  }
  for (const m of text.matchAll(new RegExp(`(?:${IDENT}\\.)?"?hotel_id"?\\s+is\\s+null`, 'g'))) {
    for (const r of refsNamed(m[1], 'hotel_id')) r.noHotel = true;
  }
  // Joins: equalities of two qualified columns, followed until nothing changes.
  const edges = [...text.matchAll(new RegExp(`${IDENT}\\.${IDENT}\\s*=\\s*${IDENT}\\.${IDENT}`, 'g'))].map((m) => [m[1] ?? '', m[3] ?? '']);
  const confined = (name: string): boolean => (hotelPinned && hotelsNames.has(name)) || refs.some((r) => r.names.has(name) && r.constrained && !r.noHotel);
  for (let changed = true; changed;) {
    changed = false;
    for (const [a, b] of edges) {
      for (const [from, to] of [
        [a, b],
        [b, a],
      ] as const) {
        if (!confined(from ?? '')) continue;
        for (const r of refs) {
          if (r.names.has(to ?? '') && !r.constrained) {
            r.constrained = true;
            changed = true;
          }
        }
      }
    }
  }
  return [...new Set(refs.filter((r) => !r.constrained || r.noHotel).map((r) => r.table))];
}

/**
 * The statements allowed to reach every hotel, each with why. `match` is tested against
 * the statement as logged (whitespace collapsed). A sharded database runs them on every
 * shard (a multi-shard statement), which suits work done for the whole fleet at once.
 * Every entry must be met by the workload, so the list stays short and true.
 */
const FLEET_WIDE: Array<{ name: string; reason: string; match: RegExp }> = [
  // Retention and partition maintenance (jobs/retention.ts: `innsync purge` and the hourly run).
  {
    name: 'partitions: the next days',
    reason: "ensurePartitionsAhead creates the request log's coming days for every hotel at once (db/partitions.ts)",
    match: /^create table if not exists "request_log_\d{8}" partition of "request_log"/,
  },
  {
    name: 'retention: drop a past day',
    reason: 'a day of the request log past 90 days goes whole, every hotel\'s rows of it (docs/architecture.md, "Retention by the day")',
    match: /^(select count\(\*\) as n from|drop table) "request_log_\d{8}"$/,
  },
  {
    name: 'retention: expired idempotency records',
    reason: 'records past their 24 hours are found by expires_at across hotels, a batch at a time (db/batches.ts)',
    match:
      /^delete from idempotency_records where \(api_key_id, idempotency_key\) in \(select api_key_id, idempotency_key from idempotency_records where expires_at < /,
  },
  {
    name: 'retention: webhook history',
    reason: 'events past 30 days are found by created_at across hotels and deleted by the ids found, with their deliveries',
    match: /^(select "id" from "webhook_events" where "created_at" < \$\d+ order by "created_at" limit|delete from "webhook_events" where "id" in \()/,
  },
  {
    name: 'retention: unused request-log bodies',
    reason: 'bodies no row names and last used past 90 days are found across hotels; each is then deleted by (hotel_id, sha256)',
    match: /^select "b"\."hotel_id", "b"\."sha256" from "request_log_bodies" as "b" where "b"\."last_used_at" < \$\d+ and \(not exists/,
  },
  {
    name: 'retention: guests to anonymise',
    reason: "stays checked out past GUEST_RETENTION_DAYS are found across hotels; each hotel's are then anonymised by its hotel_id",
    match:
      /^select "id", "hotel_id", "pms_guest_id", "checked_out_at" from "guests" where "status" = \$\d+ and "anonymised_at" is null and "checked_out_at" <= /,
  },
  {
    name: 'retention: expired dashboard sessions',
    reason: 'sessions past their idle or absolute expiry are deleted across hotels',
    match: /^delete from "staff_sessions" where \(\("last_seen_at" < /,
  },
  {
    name: 'retention: the access trail',
    reason: 'access entries and security events past ACCESS_LOG_RETENTION_DAYS are found by created_at across hotels, a batch at a time (db/batches.ts)',
    match: /^delete from "(access_log|security_events)" where "id" in \(select "id" from "(access_log|security_events)" where "created_at" < /,
  },
  {
    name: 'retention: display pairings',
    reason: 'pairings unused for 90 days and pairing codes past their expiry are deleted across hotels (docs/dashboard.md, "Second factors")',
    match: /^delete from "(paired_displays|display_pairing_codes)" where "(last_used_at|expires_at)" <= \$\d+$/,
  },
  // The webhook dispatcher: one queue for the fleet (webhooks/dispatcher.ts, db/repositories/webhook.repository.ts).
  {
    name: 'dispatcher: anything due',
    reason: 'the dispatcher looks for due deliveries of every hotel before it claims',
    match: /^select "id" from "webhook_deliveries" where "status" = \$\d+ and "next_attempt_at" <= /,
  },
  {
    name: 'dispatcher: claim',
    reason: "claimDueDeliveries takes the heads of every hotel's endpoint queues, at most WEBHOOK_MAX_ENDPOINTS_PER_HOTEL a hotel",
    match: /^with busy as \( select e\.hotel_id, count\(\*\) as n from webhook_deliveries d join webhook_endpoints e/,
  },
  {
    name: 'dispatcher: what it claimed',
    reason: 'the deliveries one claim took, of any hotels, read with their endpoints and events by their ids',
    match: /^select "d"\."id", "d"\."endpoint_id", .* from "webhook_deliveries" as "d" .* where "d"\."id" in \([^)]*\) and "d"\."claimed_by" = \$\d+$/,
  },
  // The operator's commands name a row by its id, whatever its hotel (src/cli: README.md, "Operating it").
  {
    name: 'operator: a key pair by its id',
    reason: 'innsync key revoke / reset-limits <keyId>: rare, one multi-shard statement each (revoke finds the pair, then revokes it by its hotel_id)',
    match:
      /^(select "api_keys"\."hotel_id", "api_keys"\."revoked_at", .* from "api_keys" where "pair_id" = \$\d+ and "mode" = \$\d+|update "api_keys" set "rate_limits_reset_at" = \$\d+ where "pair_id" = \$\d+ returning "id")$/,
  },
  {
    name: 'operator: a webhook endpoint by its id',
    reason: 'innsync webhook … <endpointId>: the endpoint is found across hotels, then changed by its hotel_id',
    match: /^select \* from "webhook_endpoints" where "id" = \$\d+$/,
  },
  // TODO: real requests that name no hotel; each needs more than a filter (docs/deployment.md, "The partition key").
  {
    name: 'TODO auth: an API key by its hash',
    reason: 'the request names its hotel by slug, not id, and key_hash is unique across hotels (db/repositories/api-key.repository.ts findActiveKeyByHash)',
    match:
      /^select "api_keys"\."id", .* from "api_keys" inner join "hotels" on "hotels"\."id" = "api_keys"\."hotel_id" where "api_keys"\."key_hash" = \$\d+ and "api_keys"\."revoked_at" is null$/,
  },
  {
    name: 'TODO login: staff accounts by e-mail',
    reason: 'the login form names no hotel; one e-mail may hold accounts at several hotels (db/repositories/staff.repository.ts findLoginAccounts)',
    match:
      /^select "staff_users"\."id", .* from "staff_users" inner join "hotels" on "hotels"\."id" = "staff_users"\."hotel_id" where "staff_users"\."email" = \$\d+ and "staff_users"\."deactivated_at" is null/,
  },
  {
    name: 'TODO session: by its cookie',
    reason: 'the cookie holds a token only; its hotel is learnt from the row (db/repositories/staff.repository.ts findSession)',
    match:
      /^select "staff_sessions"\."id", .* from "staff_sessions" inner join "staff_users" on "staff_users"\."id" = "staff_sessions"\."user_id" inner join "hotels" on "hotels"\."id" = "staff_sessions"\."hotel_id" where "staff_sessions"\."id" = \$\d+$/,
  },
  {
    name: 'TODO request log: rows of no hotel',
    reason: 'requests no valid key sent are kept with hotel_id null and found by slug (the explorer\'s "sender: none", a row\'s detail)',
    match:
      /^select .* from "request_log" where (\("hotel_id" is null and "slug" = \$\d+\)|"id" = \$\d+ and \("hotel_id" = \$\d+ or \("hotel_id" is null and "slug" = \$\d+\)\))/,
  },
  {
    name: 'TODO erasure and export: bodies by guest key',
    reason: 'the GIN index is read in a materialized CTE and the hotel applied after it, on purpose (docs/architecture.md, "Request log storage")',
    match:
      /with "by_keys" as materialized \(select "g"\."hotel_id", "g"\."sha256" from "request_log_bodies" as "g" where "g"\."guest_keys" && cast\(\$\d+ as bigint\[\]\)\)/,
  },
];

/** The answer, after checking that it is a success (else the test fails with its body). */
async function ok<T extends { status: number; text: string }>(answer: Promise<T>): Promise<T> {
  const res = await answer;
  if (res.status < 200 || res.status > 299) throw new Error(`expected a success, got ${res.status}: ${res.text}`);
  return res;
}

describe('the rule that tells a statement confined to named hotels', () => {
  it.each([
    ['select * from "guests" where "hotel_id" = $1 and "id" = $2', []],
    ['select * from "guests" where "id" = $1', ['guests']],
    ['update "rooms" set "floor" = $1 where "hotel_id" = $2 and "id" = $3', []],
    ['delete from "guests" where "hotel_id" in ($1, $2)', []],
    ['insert into "guests" ("id", "hotel_id") values ($1, $2)', []],
    ['insert into "idempotency_records" ("idempotency_key") values ($1)', ['idempotency_records']],
    ['select "g".* from "guests" as "g" inner join "room_assignments" as "a" on "a"."guest_id" = "g"."id" where "a"."hotel_id" = $1', []],
    [
      'select * from "room_assignments" inner join "guests" on "guests"."id" = "room_assignments"."guest_id" where "guests"."status" = $1',
      ['room_assignments', 'guests'],
    ],
    ['select * from "request_log" where "id" = $1 and ("hotel_id" = $2 or ("hotel_id" is null and "slug" = $3))', ['request_log']],
    ['select * from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.hotel_id = $1', []],
    ['drop table "request_log_20261127"', ['request_log']],
    ['select * from "hotels" where "slug" = $1', []],
  ])('%s → unconfined %j', (sql, tables) => {
    expect(unconfinedTables(sql)).toEqual(tables);
  });
});

describe.skipIf(!testEngines().includes('postgres'))('the partition key: every statement on a hotel-owned table names its hotel (postgres)', () => {
  let cluster: PostgresCluster;
  let t: TestServer;
  let offset = 0;
  let database = '';
  let closed = false;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    cluster = await startPostgresCluster({ settings: ['log_statement=all', `log_line_prefix=${PREFIX}%d@@%p@@`] });
    t = await startTestServer('postgres', { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', GUEST_RETENTION_DAYS: '30' }, { pgAdminUrl: cluster.adminUrl });
    database = new URL(t.config.databaseUrl ?? '').pathname.slice(1);
    // Migrations ran before this point: schema work, applied once per database (in Citus, DDL goes to every shard).
    offset = fs.statSync(cluster.logPath).size;
  });
  afterAll(async () => {
    await receiver.close();
    if (!closed) await t?.close();
    cluster?.stop();
  });

  it(
    'a broad workload: every statement on a hotel-owned table constrains hotel_id, but for the named fleet-wide ones',
    async () => {
      const db = t.server.database.db;
      const base = `${t.pmsBase}`;
      const otherSlug = `other-${randomId(6).toLowerCase()}`;
      const other = await t.addHotel(otherSlug);

      // The PMS API: check-ins, an update, a room move, a replay, a conflict, a check-out, a sync, the guest list.
      const ada = guest({ roomNumber: '101' });
      const bob = guest({ roomNumber: '102', lastName: 'Babbage', email: 'bob@example.org' });
      const cyd = guest({ roomNumber: '103' });
      for (const g of [ada, bob, cyd]) await ok(t.post(`${base}/guests/checkin`, g));
      const replayKey = uniqueKey();
      const dan = guest({ roomNumber: '104' });
      await ok(t.post(`${base}/guests/checkin`, dan, { idempotencyKey: replayKey }));
      expect((await t.post(`${base}/guests/checkin`, dan, { idempotencyKey: replayKey })).headers['idempotent-replayed']).toBe('true');
      expect((await t.post(`${base}/guests/checkin`, guest({ roomNumber: '101' }))).status).toBe(409);
      await ok(t.post(`${base}/guests/checkin`, guest(), { key: t.keys.test }));
      await ok(t.post(`${base}/guests/update`, { pmsGuestId: ada.pmsGuestId, phone: '+441234567' }));
      await ok(t.post(`${base}/guests/update`, { pmsGuestId: ada.pmsGuestId, roomNumber: '201' }));
      await ok(t.post(`${base}/guests/checkout`, { pmsGuestId: bob.pmsGuestId }));
      const eve = guest({ roomNumber: '105' });
      const synced = await ok(t.post(`${base}/guests/sync`, { syncMode: 'full', guests: [{ ...ada, roomNumber: '202' }, cyd, eve] }));
      // Each phase of a sync: dan checked out, ada moved, eve checked in.
      expect(JSON.stringify(synced.body)).toMatch(/"checkedIn":1,"updated":1,"checkedOut":1/);
      await ok(t.api('GET', `${base}/guests`));
      await ok(t.api('GET', `${base}/guests?pmsGuestId=${encodeURIComponent(cyd.pmsGuestId as string)}`));
      expect((await t.api('GET', `${base}/guests`, { key: 'pms_live_not-a-key' })).status).toBe(401);
      expect((await t.api('GET', `${t.pmsBase}/nothing-here`)).status).toBe(404);
      // The other hotel works too, so its rows stand beside the first one's.
      await ok(t.post(`${pmsBase(otherSlug)}/guests/checkin`, guest({ roomNumber: '101' }), { key: other.live }));

      // The dashboard: an admin and a receptionist.
      const adminEmail = 'admin@partition.example';
      const adminId = (await addStaffUser(db, t.slug, adminEmail, 'admin')).id;
      const admin = await DashboardClient.loggedIn(t, adminEmail);
      await ok(admin.get('/session'));
      const board = await ok(admin.get('/guests'));
      const ids = (board.body.guests as Array<{ id: string }>).map((g) => g.id);
      await ok(admin.get(`/guests?ids=${ids.slice(0, 2).join(',')}`));
      await ok(admin.get(`/guests/${ids[0]}`));
      const walkIn = await ok(
        admin.post('/guests', { lastName: 'Walker', firstName: 'Wanda', roomNumber: '301', checkInDate: '2026-11-23', checkOutDate: '2026-11-26' }),
      );
      const walkInId = walkIn.body.guest.id as string;
      await ok(admin.patch(`/guests/${walkInId}`, { roomNumber: '302', phone: '+3312345' }));
      await ok(admin.post(`/guests/${walkInId}/checkout`, {}));
      await ok(admin.get('/activity'));
      await ok(admin.get('/activity?actorType=pms&limit=5'));
      await ok(admin.get(`/activity?guest=${encodeURIComponent('Lovelace')}`));
      const events = await admin.events();
      events.close();

      // Keys, the go-live checklist, the request explorer.
      await ok(admin.get('/keys'));
      const issued = await ok(admin.post('/keys'));
      await ok(admin.get(`/keys/${t.keys.keyId}/checklist`));
      await ok(admin.post(`/keys/${issued.body.keyId as string}/revoke`));
      await vi.waitFor(async () => expect((await admin.get('/requests')).body.requests.length).toBeGreaterThan(5), { timeout: scaled(10_000) });
      const requests = await ok(admin.get('/requests?status=2xx&endpoint=checkin&mode=live'));
      await ok(admin.get('/requests?sender=none'));
      await ok(admin.get(`/requests/${requests.body.requests[0].id as string}`));

      // Staff and the hotel's settings.
      await ok(admin.get('/users'));
      const desk = await ok(admin.post('/users', { email: 'desk@partition.example', role: 'receptionist', password: STAFF_PASSWORD }));
      await ok(admin.patch('/hotel', { timeZone: 'Europe/Berlin' }));
      const receptionist = await DashboardClient.loggedIn(t, 'desk@partition.example');
      await ok(receptionist.get('/guests'));
      // My account: the sessions, ending them, the password (docs/dashboard.md, "My account").
      const sessions = await ok(receptionist.get('/account/sessions'));
      await DashboardClient.loggedIn(t, 'desk@partition.example');
      await ok(receptionist.post('/account/sessions/end-others', {}));
      await ok(receptionist.post(`/account/sessions/${sessions.body.sessions[0].id as string}/end`, {}));
      const again = await DashboardClient.loggedIn(t, 'desk@partition.example');
      await ok(again.post('/account/password', { currentPassword: STAFF_PASSWORD, newPassword: 'ochre-pelican-tundra-31' }));
      await ok(admin.post(`/users/${desk.body.user.id as string}/end-sessions`, {}));
      await ok(admin.post(`/users/${desk.body.user.id as string}/deactivate`));

      // The room list.
      await ok(admin.post('/rooms/import', { csv: 'room,floor,type\n101,1,double\n102,1,single\n201,2,suite\n' }));
      const room = await ok(admin.post('/rooms', { roomNumber: '999', floor: '9', type: null, outOfOrderReason: null }));
      await ok(admin.patch(`/rooms/${room.body.room.id as string}`, { outOfOrderReason: 'water damage' }));
      await ok(admin.post(`/rooms/${room.body.room.id as string}/remove`));
      const unlisted = await ok(admin.get('/rooms/unlisted'));
      await ok(admin.post('/rooms/adopt', { roomNumbers: unlisted.body.roomNumbers }));
      await ok(admin.get('/rooms'));

      // Webhooks: an endpoint, the dispatcher delivering the roster's events and a test event, and the endpoint's management.
      const url = await receiver.listen();
      const endpoint = (await admin.post('/webhooks', { url })).body.endpoint;
      receiver.trust(endpoint.secret as string);
      await ok(t.post(`${base}/guests/checkin`, guest({ roomNumber: '106' })));
      await ok(admin.post(`/webhooks/${endpoint.endpointId as string}/test`));
      await vi.waitFor(() => expect(receiver.accepted().length).toBeGreaterThanOrEqual(2), { timeout: scaled(15_000) });
      await ok(admin.get('/webhooks'));
      const deliveries = await ok(admin.get(`/webhooks/${endpoint.endpointId as string}/deliveries`));
      const deliveryId = deliveries.body.deliveries[0].id as string;
      await ok(admin.post(`/webhooks/${endpoint.endpointId as string}/deliveries/${deliveryId}/resend`));
      const rotated = await ok(admin.post(`/webhooks/${endpoint.endpointId as string}/rotate-secret`));
      receiver.trust(endpoint.secret as string, rotated.body.endpoint.secret as string);
      await ok(admin.post(`/webhooks/${endpoint.endpointId as string}/disable`));
      await ok(admin.post(`/webhooks/${endpoint.endpointId as string}/enable`));
      const second = (await admin.post('/webhooks', { url, events: ['guest.checked_out'] })).body.endpoint;
      await ok(admin.post(`/webhooks/${second.endpointId as string}/remove`));

      // Privacy: a checked-out guest's export and erasure (the dashboard), another's through the operator's commands.
      const hotel = await hotelBySlug(db, t.slug);
      const bobRow = await db
        .selectFrom('guests')
        .select('id')
        .where('hotel_id', '=', hotel.id)
        .where('pms_guest_id', '=', bob.pmsGuestId as string)
        .executeTakeFirstOrThrow();
      await ok(admin.get(`/guests/${bobRow.id}/export`));
      await ok(admin.post(`/guests/${bobRow.id}/erase`, {}));
      await exportGuest(db, hotel, { guestId: walkInId });
      await eraseGuest(db, hotel, { guestId: walkInId }, { type: 'system', id: null, mode: null });
      // The access trail and the security events (a failed sign-in of the admin's account), each filter.
      expect((await new DashboardClient(t).login(adminEmail, 'not-the-password')).status).toBe(401);
      await ok(admin.get(`/access-trail?staff=${adminId}&guest=${bobRow.id}&day=2026-11-27`));
      await ok(admin.get('/access-trail?limit=1'));
      await ok(admin.get('/security-events?kind=login.failed'));
      // Front-desk displays: a pairing code and the list of paired displays.
      await ok(admin.post('/displays/pairing-code', { label: 'Lobby' }));
      await ok(admin.get('/displays'));
      await ok(admin.post('/logout'));

      // The operator's commands (src/cli: the same functions the innsync command calls).
      await listHotels(db);
      await listKeys(db, t.slug);
      await listStaff(db, t.slug);
      await resetKeyLimits(db, t.keys.keyId);
      await recentDeliveries(db, null, endpoint.endpointId as string);
      await setEnabled(db, null, endpoint.endpointId as string, false);
      await removeEndpoint(db, null, endpoint.endpointId as string);
      await revokeKeys(db, other.keyId);
      expect(await hotelIdOf(db, t.slug)).toBe(hotel.id);

      // The retention jobs (innsync purge, and hourly), run as if 100 days had passed, so each finds rows to remove.
      await runRetention(db, 30, Date.now() + 100 * 24 * 60 * 60 * 1000);

      await t.close();
      closed = true;
      const statements = loggedStatements(cluster.logPath, offset, database);
      expect(statements.length).toBeGreaterThan(200);
      const used = new Set<string>();
      const offending = new Map<string, string[]>();
      for (const { text } of statements) {
        const tables = unconfinedTables(text);
        if (tables.length === 0) continue;
        const allowed = FLEET_WIDE.find((a) => a.match.test(text));
        if (allowed) used.add(allowed.name);
        else offending.set(text.replace(/\$\d+/g, '$n'), tables);
      }
      const report = [...offending].map(([text, tables]) => `- [${tables.join(', ')}] ${text}`);
      expect(report, `statements on hotel-owned tables that name no hotel:\n${report.join('\n')}`).toEqual([]);
      expect(
        FLEET_WIDE.map((a) => a.name).filter((name) => !used.has(name)),
        'fleet-wide entries the workload never met',
      ).toEqual([]);
    },
    scaled(180_000),
  );
});
