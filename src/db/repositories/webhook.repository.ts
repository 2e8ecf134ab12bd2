import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { WebhookEndpointTable } from '../schema.js';
import { isPostgres, runTransaction, writeLater, type Db, type DbOrTrx } from '../database.js';
import { deleteInBatches, PURGE_BATCH_ROWS } from '../batches.js';
import { newId } from '../../domain/ids.js';
import { compiledShape } from '../shapes.js';
import { rememberEventTrace } from '../../tracing/spans.js';

export interface WebhookEndpoint {
  id: string;
  hotelId: string;
  url: string;
  /** null: every event type. */
  eventTypes: string[] | null;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: string | null;
  createdAt: string;
  disabledAt: string | null;
  disabledReason: string | null;
}

type EndpointRow = Selectable<WebhookEndpointTable>;

function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    hotelId: r.hotel_id,
    url: r.url,
    eventTypes: r.event_types === null ? null : (JSON.parse(r.event_types) as string[]),
    secret: r.secret,
    previousSecret: r.previous_secret,
    previousSecretUntil: r.previous_secret_until,
    createdAt: r.created_at,
    disabledAt: r.disabled_at,
    disabledReason: r.disabled_reason,
  };
}

export async function insertEndpoint(
  db: DbOrTrx,
  e: { hotelId: string; url: string; eventTypes: string[] | null; secret: string; now: string },
): Promise<WebhookEndpoint> {
  const row: EndpointRow = {
    id: newId('whe'),
    hotel_id: e.hotelId,
    url: e.url,
    event_types: e.eventTypes === null ? null : JSON.stringify(e.eventTypes),
    secret: e.secret,
    previous_secret: null,
    previous_secret_until: null,
    created_at: e.now,
    disabled_at: null,
    disabled_reason: null,
  };
  await db.insertInto('webhook_endpoints').values(row).execute();
  return toEndpoint(row);
}

/**
 * Adds an endpoint unless the hotel already has `max`; null then. Inside the caller's
 * transaction, the hotel's endpoints are counted under the hotel row's lock, taken by a
 * write that changes nothing (PostgreSQL: the row lock; SQLite: the database's write
 * lock), so two additions at once, from any process, are counted one after the other.
 */
export async function insertEndpointWithin(
  trx: DbOrTrx,
  e: { hotelId: string; url: string; eventTypes: string[] | null; secret: string; now: string },
  max: number,
): Promise<WebhookEndpoint | null> {
  await trx
    .updateTable('hotels')
    .set((eb) => ({ event_seq: eb.ref('event_seq') }))
    .where('id', '=', e.hotelId)
    .execute();
  const { n } = await trx
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('hotel_id', '=', e.hotelId)
    .executeTakeFirstOrThrow();
  if (Number(n) >= max) return null;
  return insertEndpoint(trx, e);
}

export async function listEndpoints(db: DbOrTrx, hotelId: string): Promise<WebhookEndpoint[]> {
  const rows = await db.selectFrom('webhook_endpoints').selectAll().where('hotel_id', '=', hotelId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toEndpoint);
}

/** The endpoint with this id; of this hotel's only, unless `hotelId` is null (an operator's command names any hotel's). */
export async function findEndpoint(db: DbOrTrx, hotelId: string | null, id: string): Promise<WebhookEndpoint | null> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .$if(hotelId !== null, (q) => q.where('hotel_id', '=', hotelId ?? ''))
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toEndpoint(row) : null;
}

/** Removes the endpoint with its deliveries (its events stay for the hotel's other endpoints). */
export async function deleteEndpoint(db: DbOrTrx, hotelId: string, id: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
  await db.deleteFrom('webhook_endpoints').where('hotel_id', '=', hotelId).where('id', '=', id).execute();
}

export async function rotateEndpointSecret(db: DbOrTrx, hotelId: string, id: string, secret: string, previous: string, previousUntil: string): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ secret, previous_secret: previous, previous_secret_until: previousUntil })
    .where('hotel_id', '=', hotelId)
    .where('id', '=', id)
    .execute();
}

