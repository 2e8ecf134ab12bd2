import { isPostgres, runTransaction, uniqueViolation, type Db, type DbOrTrx } from '../db/database.js';
import { ApiError, validationError } from '../errors.js';
import {
  applyChanges,
  compareRoomNumbers,
  diffGuest,
  guestDataFromCheckin,
  normalizeRoomNumber,
  refineGuestFields,
  type ChangeSet,
  type GuestData,
  type GuestPatch,
} from '../domain/guest.js';
import * as guests from '../db/repositories/guest.repository.js';
import { lockHotel } from '../db/repositories/hotel.repository.js';
import { insertActivity, type ActivityEntry, type Actor } from '../db/repositories/activity.repository.js';
import type { RosterChange, RosterEventBus } from '../events/roster-events.js';
import type { Metrics } from '../http/metrics.js';
import { readOutbox, writeEvents } from '../webhooks/events.js';
import { rosterEvents } from '../webhooks/roster-events.js';
import type { GuestSnapshot } from './guest-object.js';

export interface RosterDeps {
  db: Db;
  bus: RosterEventBus;
  /** The webhook sender, woken after a commit that wrote events; absent, they wait for its next poll. */
  outbox?: { wake(): void };
  /** Counts published changes and syncs (README.md, "Metrics": METRICS_PORT); absent, nothing is counted. */
  metrics?: Metrics;
}

/**
 * What a caller adds to a use case's transaction. The PMS API claims the request's
 * idempotency key in `begin` (the first statement, before any read) and stores its
 * response in `end`, so the change and its record commit together, or neither does
 * (docs/pms-interface.md, "Idempotency").
 */
export interface TransactionHooks<T> {
  begin(trx: DbOrTrx): Promise<void>;
  end(trx: DbOrTrx, result: T): Promise<void>;
}

export const NO_HOOKS: TransactionHooks<unknown> = { begin: () => Promise.resolve(), end: () => Promise.resolve() };

type ChangedGuests = RosterChange['changes'];

/** Activity entries written per statement by writeRoster. */
const ACTIVITY_PER_STATEMENT = 500;

/**
 * The one shape of every write to a hotel's roster: a transaction that runs `hooks.begin`,
 * takes the hotel's roster lock, does `work`, runs `hooks.end` and sends the change's
 * event; it runs again from the start after a deadlock or serialization failure
 * (runTransaction).
 *
 * Lock order: the idempotency record (hooks.begin), then the hotel's roster lock, then
 * guest rows. Every write that changes or removes guests holds the hotel's lock alone, so
 * those writes of one hotel run one after another and never wait on each other in a
 * cycle; check-ins (`shared`: they only insert) run beside each other, never beside those.
 * A duplicate request waits at its idempotency record, before it holds anything.
 *
 * On PostgreSQL a check-in, an update or a check-out takes three round trips
 * (docs/architecture.md, "Round trips on PostgreSQL"): BEGIN with the claim; the hotel's
 * lock, the outbox's read and the guest's locked read (a check-in: its inserts); the
 * writes, the answer, the NOTIFY and COMMIT. The lock, the outbox's read and every write
 * are queued (writeLater, readLater) and go, in this order, with the next statement that
 * must be answered at once.
 */
