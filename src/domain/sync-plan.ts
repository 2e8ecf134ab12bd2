import {
  applyChanges,
  diffGuest,
  guestDataFromCheckin,
  normalizeRoomNumber,
  type ChangeSet,
  type GuestData,
  type GuestSource,
  type NewGuestData,
} from './guest.js';

/** An active guest of the hotel as the planner sees it. */
export interface RosterEntry {
  id: string;
  source: GuestSource;
  pmsGuestId: string | null;
  data: GuestData;
}

/** A guest of the submitted list (the check-in field set, validated). */
export type ListedGuest = NewGuestData & { pmsGuestId: string };

interface PlannedUpdate {
  guest: RosterEntry;
  changes: ChangeSet;
  next: GuestData;
}

interface PlannedCheckIn {
  pmsGuestId: string;
  data: GuestData;
}

export interface RoomConflict {
  pmsGuestId: string;
  roomNumber: string;
  holder: RosterEntry;
}

export interface SyncPlan {
  /** Step 1 (docs/pms-interface.md, "Full sync"): PMS guests absent from the list. */
  checkOut: RosterEntry[];
  /** Step 2: listed guests whose submitted fields differ (room moves included). */
  update: PlannedUpdate[];
  /** Step 3: listed guests with no active stay. */
  checkIn: PlannedCheckIn[];
  unchanged: RosterEntry[];
  /** Active receptionist guests: never touched, each counted once. */
  manualSkipped: RosterEntry[];
  /** Listed guests whose target room a receptionist guest holds: the sync must fail. */
  conflicts: RoomConflict[];
}

/** Listed guests planned between two yields of planSyncSteps. */
export const PLAN_STEP = 250;

/**
 * The reconciliation of a hotel's active roster against a PMS's full list. Pure: no I/O.
 * Assumes the list has no duplicate pmsGuestId or roomNumber (validated before). Fields
 * absent from a listed guest are not compared (docs/pms-interface.md, "Full sync": absent
 * keeps).
 */
export function planSync(roster: readonly RosterEntry[], list: readonly ListedGuest[]): SyncPlan {
  const steps = planSyncSteps(roster, list);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/**
 * planSync in steps: the generator yields after every PLAN_STEP roster entries or listed
 * guests, so its caller can let other work run between two (roster/turns.ts); its result is
 * planSync's plan.
 */
export function* planSyncSteps(roster: readonly RosterEntry[], list: readonly ListedGuest[]): Generator<void, SyncPlan, void> {
  const pmsById = new Map<string, RosterEntry>();
  const manualSkipped: RosterEntry[] = [];
  const receptionistRooms = new Map<string, RosterEntry>();
  for (const [i, entry] of roster.entries()) {
    if (i % PLAN_STEP === PLAN_STEP - 1) yield;
    if (entry.source === 'receptionist' || entry.pmsGuestId === null) {
      manualSkipped.push(entry);
      receptionistRooms.set(entry.data.roomNumber, entry);
    } else {
      pmsById.set(entry.pmsGuestId, entry);
    }
  }

  const listed = new Set<string>();
  const update: PlannedUpdate[] = [];
  const checkIn: PlannedCheckIn[] = [];
  const unchanged: RosterEntry[] = [];
  const conflicts: RoomConflict[] = [];
  for (const [i, item] of list.entries()) {
    if (i % PLAN_STEP === PLAN_STEP - 1) yield;
    const pmsGuestId = item.pmsGuestId;
    listed.add(pmsGuestId);
    const room = normalizeRoomNumber(item.roomNumber);
    const holder = receptionistRooms.get(room);
    if (holder) conflicts.push({ pmsGuestId, roomNumber: room, holder });
    const current = pmsById.get(pmsGuestId);
    if (!current) {
      checkIn.push({ pmsGuestId, data: guestDataFromCheckin(item) });
      continue;
    }
    // diffGuest compares the 11 data fields only, so the item itself is the patch (no
    // copy without pmsGuestId: one object less per listed guest).
    const changes = diffGuest(current.data, item);
    if (Object.keys(changes).length === 0) unchanged.push(current);
    else update.push({ guest: current, changes, next: applyChanges(current.data, changes) });
  }
  yield;
  const checkOut = [...pmsById.values()].filter((g) => !listed.has(g.pmsGuestId ?? ''));
  return { checkOut, update, checkIn, unchanged, manualSkipped, conflicts };
}

/** docs/pms-interface.md, "Full sync": the six counts. `received` is the length of the submitted array. */
export function summarize(plan: SyncPlan, received: number) {
  return {
    received,
    checkedIn: plan.checkIn.length,
    updated: plan.update.length,
    checkedOut: plan.checkOut.length,
    unchanged: plan.unchanged.length,
    manualSkipped: plan.manualSkipped.length,
  };
}