/** Disables (with the reason shown to the admin) or, with `at` null, enables the endpoint. */
export async function setEndpointDisabled(db: DbOrTrx, hotelId: string, id: string, at: string | null, reason: string | null): Promise<void> {
  await db.updateTable('webhook_endpoints').set({ disabled_at: at, disabled_reason: reason }).where('hotel_id', '=', hotelId).where('id', '=', id).execute();
}

/** Rows per INSERT: well under SQLite's limit of bound parameters. */
const CHUNK = 200;

/** Where a hotel's events go: its slug (in every event's body) and its enabled endpoints. */
export interface Outbox {
  hotelId: string;
  slug: string;
  endpoints: SubscribedEndpoint[];
}

/**
 * Adds `count` to the hotel's event counter (its row stays locked until the commit) and
 * returns the i-th new event's number. On PostgreSQL the update is sent later (writeLater)
 * and each number is read back by the insert that writes it: the counter as this
 * transaction left it, less the events after it; so no answer is waited for
 * (docs/architecture.md, "Round trips on PostgreSQL"). SQLite runs in this process, where
 * a wait costs nothing: it reads the counter at once and writes plain numbers.
 */
async function numberEvents(trx: DbOrTrx, hotelId: string, count: number): Promise<(i: number) => number | RawBuilder<number>> {
  const update = trx
    .updateTable('hotels')
    .set((eb) => ({ event_seq: eb('event_seq', '+', count) }))
    .where('id', '=', hotelId);
  if (isPostgres(trx)) {
    await writeLater(trx, update.compile());
    return (i) => sql<number>`(select event_seq from hotels where id = ${hotelId}) - ${count - 1 - i}`;
  }
  const counter = await update.returning('event_seq').executeTakeFirstOrThrow();
  const first = Number(counter.event_seq) - count + 1;
  return (i) => first + i;
}

/** An enabled endpoint and the event types it wants (null: all). */
interface SubscribedEndpoint {
  id: string;
  types: string[] | null;
}

type OutboxRow = { id: string; event_types: string | null; slug: string };

/**
 * The read of the hotel's enabled endpoints (or only `onlyEndpoint`, wanting every type:
 * a test event), each with the hotel's slug; toOutbox makes its rows an Outbox. A query,
 * not a call: a roster write sends it with a round trip it makes anyway (readLater).
 */
export function outboxQuery(db: DbOrTrx, hotelId: string, onlyEndpoint?: string) {
  return onlyEndpoint === undefined ? enabledEndpointsQuery(db, hotelId) : oneEndpointQuery(db, hotelId, onlyEndpoint);
}

function endpointsOf(db: DbOrTrx, hotelId: string) {
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'event_types'])
    .select((eb) => eb.selectFrom('hotels').select('slug').where('hotels.id', '=', hotelId).$asScalar().as('slug'))
    .where('hotel_id', '=', hotelId)
    .where('disabled_at', 'is', null);
}

/** outboxQuery's statements (every roster write reads the first), compiled once (db/shapes.ts). */
const enabledEndpointsQuery = compiledShape((db: DbOrTrx, hotelId: string) => endpointsOf(db, hotelId));
const oneEndpointQuery = compiledShape((db: DbOrTrx, hotelId: string, id: string) => endpointsOf(db, hotelId).where('id', '=', id));

/** outboxQuery's rows as an Outbox (no rows: no endpoint, no slug needed). */
export function toOutbox(hotelId: string, rows: OutboxRow[], onlyEndpoint?: string): Outbox {
  return {
    hotelId,
    slug: rows[0]?.slug ?? '',
    endpoints: rows.map((e) => ({
      id: e.id,
      types: onlyEndpoint !== undefined || e.event_types === null ? null : (JSON.parse(e.event_types) as string[]),
    })),
  };
}

