import { asLongWork, uniqueViolation, type DbOrTrx } from '../db/database.js';
import { ApiError } from '../errors.js';
import { planSync, planSyncSteps, summarize, type ListedGuest, type RoomConflict, type SyncPlan } from '../domain/sync-plan.js';
import type { ActivityEntry, Actor } from '../db/repositories/activity.repository.js';
import {
  checkOutMany,
  insertAssignments,
  insertManyPmsGuests,
  readActiveRoster,
  releaseRoomsOf,
  updateManyGuestData,
} from '../db/repositories/roster-batch.repository.js';
import type { RosterChange } from '../events/roster-events.js';
import {
  activityForUpdate,
  checkOutEntry,
  initialChanges,
  roomOccupiedError,
  updateAction,
  writeRoster,
  type RosterDeps,
  type TransactionHooks,
} from './roster-service.js';
import { guestSnapshot, type GuestSnapshot } from './guest-object.js';
import { Turns } from './turns.js';
import { inSpan } from '../tracing/spans.js';

/** Rows per statement of the sync's writes: one part's statement is built in one slice (roster/turns.ts). */
const ROWS_PER_PART = 500;

/**
 * A list of this many guests or more is long work (asLongWork): on SQLite its transaction
 * runs in the long writer's thread (docs/architecture.md, SQLite: long work beside short
 * requests). Below it, the statements' messages to that thread would cost more than the
 * turns they give.
 */
const LONG_SYNC_GUESTS = 1000;

export interface SyncResult {
  plan: SyncPlan;
  summary: ReturnType<typeof summarize>;
  /** Ids of the new stays, in the order of plan.checkIn. */
  checkedInIds: string[];
}

/** 409 ROOM_OCCUPIED of a sync whose list puts a guest in a room hotel staff gave someone else. */
export function syncRoomConflictError(
  conflict: Pick<RoomConflict, 'roomNumber' | 'pmsGuestId'> & {
    holder: Pick<RoomConflict['holder'], 'pmsGuestId'> & { data: Pick<RoomConflict['holder']['data'], 'lastName' | 'checkInDate'> };
  },
): ApiError {
  const { holder } = conflict;
  return roomOccupiedError(`Room ${conflict.roomNumber} (listed for ${conflict.pmsGuestId}) is held by a guest entered by hotel staff; nothing was changed.`, {
    pmsGuestId: holder.pmsGuestId,
    lastName: holder.data.lastName,
    checkInDate: holder.data.checkInDate,
  });
}

/**
 * docs/pms-interface.md, "Full sync": reconciles the hotel's PMS guests with the full list in one transaction,
 * in the fixed order check-outs → updates (room moves: every mover's old room is freed
 * before any new one is taken, so swaps and rotations succeed) → check-ins. Any room
 * conflict rolls everything back: 409 ROOM_OCCUPIED.
 */
export async function syncRoster(
  deps: RosterDeps,
  hotelId: string,
  actor: Actor,
  list: ListedGuest[],
  hooks: TransactionHooks<SyncResult>,
): Promise<SyncResult> {
  const started = performance.now();
  try {
    const write = (): Promise<SyncResult> =>
      writeRoster(deps, hotelId, hooks, async (trx, now) => {
        // A list of 20,000 guests makes each phase a long stretch of work: it runs in slices,
        // other requests get turns of the event loop between them, and each statement carries
        // a part of the rows (docs/architecture.md, SQLite: long work beside short requests).
        const turns = new Turns();
        const plan = await turns.run(planSyncSteps(await readActiveRoster(trx, hotelId), list));
        const [conflict] = plan.conflicts;
        if (conflict) throw syncRoomConflictError(conflict);
        await turns.turn();

        const checkedInIds = await applySyncPlan(trx, hotelId, plan, now, turns);

        const summary = summarize(plan, list.length);
        const result: SyncResult = { plan, summary, checkedInIds };
        const changed = await eventsForSync(result, turns);
        const activity = await activityForSync(hotelId, actor, plan, checkedInIds, summary, now, turns);
        await turns.turn();
        return { result, changed, activity, guests: () => syncedGuests(result, now, turns) };
      });
    // docs/architecture.md, "Traces": the sync's span carries its counts.
    const synced = await inSpan('roster.sync', { 'innsync.sync.received': list.length }, async (span) => {
      const r = await (list.length >= LONG_SYNC_GUESTS ? asLongWork(write) : write());
      const { checkedIn, updated, checkedOut } = r.summary;
      span?.setAttributes({ 'innsync.sync.checked_in': checkedIn, 'innsync.sync.updated': updated, 'innsync.sync.checked_out': checkedOut });
      return r;
    });
    // A replay (StoredResponse) or a refusal throws before this: only syncs that ran are measured.
    deps.metrics?.synced((performance.now() - started) / 1000, list.length);
    return synced;
  } catch (err) {
    // Every roster write of the hotel waits for the hotel's lock, so another request
    // cannot take a listed room between the plan and the writes; this is a safety net.
    if (uniqueViolation(err) === 'active_room' || uniqueViolation(err) === 'active_pms_guest') {
      const plan = planSync(await readActiveRoster(deps.db, hotelId), list);
      const [conflict] = plan.conflicts;
      throw conflict
        ? syncRoomConflictError(conflict)
        : roomOccupiedError('A listed room was taken by a concurrent request; nothing was changed. Retry the sync.', null);
    }
    throw err;
  }
}