export async function writeRoster<T>(
  deps: RosterDeps,
  hotelId: string,
  hooks: TransactionHooks<T>,
  work: (trx: DbOrTrx, now: string) => Promise<RosterWrite<T>>,
  lock: 'exclusive' | 'shared' = 'exclusive',
  /** Told of an error `work` throws, in its transaction, on SQLite (answeringConflicts); it may throw another in its place. */
  onWorkError?: OnWorkError,
): Promise<T> {
  const { result, event, sent } = await runTransaction(deps.db, async (trx) => {
    await hooks.begin(trx);
    await lockHotel(trx, hotelId, lock);
    // Where the change's webhook events go, read under the hotel's lock, with the work's first read.
    const outbox = await readOutbox(trx, hotelId);
    const now = new Date().toISOString();
    let out: RosterWrite<T>;
    try {
      out = await work(trx, now);
    } catch (err) {
      // On SQLite a statement that broke a unique index leaves its transaction as it was, so it can still be read.
      if (onWorkError && !isPostgres(trx)) await onWorkError(err, trx);
      throw err;
    }
    // What the change records and tells, in its own transaction: its activity entries, its
    // webhook events (the outbox) and its idempotent answer.
    // In parts: a sync's 20,000 entries are many statements, each built in a short slice
    // while the event loop turns as each runs (docs/architecture.md, SQLite: long work).
    for (let i = 0; i < out.activity.length; i += ACTIVITY_PER_STATEMENT) await insertActivity(trx, out.activity.slice(i, i + ACTIVITY_PER_STATEMENT));
    const sent =
      out.activity.length > 0
        ? await writeEvents(
            trx,
            await outbox.get(),
            async () => rosterEvents(trx, hotelId, out.activity, typeof out.guests === 'function' ? await out.guests() : out.guests),
            now,
          )
        : [];
    await hooks.end(trx, out.result);
    // A write that changed nothing (an update with no differences, a sync in step) tells the dashboards nothing.
    const change: RosterChange | null = out.changed.length > 0 ? { hotelId, at: now, changes: out.changed } : null;
    if (change) await deps.bus.publishInTransaction(trx, change);
    return { result: out.result, event: change, sent: sent.length };
  });
  if (event) {
    deps.bus.committed(event);
    deps.metrics?.rosterEventPublished();
  }
  if (sent > 0) deps.outbox?.wake();
  return result;
}

/** What one roster write did: its answer, the guests whose board tiles changed, the activity it records and the guests as they now are. */
export interface RosterWrite<T> {
  result: T;
  changed: ChangedGuests;
  activity: ActivityEntry[];
  /**
   * The guests the activity entries name, after the change (for the webhook events): a
   * function when they are many to build (a sync's), called only when the hotel has an
   * endpoint to tell.
   */
  guests: GuestSnapshot[] | (() => Promise<GuestSnapshot[]>);
}

export interface CheckInResult {
  guest: guests.Guest;
}

export interface UpdateResult {
  guest: guests.Guest;
  changes: ChangeSet;
}

export interface CheckOutResult {
  guest: guests.Guest;
}

/** The 409 for a write that broke a unique index, and whether the guest in the way has left since. */
type Conflict = { error: ApiError; gone: boolean };

/** What writeRoster tells of an error its work threw, inside the transaction (answeringConflicts). */
export type OnWorkError = (err: unknown, trx: DbOrTrx) => Promise<void>;

/** A conflict explained inside the refused write's own transaction. */
class ExplainedConflict extends Error {
  constructor(readonly conflict: Conflict) {
    super(conflict.error.message);
  }
}

/**
 * Runs `write`; when it breaks a unique index, `explain` reads who is in the way and builds
 * the 409. On SQLite it reads inside the refused write's transaction, at once (`write`
 * hands `inside` to writeRoster): with group commit the transactions after it may already
 * have changed the room before a read after the rollback (docs/architecture.md, "SQLite:
 * group commit"). On PostgreSQL the failed statement ended the transaction, so it reads
 * after the rollback; when that guest has left meanwhile, the write runs again (at most
 * twice more), so the answer is one that some serial order of the requests explains,
 * never a 409 naming nobody.
 */
async function answeringConflicts<T>(
  db: Db,
  write: (inside: OnWorkError) => Promise<T>,
  explain: (err: unknown, db: DbOrTrx) => Promise<Conflict | null>,
): Promise<T> {
  const inside: OnWorkError = async (err, trx) => {
    const conflict = await explain(err, trx);
    if (conflict) throw new ExplainedConflict(conflict);
  };
  for (let attempt = 1; ; attempt++) {
    try {
      return await write(inside);
    } catch (err) {
      const conflict = err instanceof ExplainedConflict ? err.conflict : await explain(err, db);
      if (!conflict) throw err;
      if (!conflict.gone || attempt >= 3) throw conflict.error;
    }
  }
}