/**
 * Writes outgoing events and a pending delivery for each of the outbox's endpoints that
 * wants the event's type, inside the caller's transaction. The events' numbers are taken
 * from the hotel's row, whose lock is then held until the commit: a hotel's events are
 * numbered in the order their transactions commit, which is the order each endpoint
 * receives them in. On PostgreSQL every statement here goes with the transaction's COMMIT
 * (writeLater, numberEvents).
 */
export async function insertEvents(
  trx: DbOrTrx,
  outbox: Outbox,
  events: Array<{ type: string; payload: (id: string, hotelSlug: string) => string }>,
  now: string,
): Promise<{ ids: string[]; deliveries: number }> {
  if (events.length === 0) return { ids: [], deliveries: 0 };
  const { hotelId, endpoints } = outbox;
  const seq = await numberEvents(trx, hotelId, events.length);
  const rows = events.map((e, i) => {
    const id = newId('evt');
    return { id, hotel_id: hotelId, seq: seq(i), type: e.type, payload: e.payload(id, outbox.slug), created_at: now };
  });
  const deliveries = rows.flatMap((r) =>
    endpoints.filter((e) => e.types === null || e.types.includes(r.type)).map((e) => pendingDelivery(e.id, r.id, r.seq, now)),
  );
  await inChunks(rows, (part) => writeLater(trx, trx.insertInto('webhook_events').values(part).compile()));
  await inChunks(deliveries, (part) => writeLater(trx, trx.insertInto('webhook_deliveries').values(part).compile()));
  rememberEventTrace(rows.map((r) => r.id));
  return { ids: rows.map((r) => r.id), deliveries: deliveries.length };
}

/** Runs `write` on `rows` CHUNK at a time, in order. */
async function inChunks<R>(rows: R[], write: (part: R[]) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) await write(rows.slice(i, i + CHUNK));
}

function pendingDelivery(endpointId: string, eventId: string, seq: number | RawBuilder<number>, now: string) {
  return {
    id: newId('dlv'),
    endpoint_id: endpointId,
    event_id: eventId,
    seq,
    status: 'pending' as const,
    next_attempt_at: now,
    claimed_by: null,
    claimed_until: null,
    last_attempt_at: null,
    last_status: null,
    last_error: null,
    last_latency_ms: null,
    created_at: now,
    finished_at: null,
  };
}

/** A delivery of an event already in the outbox, queued again (the admin's "Send again"): same event, same webhook-id. */
export async function requeueDelivery(db: DbOrTrx, hotelId: string, endpointId: string, eventId: string, now: string): Promise<string> {
  const event = await db.selectFrom('webhook_events').select(['seq']).where('hotel_id', '=', hotelId).where('id', '=', eventId).executeTakeFirstOrThrow();
  const row = pendingDelivery(endpointId, eventId, event.seq, now);
  await db.insertInto('webhook_deliveries').values(row).execute();
  return row.id;
}

/** A delivery claimed for sending: what to send, where, and with which secrets. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  /** The endpoint's hotel. */
  hotelId: string;
  url: string;
  secrets: string[];
  eventId: string;
  payload: string;
  attempts: number;
  createdAt: string;
}

/**
 * Claims up to `limit` deliveries that are due, each the oldest pending one of its
 * endpoint (a later event waits until the earlier one succeeded or was given up), for
 * `owner` until `leaseUntil`, and at most `perHotel` under way for one hotel at a time
 * (counting the claims still held, by any sender): a hotel whose receivers are slow or
 * never answer holds only its own share of the senders. A claim whose owner stopped (a
 * crash, a stall) lapses at its lease and is taken over. PostgreSQL: rows another
 * instance is claiming are skipped (SKIP LOCKED), and each row is checked again as it is
 * locked, so each delivery has one sender at a time.
 */