/** The plan's writes, in its order: check-outs, updates, the movers' old rooms freed, their new rooms taken, check-ins; the new guests' ids. */
async function applySyncPlan(trx: DbOrTrx, hotelId: string, plan: SyncPlan, now: string, turns: Turns): Promise<string[]> {
  await turns.inParts(plan.checkOut, ROWS_PER_PART, (part) =>
    checkOutMany(
      trx,
      hotelId,
      part.map((g) => g.id),
      now,
    ),
  );

  await turns.inParts(plan.update, ROWS_PER_PART, (part) =>
    updateManyGuestData(
      trx,
      hotelId,
      part.map((u) => ({ id: u.guest.id, data: u.next })),
      now,
    ),
  );
  const movers = plan.update.filter((u) => u.changes.roomNumber);
  await turns.inParts(movers, ROWS_PER_PART, (part) =>
    releaseRoomsOf(
      trx,
      hotelId,
      part.map((u) => u.guest.id),
      now,
    ),
  );
  await turns.inParts(movers, ROWS_PER_PART, (part) =>
    insertAssignments(
      trx,
      hotelId,
      part.map((u) => ({ guestId: u.guest.id, roomNumber: u.next.roomNumber })),
      now,
    ),
  );

  return (await turns.inParts(plan.checkIn, ROWS_PER_PART, (part) => insertManyPmsGuests(trx, hotelId, part, now))).flat();
}

/** The guests a sync changed, as they are after it (their creation time is read only if an event needs it). */
async function syncedGuests(r: SyncResult, now: string, turns: Turns): Promise<GuestSnapshot[]> {
  return [
    ...(await turns.map(r.plan.checkOut, (g) => guestSnapshot(g.data, { id: g.id, pmsGuestId: g.pmsGuestId, source: 'pms', createdAt: null, updatedAt: now }))),
    ...(await turns.map(r.plan.update, (u) =>
      guestSnapshot(u.next, { id: u.guest.id, pmsGuestId: u.guest.pmsGuestId, source: 'pms', createdAt: null, updatedAt: now }),
    )),
    ...(await turns.map(r.plan.checkIn, (c, i) =>
      guestSnapshot(c.data, { id: r.checkedInIds[i] ?? '', pmsGuestId: c.pmsGuestId, source: 'pms', createdAt: now, updatedAt: now }),
    )),
  ];
}

async function activityForSync(
  hotelId: string,
  actor: Actor,
  plan: SyncPlan,
  checkedInIds: string[],
  summary: SyncResult['summary'],
  at: string,
  turns: Turns,
): Promise<ActivityEntry[]> {
  return [
    ...(await turns.map(plan.checkOut, (g) => checkOutEntry(hotelId, actor, { id: g.id, pmsGuestId: g.pmsGuestId, roomNumber: g.data.roomNumber }, at))),
    ...(await turns.flatMap(plan.update, (u) => activityForUpdate(hotelId, actor, { id: u.guest.id, pmsGuestId: u.guest.pmsGuestId }, u.changes, at))),
    ...(await turns.map(plan.checkIn, (c, i): ActivityEntry => ({
      hotelId,
      actor,
      action: 'guest.checked_in',
      guestId: checkedInIds[i] ?? null,
      pmsGuestId: c.pmsGuestId,
      changes: initialChanges(c.data),
      at,
    }))),
    { hotelId, actor, action: 'sync.completed', guestId: null, pmsGuestId: null, changes: summary, at },
  ];
}

async function eventsForSync(r: SyncResult, turns: Turns): Promise<RosterChange['changes']> {
  return [
    ...(await turns.map(r.plan.checkOut, (g) => ({
      action: 'guest.checked_out' as const,
      guestId: g.id,
      pmsGuestId: g.pmsGuestId,
      roomNumber: g.data.roomNumber,
    }))),
    ...(await turns.map(r.plan.update, (u) => ({
      action: updateAction(u.changes),
      guestId: u.guest.id,
      pmsGuestId: u.guest.pmsGuestId,
      roomNumber: u.next.roomNumber,
    }))),
    ...(await turns.map(r.plan.checkIn, (c, i) => ({
      action: 'guest.checked_in' as const,
      guestId: r.checkedInIds[i] ?? '',
      pmsGuestId: c.pmsGuestId,
      roomNumber: c.data.roomNumber,
    }))),
  ];
}
