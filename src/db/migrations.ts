import { Migrator, PostgresAdapter, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { isLockTimeout } from './database.js';
import { createDayPartitions, daysAhead } from './partitions.js';
import { CliError } from '../errors.js';
import { newId } from '../domain/ids.js';
import { packBody } from '../pms/request-log-body.js';
import { guestKey, guestRefs, type GuestRefKind } from '../pms/request-log-guests.js';

// Migrations live in code (not files found at run time) so the built service and the
// tests apply exactly the same list. Never edit a released migration: add a new one.
const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('hotels')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('pair_id', 'text', (c) => c.notNull())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .addColumn('last_used_at', 'text')
        .execute();
      await db.schema.createIndex('api_keys_pair_idx').on('api_keys').column('pair_id').execute();
      await db.schema.createIndex('api_keys_hotel_idx').on('api_keys').column('hotel_id').execute();

      await db.schema
        .createTable('guests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('pms', 'receptionist')`))
        .addColumn('pms_guest_id', 'text')
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'checked_out')`))
        .addColumn('first_name', 'text')
        .addColumn('last_name', 'text', (c) => c.notNull())
        .addColumn('phone', 'text')
        .addColumn('email', 'text')
        .addColumn('language', 'text')
        .addColumn('nationality', 'text')
        .addColumn('adults', 'integer')
        .addColumn('children', 'integer')
        .addColumn('check_in_date', 'text', (c) => c.notNull())
        .addColumn('check_out_date', 'text', (c) => c.notNull())
        .addColumn('room_number', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('checked_out_at', 'text')
        .addCheckConstraint('guests_pms_id_ck', sql`(source = 'pms') = (pms_guest_id is not null)`)
        .execute();
      // Invariant: one active stay per pmsGuestId per hotel (held by the database).
      await sql`create unique index guests_active_pms_guest_uq on guests (hotel_id, pms_guest_id) where status = 'active'`.execute(db);
      await sql`create index guests_hotel_status_idx on guests (hotel_id, status)`.execute(db);

      await db.schema
        .createTable('room_assignments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('guest_id', 'text', (c) => c.notNull().references('guests.id'))
        .addColumn('room_number', 'text', (c) => c.notNull())
        .addColumn('assigned_at', 'text', (c) => c.notNull())
        .addColumn('released_at', 'text')
        .execute();
      // Invariant: at most one active guest per room, across both sources.
      await sql`create unique index room_assignments_active_room_uq on room_assignments (hotel_id, room_number) where released_at is null`.execute(db);
      await sql`create index room_assignments_guest_idx on room_assignments (guest_id)`.execute(db);

      await db.schema
        .createTable('activity_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('actor_type', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('actor_mode', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('guest_id', 'text')
        .addColumn('pms_guest_id', 'text')
        .addColumn('changes', 'text')
        .execute();
      await sql`create index activity_log_hotel_time_idx on activity_log (hotel_id, created_at)`.execute(db);

      await db.schema
        .createTable('idempotency_records')
        .addColumn('api_key_id', 'text', (c) => c.notNull())
        .addColumn('idempotency_key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('claim_token', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        // Invariant: one record per (API key, Idempotency-Key).
        .addPrimaryKeyConstraint('idempotency_records_pkey', ['api_key_id', 'idempotency_key'])
        .execute();
      await sql`create index idempotency_records_expiry_idx on idempotency_records (expires_at)`.execute(db);

      await db.schema
        .createTable('request_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('hotel_id', 'text')
        .addColumn('slug', 'text')
        .addColumn('api_key_id', 'text')
        .addColumn('key_mode', 'text')
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer', (c) => c.notNull())
        .addColumn('request_body', 'text')
        .addColumn('response_body', 'text')
        .addColumn('client_ip', 'text', (c) => c.notNull())
        .addColumn('user_agent', 'text')
        .addColumn('duration_ms', 'real', (c) => c.notNull())
        .addColumn('idempotency_key', 'text')
        .execute();
      await sql`create index request_log_created_idx on request_log (created_at)`.execute(db);
      await sql`create index request_log_hotel_time_idx on request_log (hotel_id, created_at)`.execute(db);

      await db.schema
        .createTable('staff_users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'receptionist')`))
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('deactivated_at', 'text')
        .execute();

      // Fixed-window counters shared by every instance (used with PostgreSQL).
      await db.schema
        .createTable('rate_limit_counters')
        .addColumn('bucket', 'text', (c) => c.notNull())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('rate_limit_counters_pkey', ['bucket', 'window_start'])
        .execute();
    },
  },
  '0002_dashboard_sessions': {
    async up(db: Kysely<unknown>) {
      // Staff sessions: the cookie holds a random token, the table only its SHA-256.
      await db.schema
        .createTable('staff_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('staff_users.id'))
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'text', (c) => c.notNull())
        .execute();
      await sql`create index staff_sessions_user_idx on staff_sessions (user_id)`.execute(db);
      await sql`create index activity_log_guest_idx on activity_log (guest_id)`.execute(db);
      await sql`create index request_log_slug_time_idx on request_log (slug, created_at)`.execute(db);
    },
  },
  '0003_idempotency_claim_in_transaction': {
    async up(db: Kysely<unknown>) {
      // The record is now inserted by the transaction that makes the change, so a
      // committed record always holds its response. Claims left in progress by the
      // earlier scheme (a request that never finished) block nothing any more.
      await sql`delete from idempotency_records where state <> 'done'`.execute(db);
      await db.schema.alterTable('idempotency_records').dropColumn('claim_token').execute();
      await db.schema.alterTable('idempotency_records').dropColumn('state').execute();
    },
  },
  '0004_personal_data': {
    async up(db: Kysely<unknown>) {
      // Request-log bodies are capped (docs/pms-interface.md,
      // "Request and activity logs"): the full sizes are kept beside them, and requests
      // not attributed to a hotel keep only their sizes.
      await db.schema.alterTable('request_log').addColumn('request_bytes', 'integer').execute();
      await db.schema.alterTable('request_log').addColumn('response_bytes', 'integer').execute();
      // GUEST_RETENTION_DAYS and erasure: when a guest's personal data was removed.
      await db.schema.alterTable('guests').addColumn('anonymised_at', 'text').execute();
      await sql`create index guests_checked_out_idx on guests (checked_out_at) where anonymised_at is null and status = 'checked_out'`.execute(db);
    },
  },
  '0005_staff_email_per_hotel': {
    async up(db: Kysely<unknown>) {
      // Staff e-mails are unique per hotel, no longer across the installation (README.md, Personal data):
      // one person may hold accounts at two hotels. (email, hotel_id) also serves the
      // login's lookup by e-mail.
      if (db.getExecutor().adapter instanceof PostgresAdapter) {
        // The name PostgreSQL gave the column's UNIQUE in 0001.
        await sql`alter table staff_users drop constraint staff_users_email_key`.execute(db);
        await sql`create unique index staff_users_email_hotel_uq on staff_users (email, hotel_id)`.execute(db);
        return;
      }
      // SQLite cannot drop a column's UNIQUE: the table is rebuilt, in one transaction
      // (the migrator runs SQLite migrations outside one), with foreign keys left on.
      // Dropping staff_users counts every staff_sessions row as a broken reference
      // (deferred to the commit) and only rows inserted into a table of that name mend
      // them: renaming a new table into place fails at commit, and renaming the old one
      // away makes SQLite rewrite staff_sessions to reference the old name. So the rows
      // go to a scratch table and come back into the recreated staff_users.
      const done = await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'index' and name = 'staff_users_email_hotel_uq'`.execute(db);
      if (Number(done.rows[0]?.n ?? 0) > 0) return; // a rebuild committed before the migration was recorded
      await db.transaction().execute(async (trx) => {
        await sql`pragma defer_foreign_keys = on`.execute(trx);
        await sql`create table staff_users_0005_copy as select id, hotel_id, email, role, password_hash, created_at, deactivated_at from staff_users`.execute(
          trx,
        );
        await sql`drop table staff_users`.execute(trx);
        await trx.schema
          .createTable('staff_users')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
          .addColumn('email', 'text', (c) => c.notNull())
          .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'receptionist')`))
          .addColumn('password_hash', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('deactivated_at', 'text')
          .execute();
        await sql`insert into staff_users (id, hotel_id, email, role, password_hash, created_at, deactivated_at) select id, hotel_id, email, role, password_hash, created_at, deactivated_at from staff_users_0005_copy`.execute(
          trx,
        );
        await sql`drop table staff_users_0005_copy`.execute(trx);
        await sql`create unique index staff_users_email_hotel_uq on staff_users (email, hotel_id)`.execute(trx);
        const broken = await sql<Record<string, unknown>>`pragma foreign_key_check`.execute(trx);
        if (broken.rows.length > 0)
          throw new Error(`rebuilding staff_users broke ${broken.rows.length} foreign-key references: ${JSON.stringify(broken.rows.slice(0, 5))}`);
      });
    },
  },
  '0006_webhooks': {
    async up(db: Kysely<unknown>) {
      // Events out (README.md, "Webhooks"): endpoints per hotel, an outbox written in each
      // change's own transaction, and one delivery per (event, endpoint). A hotel's events
      // are numbered in commit order (hotels.event_seq, taken under the hotel row's lock).
      await db.schema
        .alterTable('hotels')
        .addColumn('event_seq', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('webhook_endpoints')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('url', 'text', (c) => c.notNull())
        // A JSON array of event types; null: every type.
        .addColumn('event_types', 'text')
        .addColumn('secret', 'text', (c) => c.notNull())
        // During a rotation the previous secret signs too, until this time.
        .addColumn('previous_secret', 'text')
        .addColumn('previous_secret_until', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('disabled_at', 'text')
        .addColumn('disabled_reason', 'text')
        .execute();
      await sql`create index webhook_endpoints_hotel_idx on webhook_endpoints (hotel_id)`.execute(db);
      await db.schema
        .createTable('webhook_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        // The body as sent: { id, type, createdAt, hotel, data }.
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('webhook_events_hotel_seq_uq', ['hotel_id', 'seq'])
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id'))
        .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id'))
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed')`))
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'text', (c) => c.notNull())
        .addColumn('claimed_by', 'text')
        .addColumn('claimed_until', 'text')
        .addColumn('last_attempt_at', 'text')
        .addColumn('last_status', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('last_latency_ms', 'integer')
        .addColumn('last_response', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('finished_at', 'text')
        .execute();
      // The head of each endpoint's queue, and what is due.
      await sql`create index webhook_deliveries_pending_idx on webhook_deliveries (endpoint_id, seq) where status = 'pending'`.execute(db);
      await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(db);
      await sql`create index webhook_deliveries_endpoint_time_idx on webhook_deliveries (endpoint_id, created_at)`.execute(db);
      await sql`create index webhook_deliveries_event_idx on webhook_deliveries (event_id)`.execute(db);
    },
  },
  '0007_hotel_time_zone': {
    async up(db: Kysely<unknown>) {
      // The hotel's own day (arrivals and departures "today"): an IANA time zone.
      await db.schema
        .alterTable('hotels')
        .addColumn('time_zone', 'text', (c) => c.notNull().defaultTo('UTC'))
        .execute();
    },
  },
  '0008_rate_limit_reset': {
    async up(db: Kysely<unknown>) {
      // innsync key reset-limits: counts of a key made before this no longer count. Read with
      // the key at each request, so a server keeping its counters in memory (SQLite) sees it.
      await db.schema.alterTable('api_keys').addColumn('rate_limits_reset_at', 'text').execute();
    },
  },
  '0009_display_sessions': {
    async up(db: Kysely<unknown>) {
      // A front-desk display: a session that shows the board read-only for a shift (12 h)
      // without the idle expiry of a person's session.
      await db.schema
        .alterTable('staff_sessions')
        .addColumn('display', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  '0010_key_checklist': {
    async up(db: Kysely<unknown>) {
      // The go-live checklist (pms/key-checklist.ts): what each key has shown, recorded as
      // the request log is written, so the dashboard reads a handful of rows per key pair.
      await db.schema
        .createTable('key_checklist')
        .addColumn('pair_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
        .addColumn('item', 'text', (c) => c.notNull())
        .addColumn('shown_at', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('key_checklist_pk', ['pair_id', 'mode', 'item'])
        .execute();
      // A 409 or 429 whose key has not sent its next request to that endpoint yet.
      await db.schema
        .createTable('key_checklist_pending')
        .addColumn('pair_id', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('conflict', 'rate_limited')`))
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('body_sha256', 'text')
        .addColumn('allowed_at', 'text')
        .addPrimaryKeyConstraint('key_checklist_pending_pk', ['pair_id', 'mode', 'endpoint', 'kind'])
        .execute();
    },
  },
  '0011_request_log_field_caps': {
    async up(db: Kysely<unknown>) {
      // The path, query, User-Agent and Idempotency-Key a row keeps are capped
      // (pms/request-log-fields.ts): the full size of each one that was cut is kept beside it.
      for (const column of ['path_bytes', 'user_agent_bytes', 'idempotency_key_bytes']) {
        await db.schema.alterTable('request_log').addColumn(column, 'integer').execute();
      }
    },
  },
  '0012_webhook_answers_not_kept': {
    async up(db: Kysely<unknown>) {
      // A receiver's answer body is no longer kept (a receiver may echo the guest's data it
      // was sent, out of reach of erasure and retention): the stored ones are cleared, then
      // the column goes. Of an answer only its status is kept.
      await sql`update webhook_deliveries set last_response = null where last_response is not null`.execute(db);
      await db.schema.alterTable('webhook_deliveries').dropColumn('last_response').execute();
    },
  },
  '0013_webhook_queue_heads': {
    async up(db: Kysely<unknown>) {
      // Each endpoint's head (its oldest pending delivery) is found by one index step, and
      // the claims under way by a small index: a claim costs the same whatever the backlog
      // of a receiver that has been down for days.
      await sql`drop index webhook_deliveries_pending_idx`.execute(db);
      await sql`create index webhook_deliveries_head_idx on webhook_deliveries (endpoint_id, seq, created_at, id) where status = 'pending'`.execute(db);
      await sql`create index webhook_deliveries_claimed_idx on webhook_deliveries (claimed_until) where claimed_by is not null`.execute(db);
    },
  },
  '0014_room_list': {
    async up(db: Kysely<unknown>) {
      // The hotel's room list (rooms/room-list.ts): what the board shows beside its guests,
      // vacant rooms included. No personal data: a room, its floor, its type, and why it is
      // out of order (null: in order). One row per room number of a hotel, held by the index.
      await db.schema
        .createTable('rooms')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('room_number', 'text', (c) => c.notNull())
        .addColumn('floor', 'text')
        .addColumn('room_type', 'text')
        .addColumn('out_of_order_reason', 'text')
        .execute();
      await sql`create unique index rooms_hotel_room_uq on rooms (hotel_id, room_number)`.execute(db);
    },
  },
  '0015_request_log_replays': {
    async up(db: Kysely<unknown>) {
      // An answer replayed from the idempotency store names the request that made it (its
      // request id), so the request explorer tells a replay from its original. Rows written
      // before have none.
      await db.schema.alterTable('request_log').addColumn('replay_of', 'text').execute();
    },
  },
  '0016_request_log_bodies': {
    async up(db: Kysely<unknown>) {
      // Request and response bodies leave the rows: each is kept once per hotel in
      // request_log_bodies, brotli-compressed, addressed by the SHA-256 of its text, and
      // every row that sent or answered it names it (pms/request-log-body.ts). The guests a
      // body names are indexed in request_log_guests (pms/request-log-guests.ts), so erasure
      // and export read only those rows. Every existing row is converted, then the old columns go.
      const pg = db.getExecutor().adapter instanceof PostgresAdapter;
      await db.schema
        .createTable('request_log_bodies')
        .addColumn('hotel_id', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addColumn('bytes', 'integer', (c) => c.notNull())
        .addColumn('body', pg ? 'bytea' : 'blob', (c) => c.notNull())
        .addColumn('last_used_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('request_log_bodies_pk', ['hotel_id', 'sha256'])
        .execute();
      await sql`create index request_log_bodies_last_used_idx on request_log_bodies (last_used_at)`.execute(db);
      await db.schema
        .createTable('request_log_guests')
        .addColumn('hotel_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('pms', 'guest', 'holder')`))
        .addColumn('ref', 'text', (c) => c.notNull())
        .addColumn('sha256', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('request_log_guests_pk', ['hotel_id', 'kind', 'ref', 'sha256'])
        // SQLite: the table is its primary key (one B-tree, not a table and an index). The
        // entries of one body are found again from its text (pms/request-log-guests.ts).
        .$call((t) => (pg ? t : t.modifyEnd(sql`without rowid`)))
        .execute();
      await db.schema.alterTable('request_log').addColumn('request_sha256', 'text').execute();
      await db.schema.alterTable('request_log').addColumn('response_sha256', 'text').execute();
      await sql`create index request_log_request_body_idx on request_log (hotel_id, request_sha256) where request_sha256 is not null`.execute(db);
      await sql`create index request_log_response_body_idx on request_log (hotel_id, response_sha256) where response_sha256 is not null`.execute(db);
      await convertRequestLogBodies(db);
      await db.schema.alterTable('request_log').dropColumn('request_body').execute();
      await db.schema.alterTable('request_log').dropColumn('response_body').execute();
    },
  },
  '0017_room_assignments_by_hotel': {
    async up(db: Kysely<unknown>) {
      // The rooms a hotel's roster has held (the Rooms page's "rooms to adopt") are read from
      // that hotel's assignments alone, not from every hotel's history (docs/dashboard.md, JSON API: `GET /rooms/unlisted`).
      await sql`create index room_assignments_hotel_room_idx on room_assignments (hotel_id, room_number)`.execute(db);
    },
  },
  '0018_request_log_by_day': {
    async up(db: Kysely<unknown>) {
      // PostgreSQL keeps the request log by the day, so retention drops whole days instead
      // of deleting rows (db/partitions.ts; docs/architecture.md, "Request log storage").
      // The table is rebuilt as a partitioned one with the same columns, every existing row
      // copied into its day's partition in this migration's transaction. SQLite keeps one
      // table and purges in batches.
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
      await sql`alter table request_log rename to request_log_unpartitioned`.execute(db);
      // created_at compares byte by byte (collation "C"), whatever the database's own
      // collation: the partition bounds are days as ISO text.
      await sql`create table request_log (
        id text not null,
        created_at text collate "C" not null,
        hotel_id text,
        slug text,
        api_key_id text,
        key_mode text,
        method text not null,
        path text not null,
        status_code integer not null,
        client_ip text not null,
        user_agent text,
        duration_ms real not null,
        idempotency_key text,
        request_bytes integer,
        response_bytes integer,
        path_bytes integer,
        user_agent_bytes integer,
        idempotency_key_bytes integer,
        replay_of text,
        request_sha256 text,
        response_sha256 text
      ) partition by range (created_at)`.execute(db);
      const { rows } = await sql<{ day: string }>`select distinct substr(created_at, 1, 10) as day from request_log_unpartitioned`.execute(db);
      await createDayPartitions(db, 'request_log', [...rows.map((r) => r.day), ...daysAhead(Date.now())]);
      const columns = sql.raw(REQUEST_LOG_COLUMNS.join(', '));
      await sql`insert into request_log (${columns}) select ${columns} from request_log_unpartitioned`.execute(db);
      await sql`drop table request_log_unpartitioned`.execute(db);
      // A partitioned table's unique keys hold its partition key: (id, created_at). Ids are
      // drawn at random per request (domain/ids.ts), so id alone stays unique in practice.
      await sql`alter table request_log add primary key (id, created_at)`.execute(db);
      await sql`create index request_log_created_idx on request_log (created_at)`.execute(db);
      await sql`create index request_log_hotel_time_idx on request_log (hotel_id, created_at)`.execute(db);
      await sql`create index request_log_slug_time_idx on request_log (slug, created_at)`.execute(db);
      await sql`create index request_log_request_body_idx on request_log (hotel_id, request_sha256) where request_sha256 is not null`.execute(db);
      await sql`create index request_log_response_body_idx on request_log (hotel_id, response_sha256) where response_sha256 is not null`.execute(db);
    },
  },
  '0019_webhook_events_by_time': {
    async up(db: Kysely<unknown>) {
      // The retention purge finds the webhook events past 30 days by time, a batch at a
      // time (db/batches.ts), without reading the whole history.
      await sql`create index webhook_events_created_idx on webhook_events (created_at)`.execute(db);
    },
  },
  '0020_compact_guest_index': {
    async up(db: Kysely<unknown>) {
      // The guest index holds each reference a body names as a 64-bit key (the first 8 bytes
      // of SHA-256 of hotel, kind and reference: pms/request-log-guests.ts `guestKey`)
      // instead of the hotel id, kind, reference and the body's hex SHA-256 per entry
      // (docs/architecture.md, Request log storage). PostgreSQL keeps a body's keys in its
      // row (`guest_keys`, a GIN index); SQLite in request_log_guest_keys, whose primary key
      // starts with the key. Every entry of request_log_guests is converted, then it goes.
      const pg = db.getExecutor().adapter instanceof PostgresAdapter;
      if (pg) await sql`alter table request_log_bodies add column guest_keys bigint[] not null default '{}'`.execute(db);
      else
        await sql`create table request_log_guest_keys (
          key integer not null,
          hotel_id text not null,
          sha256 text not null,
          primary key (key, hotel_id, sha256)
        ) without rowid`.execute(db);
      await convertGuestIndex(db, pg);
      if (pg) await sql`create index request_log_bodies_guest_keys_idx on request_log_bodies using gin (guest_keys) with (fastupdate = off)`.execute(db);
      await sql`drop table request_log_guests`.execute(db);
    },
  },
  '0021_access_and_security_trail': {
    async up(db: Kysely<unknown>) {
      // Who looked at a guest's personal data in the dashboard, and the security events of
      // staff accounts and keys (docs/dashboard.md, "Access trail"). Purged with the other
      // retention jobs after ACCESS_LOG_RETENTION_DAYS.
      await db.schema
        .createTable('access_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('staff_user_id', 'text', (c) => c.notNull().references('staff_users.id'))
        .addColumn('client_ip', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('guest_id', 'text')
        .addColumn('search', 'text')
        .execute();
      await sql`create index access_log_hotel_time_idx on access_log (hotel_id, created_at)`.execute(db);
      await sql`create index access_log_guest_idx on access_log (guest_id) where guest_id is not null`.execute(db);
      await db.schema
        .createTable('security_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('actor_type', 'text', (c) => c.notNull().check(sql`actor_type in ('staff', 'operator', 'anonymous')`))
        .addColumn('actor_id', 'text')
        .addColumn('subject_user_id', 'text')
        .addColumn('subject_key_pair_id', 'text')
        .addColumn('client_ip', 'text')
        .addColumn('detail', 'text')
        .execute();
      await sql`create index security_events_hotel_time_idx on security_events (hotel_id, created_at)`.execute(db);
    },
  },
  '0022_key_restrictions': {
    async up(db: Kysely<unknown>) {
      // What a key pair may do (docs/pms-interface.md, "Keys and authentication"): the
      // networks it may be used from (a JSON list of CIDR blocks; null: any), the last day
      // it works (UTC; null: until revoked) and whether it may only read. Both rows of a
      // pair hold the same values.
      await db.schema.alterTable('api_keys').addColumn('allowed_networks', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('expires_on', 'text').execute();
      await db.schema
        .alterTable('api_keys')
        .addColumn('read_only', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  },
  '0023_access_trail_indexes': {
    async up(db: Kysely<unknown>) {
      // The Access trail page's filters (by staff member, by kind of security event) and the
      // retention purge across hotels by age (docs/dashboard.md, "Access trail").
      await sql`create index access_log_staff_time_idx on access_log (hotel_id, staff_user_id, created_at)`.execute(db);
      await sql`create index access_log_time_idx on access_log (created_at)`.execute(db);
      await sql`create index security_events_kind_time_idx on security_events (hotel_id, kind, created_at)`.execute(db);
      await sql`create index security_events_time_idx on security_events (created_at)`.execute(db);
    },
  },
  '0024_staff_factors': {
    async up(db: Kysely<unknown>) {
      // A second factor for staff sign-in, the hotel's rule that requires one, and the
      // front-desk displays an admin paired (docs/dashboard.md, "Second factors"). Every
      // row names its hotel.
      await db.schema
        .alterTable('hotels')
        .addColumn('require_second_factor', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      // 'full', or a sign-in that still needs its second factor ('second_factor') or must
      // set one up first ('enrol'): such a session may use only the routes of that stage.
      await db.schema
        .alterTable('staff_sessions')
        .addColumn('stage', 'text', (c) => c.notNull().defaultTo('full'))
        .execute();
      // The authenticator (TOTP) secret, readable by the server (it computes the codes);
      // confirmed_at null while the enrolment waits for its first code. last_step: the
      // time step of the last code accepted, so no code is used twice.
      await db.schema
        .createTable('staff_totp')
        .addColumn('user_id', 'text', (c) => c.primaryKey().references('staff_users.id'))
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('confirmed_at', 'text')
        .addColumn('last_step', 'bigint')
        .execute();
      // Recovery codes as SHA-256 of the code; a used one is deleted.
      await db.schema
        .createTable('staff_recovery_codes')
        .addColumn('code_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('staff_users.id'))
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await sql`create index staff_recovery_codes_user_idx on staff_recovery_codes (hotel_id, user_id)`.execute(db);
      // An admin's one-time pairing code (SHA-256), and the devices it paired (SHA-256 of
      // the device cookie's token).
      await db.schema
        .createTable('display_pairing_codes')
        .addColumn('code_hash', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('created_by', 'text', (c) => c.notNull().references('staff_users.id'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('paired_displays')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('paired_by', 'text', (c) => c.notNull().references('staff_users.id'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0025_session_details': {
    async up(db: Kysely<unknown>) {
      // What the My account page shows of each session (docs/dashboard.md, "My account"):
      // the browser's User-Agent, cut to a few hundred characters, and the client's address
      // at sign-in. Both go with the session's row when it ends.
      await db.schema.alterTable('staff_sessions').addColumn('user_agent', 'text').execute();
      await db.schema.alterTable('staff_sessions').addColumn('client_ip', 'text').execute();
    },
  },
  '0026_passkeys': {
    async up(db: Kysely<unknown>) {
      // Staff passkeys (docs/dashboard.md, "Passkeys"): the public key only. A credential id
      // is unique over the whole table, so a passkey names exactly one user and hotel.
      await db.schema
        .createTable('staff_passkeys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('user_id', 'text', (c) => c.notNull().references('staff_users.id'))
        .addColumn('credential_id', 'text', (c) => c.notNull().unique())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('transports', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .execute();
      await sql`create index staff_passkeys_user_idx on staff_passkeys (user_id)`.execute(db);
      // A registration's or sign-in's challenge, by its SHA-256: single use (deleted when
      // answered), 5 minutes; a registration's is bound to the session that asked for it.
      await db.schema
        .createTable('staff_passkey_challenges')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('register', 'login')`))
        .addColumn('session_id', 'text')
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addCheckConstraint('staff_passkey_challenges_session_ck', sql`(kind = 'register') = (session_id is not null)`)
        .execute();
      await sql`create index staff_passkey_challenges_expiry_idx on staff_passkey_challenges (expires_at)`.execute(db);
      // "Sign in with passkeys only", and which passkey signed a session in (null: the password).
      await db.schema
        .alterTable('staff_users')
        .addColumn('passkeys_only', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('staff_sessions').addColumn('passkey_id', 'text').execute();
    },
  },
  '0027_display_pairings': {
    async up(db: Kysely<unknown>) {
      // Paired front-desk displays an admin can list and unpair, which end when unused for
      // 90 days (docs/dashboard.md, "Second factors"). A pairing gets a public id (its
      // primary key; the token's SHA-256 stays unique), the name the admin gave its code
      // (optional) and the time a display last signed in with it. The table is small: its
      // rows are read, the table made again, and each row written back with a new id and
      // its pairing time as its last use.
      await db.schema.alterTable('display_pairing_codes').addColumn('label', 'text').execute();
      await sql`create index display_pairing_codes_expiry_idx on display_pairing_codes (expires_at)`.execute(db);
      const { rows } = await sql<{ token_hash: string; hotel_id: string; paired_by: string; created_at: string }>`
        select token_hash, hotel_id, paired_by, created_at from paired_displays`.execute(db);
      await db.schema.dropTable('paired_displays').execute();
      await db.schema
        .createTable('paired_displays')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('hotel_id', 'text', (c) => c.notNull().references('hotels.id'))
        .addColumn('paired_by', 'text', (c) => c.notNull().references('staff_users.id'))
        .addColumn('label', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text', (c) => c.notNull())
        .execute();
      await sql`create index paired_displays_hotel_idx on paired_displays (hotel_id, created_at)`.execute(db);
      await sql`create index paired_displays_last_used_idx on paired_displays (last_used_at)`.execute(db);
      for (const r of rows)
        await sql`insert into paired_displays (id, token_hash, hotel_id, paired_by, label, created_at, last_used_at)
          values (${newId('disp')}, ${r.token_hash}, ${r.hotel_id}, ${r.paired_by}, null, ${r.created_at}, ${r.created_at})`.execute(db);
      // The pairing a display session signed in through (null: none). Unpairing deletes its
      // sessions itself (to close their event streams); the cascade also ends a session that
      // signed in at the moment its pairing was deleted.
      await db.schema
        .alterTable('staff_sessions')
        .addColumn('paired_display_id', 'text', (c) => c.references('paired_displays.id').onDelete('cascade'))
        .execute();
      await sql`create index staff_sessions_paired_display_idx on staff_sessions (paired_display_id) where paired_display_id is not null`.execute(db);
    },
  },
  '0028_security_event_subject': {
    async up(db: Kysely<unknown>) {
      // The security events of one staff account (its failed sign-ins, factor changes...),
      // newest first: the Access trail page's staff filter (docs/dashboard.md, "Access trail").
      await sql`create index security_events_subject_time_idx on security_events (hotel_id, subject_user_id, created_at)`.execute(db);
    },
  },
  '0029_operator_tokens': {
    async up(db: Kysely<unknown>) {
      // The provisioning API's tokens (docs/admin-api.md, "Operator tokens"): each kept as
      // its SHA-256 only, unique; never a hotel's.
      await db.schema
        .createTable('operator_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('token_sha256', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .addColumn('last_used_at', 'text')
        .execute();
      // The provisioning API's own request log (docs/admin-api.md, "Request log"): no
      // bodies, never in a hotel's request log. token_id is null for a refused token.
      await db.schema
        .createTable('operator_request_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('token_id', 'text')
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('route', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('duration_ms', 'real', (c) => c.notNull())
        .addColumn('client_ip', 'text', (c) => c.notNull())
        .execute();
      await sql`create index operator_request_log_at_idx on operator_request_log (at)`.execute(db);
      // A hotel's staff accounts by the hotel (the usage summary counts its active ones;
      // the unique index leads with the e-mail).
      await sql`create index staff_users_hotel_idx on staff_users (hotel_id)`.execute(db);
    },
  },
};

/**
 * 0020: every entry of request_log_guests as its key (computed here, pms/request-log-guests.ts
 * `guestKey`), in batches. PostgreSQL: 500 bodies at a time (in the order of their primary
 * key), each body's entries read by a temporary index on (hotel_id, sha256) and its keys
 * written by one update of its row (not one per entry, which would leave a dead row version
 * per entry). SQLite: 2,000 entries at a time, in the order of the old primary key, into
 * request_log_guest_keys.
 */
async function convertGuestIndex(db: Kysely<unknown>, pg: boolean): Promise<void> {
  interface Entry {
    hotel_id: string;
    kind: GuestRefKind;
    ref: string;
    sha256: string;
  }
  const keyOf = (e: Entry): bigint => guestKey(e.hotel_id, { kind: e.kind, ref: e.ref });
  if (pg) {
    await sql`create index request_log_guests_body_idx on request_log_guests (hotel_id, sha256)`.execute(db);
    const BODIES = 500;
    let after = null as { hotel_id: string; sha256: string } | null;
    for (;;) {
      const from = after;
      const { rows: bodies } = await sql<{ hotel_id: string; sha256: string }>`select hotel_id, sha256 from request_log_bodies
        ${from === null ? sql`` : sql`where (hotel_id, sha256) > (${from.hotel_id}, ${from.sha256})`}
        order by hotel_id, sha256 limit ${BODIES}`.execute(db);
      if (bodies.length === 0) return;
      after = bodies[bodies.length - 1] ?? null;
      const { rows: entries } = await sql<Entry>`select g.hotel_id, g.kind, g.ref, g.sha256 from request_log_guests as g
        join unnest(cast(${bodies.map((b) => b.hotel_id)} as text[]), cast(${bodies.map((b) => b.sha256)} as text[])) as b(h, s)
          on g.hotel_id = b.h and g.sha256 = b.s`.execute(db);
      if (entries.length > 0) {
        await sql`update request_log_bodies as b set guest_keys = v.keys
          from (select h, s, array_agg(distinct k) as keys
            from unnest(cast(${entries.map((e) => e.hotel_id)} as text[]), cast(${entries.map((e) => e.sha256)} as text[]),
              cast(${entries.map((e) => String(keyOf(e)))} as bigint[])) as t(h, s, k)
            group by h, s) as v
          where b.hotel_id = v.h and b.sha256 = v.s`.execute(db);
      }
      if (bodies.length < BODIES) return;
    }
  }
  const ENTRIES = 2_000;
  let after = null as Entry | null;
  for (;;) {
    const from = after;
    const { rows }: { rows: Entry[] } = await sql<Entry>`select hotel_id, kind, ref, sha256 from request_log_guests
      ${from === null ? sql`` : sql`where (hotel_id, kind, ref, sha256) > (${from.hotel_id}, ${from.kind}, ${from.ref}, ${from.sha256})`}
      order by hotel_id, kind, ref, sha256 limit ${ENTRIES}`.execute(db);
    if (rows.length === 0) return;
    after = rows[rows.length - 1] ?? null;
    // 3 values per entry, within SQLite's limit of bound values per statement.
    for (let i = 0; i < rows.length; i += 500) {
      const values = rows.slice(i, i + 500).map((r) => sql`(${keyOf(r)}, ${r.hotel_id}, ${r.sha256})`);
      await sql`insert into request_log_guest_keys (key, hotel_id, sha256) values ${sql.join(values)} on conflict do nothing`.execute(db);
    }
    if (rows.length < ENTRIES) return;
  }
}

/** 0016: moves every row's bodies into request_log_bodies (and their guests into request_log_guests), 500 rows at a time. */
async function convertRequestLogBodies(db: Kysely<unknown>): Promise<void> {
  interface OldRow {
    id: string;
    hotel_id: string | null;
    created_at: string;
    request_body: string | null;
    response_body: string | null;
  }
  let after = '';
  const indexed = new Set<string>();
  for (;;) {
    const { rows } = await sql<OldRow>`select id, hotel_id, created_at, request_body, response_body from request_log
      where id > ${after} and (request_body is not null or response_body is not null) order by id limit 500`.execute(db);
    if (rows.length === 0) return;
    after = rows[rows.length - 1]?.id ?? after;
    for (const r of rows) {
      // A row that no key of a hotel sent keeps no body (pms/request-log-body.ts); one written so by an old build keeps none now.
      const hotelId = r.hotel_id;
      const address = async (text: string | null): Promise<string | null> => {
        if (text === null || hotelId === null) return null;
        const packed = packBody(text);
        await sql`insert into request_log_bodies (hotel_id, sha256, bytes, body, last_used_at)
          values (${hotelId}, ${packed.sha256}, ${packed.bytes}, ${packed.data}, ${r.created_at})
          on conflict (hotel_id, sha256) do update set last_used_at = case when excluded.last_used_at > request_log_bodies.last_used_at
            then excluded.last_used_at else request_log_bodies.last_used_at end`.execute(db);
        if (indexed.size > 100_000) indexed.clear();
        const key = `${hotelId} ${packed.sha256}`;
        if (indexed.has(key)) return packed.sha256;
        indexed.add(key);
        for (const g of guestRefs([text])) {
          await sql`insert into request_log_guests (hotel_id, kind, ref, sha256) values (${hotelId}, ${g.kind}, ${g.ref}, ${packed.sha256})
            on conflict do nothing`.execute(db);
        }
        return packed.sha256;
      };
      const requestSha = await address(r.request_body);
      const responseSha = await address(r.response_body);
      await sql`update request_log set request_sha256 = ${requestSha}, response_sha256 = ${responseSha} where id = ${r.id}`.execute(db);
    }
  }
}

/** The columns of request_log since 0016, in their order (0018 copies them). */
const REQUEST_LOG_COLUMNS = [
  'id',
  'created_at',
  'hotel_id',
  'slug',
  'api_key_id',
  'key_mode',
  'method',
  'path',
  'status_code',
  'client_ip',
  'user_agent',
  'duration_ms',
  'idempotency_key',
  'request_bytes',
  'response_bytes',
  'path_bytes',
  'user_agent_bytes',
  'idempotency_key_bytes',
  'replay_of',
  'request_sha256',
  'response_sha256',
];

/** The names of the migrations this build knows, in the order they apply. */
export function knownMigrations(): string[] {
  return Object.keys(migrations).sort();
}

const provider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};

/**
 * A database a newer release has migrated is refused with its own message, before the
 * migrator would call it "corrupted" (docs/backup-restore.md: restoring a newer release's dump).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the migrator works on any schema
async function refuseNewerDatabase(db: Kysely<any>): Promise<void> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((table) => table.name === 'kysely_migration')) return; // a new database
  const known = new Set(knownMigrations());
  const applied: Array<{ name: string }> = await db.selectFrom('kysely_migration').select('name').execute();
  const unknown = applied
    .map((row) => row.name)
    .filter((name) => !known.has(name))
    .sort();
  if (unknown.length === 0) return;
  throw new CliError(
    'DATABASE_TOO_NEW',
    `The database was written by a newer release of innsync (migrations this build does not know: ${unknown.join(', ')}): run that release or a newer one, or restore a backup made by this release.`,
  );
}

/** Applies pending migrations; returns the names applied. Throws on the first failure. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the migrator works on any schema
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  await refuseNewerDatabase(db);
  const migrator = new Migrator({ db, provider });
  let { error, results } = await migrator.migrateToLatest();
  // PostgreSQL: another instance holds the migration lock, or a table is busy, past the
  // lock timeout (55P03). Its migrations then roll back as a whole; wait and try again,
  // for about a minute, so instances started together all come up.
  for (let attempt = 0; attempt < 12 && isLockTimeout(error); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    ({ error, results } = await migrator.migrateToLatest());
  }
  return appliedOrThrow({ error, results });
}

/**
 * Applies the migrations up to and including `name` and no further: the schema of the
 * release that ended with it (the migration tests build an earlier release's database so).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the migrator works on any schema
export async function migrateTo(db: Kysely<any>, name: string): Promise<string[]> {
  return appliedOrThrow(await new Migrator({ db, provider }).migrateTo(name));
}

/** The names a migrator run applied; its first failure thrown, named. */
function appliedOrThrow({ error, results }: MigrationResultSet): string[] {
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${reason}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