export async function claimDueDeliveries(
  db: DbOrTrx,
  owner: string,
  now: string,
  leaseUntil: string,
  limit: number,
  perHotel: number,
): Promise<ClaimedDelivery[]> {
  // Most polls find nothing due: a read says so without taking the write lock (on SQLite
  // the one lock every writer of the database, another process's too, waits for).
  if (!(await anyDeliveryDue(db, now))) return [];
  const ids = await claimHeads(db, owner, now, leaseUntil, limit, perHotel);
  return ids.length === 0 ? [] : readClaimed(db, owner, now, ids);
}

async function anyDeliveryDue(db: DbOrTrx, now: string): Promise<boolean> {
  const anyDue = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .limit(1)
    .executeTakeFirst();
  return anyDue !== undefined;
}

/** The claim itself: the due heads, within each hotel's share, marked as `owner`'s until `leaseUntil`; their ids. */
async function claimHeads(db: DbOrTrx, owner: string, now: string, leaseUntil: string, limit: number, perHotel: number): Promise<string[]> {
  // Each enabled endpoint's head (its oldest pending delivery, by the index of migration
  // 0013), ranked per hotel: the cost follows the number of endpoints, not the backlog. A
  // window function cannot share its SELECT with FOR UPDATE: the chosen rows are locked
  // afterwards, and their claim condition checked again as they are.
  const lock = isPostgres(db) ? sql`for update skip locked` : sql``;
  const claimed = await sql<{ id: string }>`
    with busy as (
      select e.hotel_id, count(*) as n from webhook_deliveries d
      join webhook_endpoints e on e.id = d.endpoint_id
      where d.claimed_by is not null and d.claimed_until >= ${now}
      group by e.hotel_id
    ),
    heads as (
      select d.id, d.next_attempt_at, e.hotel_id,
        row_number() over (partition by e.hotel_id order by d.next_attempt_at, d.id) as place
      from webhook_endpoints e
      join webhook_deliveries d on d.id = (
        select p.id from webhook_deliveries p
        where p.endpoint_id = e.id and p.status = 'pending'
        order by p.seq, p.created_at, p.id
        limit 1
      )
      where e.disabled_at is null and d.next_attempt_at <= ${now}
        and (d.claimed_until is null or d.claimed_until < ${now})
    ),
    picked as (
      select h.id from heads h left join busy b on b.hotel_id = h.hotel_id
      where h.place <= ${perHotel} - coalesce(b.n, 0)
      order by h.next_attempt_at, h.id
      limit ${limit}
    ),
    due as (
      select d.id from webhook_deliveries d
      where d.id in (select id from picked) and d.status = 'pending' and d.next_attempt_at <= ${now}
        and (d.claimed_until is null or d.claimed_until < ${now})
      ${lock}
    )
    update webhook_deliveries set claimed_by = ${owner}, claimed_until = ${leaseUntil}
    where id in (select id from due)
    returning id`.execute(db);
  return claimed.rows.map((r) => r.id);
}

/** What a sender needs of each claimed delivery: its endpoint, secrets and event. */
async function readClaimed(db: DbOrTrx, owner: string, now: string, ids: string[]): Promise<ClaimedDelivery[]> {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
    .select([
      'd.id',
      'd.endpoint_id',
      'd.attempts',
      'd.created_at',
      'e.hotel_id',
      'e.url',
      'e.secret',
      'e.previous_secret',
      'e.previous_secret_until',
      'v.id as event_id',
      'v.payload',
    ])
    .where('d.id', 'in', ids)
    .where('d.claimed_by', '=', owner)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    endpointId: r.endpoint_id,
    hotelId: r.hotel_id,
    url: r.url,
    secrets: r.previous_secret && r.previous_secret_until && r.previous_secret_until > now ? [r.secret, r.previous_secret] : [r.secret],
    eventId: r.event_id,
    payload: r.payload,
    attempts: Number(r.attempts),
    createdAt: r.created_at,
  }));
}

