import { uniqueViolation } from '../db/database.js';
import { ApiError } from '../errors.js';
import { planSync, summarize, type ListedGuest, type RoomConflict, type SyncPlan } from '../domain/sync-plan.js';
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
import type { GuestSnapshot } from './guest-object.js';
import type { GuestData } from '../domain/guest.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

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
 * spec 4.5: reconciles the hotel's PMS guests with the full list in one transaction,
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
    const synced = await writeRoster(deps, hotelId, hooks, async (trx, now) => {
      const plan = planSync(await readActiveRoster(trx, hotelId), list);
      const [conflict] = plan.conflicts;
      if (conflict) throw syncRoomConflictError(conflict);
      await nextTurn();

      await checkOutMany(
        trx,
        plan.checkOut.map((g) => g.id),
        now,
      );

      await updateManyGuestData(
        trx,
        plan.update.map((u) => ({ id: u.guest.id, data: u.next })),
        now,
      );
      const movers = plan.update.filter((u) => u.changes.roomNumber);
      await releaseRoomsOf(
        trx,
        movers.map((u) => u.guest.id),
        now,
      );
      await insertAssignments(
        trx,
        hotelId,
        movers.map((u) => ({ guestId: u.guest.id, roomNumber: u.next.roomNumber })),
        now,
      );

      const checkedInIds = await insertManyPmsGuests(trx, hotelId, plan.checkIn, now);

      const summary = summarize(plan, list.length);
      const result: SyncResult = { plan, summary, checkedInIds };
      // A list of 20,000 guests makes each of these a long stretch of work: other requests
      // get a turn of the event loop between them (docs/architecture.md, SQLite: long work).
      await nextTurn();
      const changed = eventsForSync(result);
      await nextTurn();
      const activity = activityForSync(hotelId, actor, plan, checkedInIds, summary, now);
      await nextTurn();
      const guests = syncedGuests(result, now);
      await nextTurn();
      return { result, changed, activity, guests };
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

/** The guests a sync changed, as they are after it (their creation time is read only if an event needs it). */
function syncedGuests(r: SyncResult, now: string): GuestSnapshot[] {
  const snapshot = (id: string, pmsGuestId: string | null, data: GuestData, createdAt: string | null): GuestSnapshot => ({
    ...data,
    id,
    pmsGuestId,
    source: 'pms',
    createdAt,
    updatedAt: now,
  });
  return [
    ...r.plan.checkOut.map((g) => snapshot(g.id, g.pmsGuestId, g.data, null)),
    ...r.plan.update.map((u) => snapshot(u.guest.id, u.guest.pmsGuestId, u.next, null)),
    ...r.plan.checkIn.map((c, i) => snapshot(r.checkedInIds[i] ?? '', c.pmsGuestId, c.data, now)),
  ];
}

function activityForSync(hotelId: string, actor: Actor, plan: SyncPlan, checkedInIds: string[], summary: SyncResult['summary'], at: string): ActivityEntry[] {
  const entries: ActivityEntry[] = [];
  for (const g of plan.checkOut) entries.push(checkOutEntry(hotelId, actor, { id: g.id, pmsGuestId: g.pmsGuestId, roomNumber: g.data.roomNumber }, at));
  for (const u of plan.update) {
    entries.push(...activityForUpdate(hotelId, actor, { id: u.guest.id, pmsGuestId: u.guest.pmsGuestId }, u.changes, at));
  }
  plan.checkIn.forEach((c, i) => {
    entries.push({
      hotelId,
      actor,
      action: 'guest.checked_in',
      guestId: checkedInIds[i] ?? null,
      pmsGuestId: c.pmsGuestId,
      changes: initialChanges(c.data),
      at,
    });
  });
  entries.push({ hotelId, actor, action: 'sync.completed', guestId: null, pmsGuestId: null, changes: summary, at });
  return entries;
}

function eventsForSync(r: SyncResult): RosterChange['changes'] {
  const out: RosterChange['changes'] = [];
  for (const g of r.plan.checkOut) out.push({ action: 'guest.checked_out', guestId: g.id, pmsGuestId: g.pmsGuestId, roomNumber: g.data.roomNumber });
  for (const u of r.plan.update) {
    out.push({
      action: updateAction(u.changes),
      guestId: u.guest.id,
      pmsGuestId: u.guest.pmsGuestId,
      roomNumber: u.next.roomNumber,
    });
  }
  r.plan.checkIn.forEach((c, i) =>
    out.push({ action: 'guest.checked_in', guestId: r.checkedInIds[i] ?? '', pmsGuestId: c.pmsGuestId, roomNumber: c.data.roomNumber }),
  );
  return out;
}