/** writeRoster, a broken unique index answered by the 409 `explain` builds (answeringConflicts). */
export function writeRosterAnsweringConflicts<T>(
  deps: RosterDeps,
  hotelId: string,
  hooks: TransactionHooks<T>,
  lock: 'exclusive' | 'shared',
  work: (trx: DbOrTrx, now: string) => Promise<RosterWrite<T>>,
  explain: (err: unknown, db: DbOrTrx) => Promise<Conflict | null>,
): Promise<T> {
  return answeringConflicts(deps.db, (inside) => writeRoster(deps, hotelId, hooks, work, lock, inside), explain);
}

/**
 * ROOM_OCCUPIED naming the room's holder (docs/pms-interface.md, "Errors": currentGuest), read after the
 * refused transaction rolled back. When the room is free by then, or held by the very
 * guest the refused write was moving (another write put it there meanwhile), the refusal
 * would name no one or the mover itself: `gone`, and answeringConflicts runs the write again.
 */
export async function roomOccupied(db: DbOrTrx, hotelId: string, roomNumber: string, moverId?: string): Promise<Conflict> {
  const found = await guests.findRoomHolder(db, hotelId, roomNumber);
  return { error: roomHeldError(roomNumber, found), gone: found === null || found.guestId === moverId };
}

/** 409 ROOM_OCCUPIED of a check-in or move into `roomNumber`, naming its holder. */
export function roomHeldError(roomNumber: string, holder: guests.RoomHolder | null): ApiError {
  return roomOccupiedError(`Room ${roomNumber} is held by another active guest.`, holder);
}

/**
 * The one shape of 409 ROOM_OCCUPIED, for every write that can meet it (check-in, update
 * or move, sync, walk-in, staff edit): the message and `currentGuest`, who holds the
 * room, or null when no one could be named.
 */
export function roomOccupiedError(message: string, holder: guests.RoomHolder | null): ApiError {
  const currentGuest = holder ? { pmsGuestId: holder.pmsGuestId, lastName: holder.lastName, checkInDate: holder.checkInDate } : null;
  return new ApiError('ROOM_OCCUPIED', { message, extra: { currentGuest } });
}

/** docs/pms-interface.md, "Guest states": (none) → active. 409 when the pmsGuestId is active or the room is held. */
export async function checkInGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  input: GuestPatch & Pick<GuestData, 'lastName' | 'roomNumber' | 'checkInDate' | 'checkOutDate'> & { pmsGuestId: string },
  hooks: TransactionHooks<CheckInResult> = NO_HOOKS,
): Promise<CheckInResult> {
  const data = guestDataFromCheckin(input);
  return writeRosterAnsweringConflicts(
    deps,
    hotelId,
    hooks,
    'shared',
    async (trx, now) => {
      const guest = await guests.insertActiveGuest(trx, { hotelId, source: 'pms', pmsGuestId: input.pmsGuestId, data, now });
      return {
        result: { guest },
        changed: [{ action: 'guest.checked_in', guestId: guest.id, pmsGuestId: input.pmsGuestId, roomNumber: data.roomNumber }],
        activity: [{ hotelId, actor, action: 'guest.checked_in', guestId: guest.id, pmsGuestId: guest.pmsGuestId, changes: initialChanges(data), at: now }],
        guests: [guest],
      };
    },
    async (err, db) => {
      const which = uniqueViolation(err);
      if (which === 'active_pms_guest') {
        const active = await guests.findActivePmsGuest(db, hotelId, input.pmsGuestId);
        return { error: alreadyCheckedInError(input.pmsGuestId, active), gone: active === null };
      }
      return which === 'active_room' ? roomOccupied(db, hotelId, data.roomNumber) : null;
    },
  );
}