export interface AttemptOutcome {
  at: string;
  status: number | null;
  error: string | null;
  latencyMs: number;
  /** Succeeded, given up, or due again at `nextAttemptAt`. */
  result: 'succeeded' | 'failed' | 'retry';
  nextAttemptAt: string;
}

/** Records one attempt of a delivery this owner holds; false when its claim had lapsed and another owner took it. */
export async function recordAttempt(db: DbOrTrx, endpointId: string, id: string, owner: string, o: AttemptOutcome): Promise<boolean> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      status: o.result === 'retry' ? 'pending' : o.result,
      next_attempt_at: o.nextAttemptAt,
      claimed_by: null,
      claimed_until: null,
      last_attempt_at: o.at,
      last_status: o.status,
      last_error: o.error,
      last_latency_ms: Math.round(o.latencyMs),
      finished_at: o.result === 'retry' ? null : o.at,
    }))
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .where('claimed_by', '=', owner)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  createdAt: string;
  lastAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  lastLatencyMs: number | null;
  nextAttemptAt: string | null;
}

/** An endpoint's most recent deliveries, newest first. */
export async function listDeliveries(db: DbOrTrx, endpointId: string, limit: number): Promise<DeliveryView[]> {
  const rows = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as v', 'v.id', 'd.event_id')
    .select([
      'd.id',
      'd.event_id',
      'v.type',
      'd.status',
      'd.attempts',
      'd.created_at',
      'd.last_attempt_at',
      'd.last_status',
      'd.last_error',
      'd.last_latency_ms',
      'd.next_attempt_at',
    ])
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('d.created_at', 'desc')
    .orderBy('d.seq', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    eventId: r.event_id,
    eventType: r.type,
    status: r.status,
    attempts: Number(r.attempts),
    createdAt: r.created_at,
    lastAttemptAt: r.last_attempt_at,
    lastStatus: r.last_status,
    lastError: r.last_error,
    lastLatencyMs: r.last_latency_ms,
    nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
  }));
}

/** The endpoint's delivery with this id. */
export async function findDelivery(db: DbOrTrx, endpointId: string, id: string): Promise<{ id: string; endpointId: string; eventId: string } | null> {
  const r = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id', 'event_id'])
    .where('endpoint_id', '=', endpointId)
    .where('id', '=', id)
    .executeTakeFirst();
  return r ? { id: r.id, endpointId: r.endpoint_id, eventId: r.event_id } : null;
}

/** When the oldest delivery still pending was created (null: none), for the outbox-age metric. */
export async function oldestPendingDelivery(db: DbOrTrx): Promise<string | null> {
  const r = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.min('created_at').as('oldest'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return (r?.oldest as string | null | undefined) ?? null;
}

/**
 * Deletes the events created before `before` with their deliveries (a delivery still
 * pending that long is dropped too), `batchRows` events a transaction (db/batches.ts).
 * Returns the events deleted.
 */
export async function purgeWebhookHistory(db: Db, before: string, batchRows = PURGE_BATCH_ROWS): Promise<number> {
  return deleteInBatches(
    (limit) =>
      runTransaction(db, async (trx) => {
        const ids = (await trx.selectFrom('webhook_events').select('id').where('created_at', '<', before).orderBy('created_at').limit(limit).execute()).map(
          (r) => r.id,
        );
        if (ids.length === 0) return 0;
        await trx.deleteFrom('webhook_deliveries').where('event_id', 'in', ids).execute();
        await trx.deleteFrom('webhook_events').where('id', 'in', ids).execute();
        return ids.length;
      }),
    batchRows,
  );
}

/** SQLite has one sender (its one process): at its start, any claim is a crashed run's, and is released. */
export async function releaseStaleClaims(db: DbOrTrx): Promise<void> {
  if (isPostgres(db)) return;
  await db.updateTable('webhook_deliveries').set({ claimed_by: null, claimed_until: null }).where('claimed_by', 'is not', null).execute();
}