/** 409 GUEST_ALREADY_CHECKED_IN, naming the active stay (null members when it ended meanwhile). */
export function alreadyCheckedInError(pmsGuestId: string, active: Pick<guests.Guest, 'id' | 'roomNumber'> | null): ApiError {
  return new ApiError('GUEST_ALREADY_CHECKED_IN', {
    message: `Guest ${pmsGuestId} is already checked in.`,
    extra: { guestId: active?.id ?? null, roomNumber: active?.roomNumber ?? null },
  });
}

/** A check-in's activity changes: every known field from null. */
export function initialChanges(data: GuestData): ChangeSet {
  const changes: ChangeSet = {};
  for (const [field, value] of Object.entries(data) as Array<[keyof GuestData, unknown]>) {
    if (value !== null) changes[field] = { from: null, to: value };
  }
  return changes;
}

/**
 * docs/pms-interface.md, "Update and room moves": only submitted fields change; a new roomNumber moves the guest (old
 * assignment released, new one created). 404 when no active PMS guest, 409 when the
 * target room is held.
 */
export async function updateGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  input: GuestPatch & { pmsGuestId: string },
  hooks: TransactionHooks<UpdateResult> = NO_HOOKS,
): Promise<UpdateResult> {
  const { pmsGuestId, ...patch } = input;
  return updateLocatedGuest(deps, hotelId, actor, (trx) => lockPmsGuestOr404(trx, hotelId, pmsGuestId), patch, hooks);
}

async function lockPmsGuestOr404(trx: DbOrTrx, hotelId: string, pmsGuestId: string): Promise<guests.Guest> {
  const stored = await guests.lockActivePmsGuest(trx, hotelId, pmsGuestId);
  if (!stored) throw guestNotFoundError(pmsGuestId);
  return stored;
}

/** 404 GUEST_NOT_FOUND of an update or checkout of `pmsGuestId`. */
export function guestNotFoundError(pmsGuestId: string): ApiError {
  return new ApiError('GUEST_NOT_FOUND', { message: `No active guest with pmsGuestId ${pmsGuestId}.` });
}

/**
 * The update of one active guest found (and locked) by `locate` inside the transaction:
 * the PMS finds it by pmsGuestId, staff by id. Absent keeps, null clears; a new room
 * moves the guest (old assignment released, new one created); 409 when the room is held.
 */
export async function updateLocatedGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  locate: (trx: DbOrTrx) => Promise<guests.Guest>,
  patch: GuestPatch,
  hooks: TransactionHooks<UpdateResult> = NO_HOOKS,
): Promise<UpdateResult> {
  let targetRoom: string | null = null;
  let moverId: string | undefined;
  return writeRosterAnsweringConflicts(
    deps,
    hotelId,
    hooks,
    'exclusive',
    async (trx, now) => {
      const stored = await locate(trx);
      // The date order also holds against the stored date the update does not send.
      const dateErrors = refineGuestFields(patch, '', stored).filter((e) => e.code === 'DATE_ORDER');
      if (dateErrors.length > 0) throw validationError(dateErrors);
      const changes = diffGuest(stored, patch);
      const next = applyChanges(stored, changes);
      const changed = Object.keys(changes).length > 0;
      if (changed) {
        await guests.updateGuestData(trx, hotelId, stored.id, next, now);
        if (changes.roomNumber) {
          targetRoom = next.roomNumber;
          moverId = stored.id;
          await guests.releaseRoom(trx, hotelId, stored.id, now);
          await guests.assignRoom(trx, hotelId, stored.id, next.roomNumber, now);
        }
      }
      const guest = { ...stored, ...next, updatedAt: changed ? now : stored.updatedAt };
      return {
        result: { guest, changes },
        changed: changed ? [{ action: updateAction(changes), guestId: guest.id, pmsGuestId: guest.pmsGuestId, roomNumber: guest.roomNumber }] : [],
        activity: changed ? activityForUpdate(hotelId, actor, stored, changes, now) : [],
        guests: [guest],
      };
    },
    async (err, db) => (uniqueViolation(err) === 'active_room' && targetRoom !== null ? roomOccupied(db, hotelId, targetRoom, moverId) : null),
  );
}

/** What an update is on the board: a room move when the room changed, else an update. */
export function updateAction(changes: ChangeSet): 'guest.room_moved' | 'guest.updated' {
  return changes.roomNumber ? 'guest.room_moved' : 'guest.updated';
}

/** A room move and other field changes are recorded as two entries (docs/pms-interface.md, "Update and room moves"). */
export function activityForUpdate(
  hotelId: string,
  actor: Actor,
  stored: Pick<guests.Guest, 'id' | 'pmsGuestId'>,
  changes: ChangeSet,
  at: string,
): ActivityEntry[] {
  const { roomNumber, ...rest } = changes;
  const entries: ActivityEntry[] = [];
  const base = { hotelId, actor, guestId: stored.id, pmsGuestId: stored.pmsGuestId, at };
  if (roomNumber) entries.push({ ...base, action: 'guest.room_moved', changes: { roomNumber } });
  if (Object.keys(rest).length > 0) entries.push({ ...base, action: 'guest.updated', changes: rest });
  return entries;
}

/** docs/pms-interface.md, "Guest states": active → checked out; frees the room at once. 404 when no active PMS guest. */
export async function checkOutGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  pmsGuestId: string,
  hooks: TransactionHooks<CheckOutResult> = NO_HOOKS,
): Promise<CheckOutResult> {
  return checkOutLocatedGuest(deps, hotelId, actor, (trx) => lockPmsGuestOr404(trx, hotelId, pmsGuestId), hooks);
}

/** Checks out the active guest that `locate` finds (and locks) inside the transaction. */
export async function checkOutLocatedGuest(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  locate: (trx: DbOrTrx) => Promise<guests.Guest>,
  hooks: TransactionHooks<CheckOutResult> = NO_HOOKS,
): Promise<CheckOutResult> {
  return writeRoster(deps, hotelId, hooks, async (trx, now) => {
    const stored = await locate(trx);
    await guests.releaseRoom(trx, hotelId, stored.id, now);
    await guests.markCheckedOut(trx, hotelId, stored.id, now);
    const guest: guests.Guest = { ...stored, status: 'checked_out', updatedAt: now };
    return {
      result: { guest },
      changed: [{ action: 'guest.checked_out', guestId: guest.id, pmsGuestId: guest.pmsGuestId, roomNumber: guest.roomNumber }],
      activity: [checkOutEntry(hotelId, actor, stored, now)],
      guests: [guest],
    };
  });
}

/** A check-out's activity entry: the room it freed. */
export function checkOutEntry(hotelId: string, actor: Actor, g: { id: string; pmsGuestId: string | null; roomNumber: string }, at: string): ActivityEntry {
  return {
    hotelId,
    actor,
    action: 'guest.checked_out',
    guestId: g.id,
    pmsGuestId: g.pmsGuestId,
    changes: { roomNumber: { from: g.roomNumber, to: null } },
    at,
  };
}

/** docs/pms-interface.md, "Guest list": active guests of both sources, in natural room order. */
export async function listGuests(db: Db, hotelId: string, filter: guests.GuestFilter = {}): Promise<guests.Guest[]> {
  const list = await guests.listActiveGuests(db, hotelId, {
    ...filter,
    roomNumber: filter.roomNumber === undefined ? undefined : normalizeRoomNumber(filter.roomNumber),
  });
  return list.sort((a, b) => compareRoomNumbers(a.roomNumber, b.roomNumber) || a.roomNumber.localeCompare(b.roomNumber));
}
