import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { guestDataFromCheckin, normalizeRoomNumber, type GuestData } from '../../src/domain/guest.js';
import { PLAN_STEP, planSync, planSyncSteps, summarize, type ListedGuest, type RosterEntry } from '../../src/domain/sync-plan.js';

// Small value pools so that generated rosters and lists overlap often.
const roomArb = fc.constantFrom(...Array.from({ length: 30 }, (_, i) => String(i + 1)));
const idArb = fc.constantFrom(...Array.from({ length: 25 }, (_, i) => `P${i}`));
const nameArb = fc.constantFrom('Lovelace', 'Hopper', 'Turing', 'Noether');
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

const dataArb: fc.Arbitrary<GuestData> = fc.record({
  firstName: optional(fc.constantFrom('Ada', 'Grace')),
  lastName: nameArb,
  phone: optional(fc.constantFrom('+4930123456', '+15551234567')),
  roomNumber: roomArb,
  checkInDate: fc.constantFrom('2026-11-20', '2026-11-21'),
  checkOutDate: fc.constantFrom('2026-11-25', '2026-11-28'),
  language: optional(fc.constantFrom('en', 'de')),
  adults: optional(fc.integer({ min: 0, max: 3 })),
  children: optional(fc.integer({ min: 0, max: 3 })),
  nationality: optional(fc.constantFrom('DE', 'GB')),
  email: optional(fc.constantFrom('a@example.com', 'b@example.com')),
});

/** A roster that obeys the invariants: unique rooms, unique active pmsGuestIds. */
const rosterArb: fc.Arbitrary<RosterEntry[]> = fc
  .uniqueArray(fc.record({ pmsGuestId: optional(idArb), data: dataArb }), { selector: (e) => e.data.roomNumber, maxLength: 20 })
  .map((entries) => {
    const seen = new Set<string>();
    return entries
      .filter((e) => e.pmsGuestId === null || (!seen.has(e.pmsGuestId) && seen.add(e.pmsGuestId)))
      .map((e, i) => ({ id: `g${i}`, source: e.pmsGuestId === null ? ('receptionist' as const) : ('pms' as const), pmsGuestId: e.pmsGuestId, data: e.data }));
  });

/** A valid list: unique pmsGuestIds and rooms; optional fields absent, null or set. */
const listArb: fc.Arbitrary<ListedGuest[]> = fc
  .uniqueArray(
    fc.record({
      pmsGuestId: idArb,
      data: dataArb,
      absent: fc.subarray(['firstName', 'phone', 'language', 'adults', 'children', 'nationality', 'email'] as const),
      pad: fc.boolean(),
    }),
    {
      selector: (g) => g.pmsGuestId,
      maxLength: 20,
    },
  )
  .map((items) => {
    const rooms = new Set<string>();
    return items
      .filter((g) => !rooms.has(g.data.roomNumber) && rooms.add(g.data.roomNumber))
      .map((g) => {
        const listed: Record<string, unknown> = { pmsGuestId: g.pmsGuestId, ...g.data, roomNumber: g.pad ? ` ${g.data.roomNumber} ` : g.data.roomNumber };
        for (const f of g.absent) delete listed[f];
        return listed as ListedGuest;
      });
  });

/** What applying a plan does to a roster: the model the database apply must match. */
function applyPlan(roster: RosterEntry[], plan: ReturnType<typeof planSync>): Map<string, GuestData> {
  const out = new Map<string, GuestData>();
  const gone = new Set(plan.checkOut.map((g) => g.id));
  const next = new Map(plan.update.map((u) => [u.guest.id, u.next]));
  for (const g of roster) if (!gone.has(g.id)) out.set(g.id, next.get(g.id) ?? g.data);
  plan.checkIn.forEach((c, i) => out.set(`new${i}`, c.data));
  return out;
}

describe('sync planner (pure), generated rosters and lists', () => {
  it('applying the plan yields PMS guests equal to the list; absent fields keep stored values; receptionist guests untouched', () => {
    fc.assert(
      fc.property(rosterArb, listArb, (roster, list) => {
        const plan = planSync(roster, list);
        const after = applyPlan(roster, plan);
        const byId = new Map(roster.filter((g) => g.source === 'pms').map((g) => [g.pmsGuestId, g]));
        const pmsAfter = new Map<string, GuestData>();
        for (const [id, data] of after) {
          const entry = roster.find((g) => g.id === id);
          if (entry?.source === 'receptionist') {
            expect(data).toEqual(entry.data); // untouched
            continue;
          }
          const pmsGuestId = entry?.pmsGuestId ?? plan.checkIn[Number(id.slice(3))]?.pmsGuestId;
          pmsAfter.set(String(pmsGuestId), data);
        }
        expect([...pmsAfter.keys()].sort()).toEqual(list.map((g) => g.pmsGuestId).sort());
        for (const listed of list) {
          const stored = byId.get(listed.pmsGuestId);
          const expected: GuestData = stored
            ? {
                ...stored.data,
                ...Object.fromEntries(Object.entries(listed).filter(([k]) => k !== 'pmsGuestId')),
                roomNumber: normalizeRoomNumber(listed.roomNumber),
              }
            : guestDataFromCheckin(listed);
          expect(pmsAfter.get(listed.pmsGuestId)).toEqual(expected);
        }
        // Receptionist guests are never updated or checked out, and each counts once.
        const receptionist = roster.filter((g) => g.source === 'receptionist');
        expect(plan.manualSkipped).toEqual(receptionist);
        for (const g of [...plan.checkOut, ...plan.update.map((u) => u.guest)]) expect(g.source).toBe('pms');
      }),
    );
  });

  it('the counts add up: received = checkedIn + updated + unchanged', () => {
    fc.assert(
      fc.property(rosterArb, listArb, (roster, list) => {
        const s = summarize(planSync(roster, list), list.length);
        expect(s.received).toBe(s.checkedIn + s.updated + s.unchanged);
        expect(s.checkedOut).toBe(roster.filter((g) => g.source === 'pms' && !list.some((l) => l.pmsGuestId === g.pmsGuestId)).length);
        expect(s.manualSkipped).toBe(roster.filter((g) => g.source === 'receptionist').length);
      }),
    );
  });

  it('reports exactly the listed guests whose room a receptionist guest holds', () => {
    fc.assert(
      fc.property(rosterArb, listArb, (roster, list) => {
        const held = new Set(roster.filter((g) => g.source === 'receptionist').map((g) => g.data.roomNumber));
        const expected = list.filter((g) => held.has(normalizeRoomNumber(g.roomNumber))).map((g) => g.pmsGuestId);
        expect(planSync(roster, list).conflicts.map((c) => c.pmsGuestId)).toEqual(expected);
      }),
    );
  });

  it('planning the resulting roster again finds everything unchanged', () => {
    fc.assert(
      fc.property(rosterArb, listArb, (roster, list) => {
        const plan = planSync(roster, list);
        const after = applyPlan(roster, plan);
        const ids = new Map<string, string | null>(roster.map((g) => [g.id, g.pmsGuestId]));
        plan.checkIn.forEach((c, i) => ids.set(`new${i}`, c.pmsGuestId));
        const roster2: RosterEntry[] = [...after].map(([id, data]) => ({
          id,
          data,
          pmsGuestId: ids.get(id) ?? null,
          source: ids.get(id) ? 'pms' : 'receptionist',
        }));
        const again = summarize(planSync(roster2, list), list.length);
        expect(again).toMatchObject({ checkedIn: 0, updated: 0, checkedOut: 0, unchanged: list.length });
      }),
    );
  });

  it('an empty list checks out every PMS guest', () => {
    fc.assert(
      fc.property(rosterArb, (roster) => {
        const plan = planSync(roster, []);
        expect(plan.checkOut.map((g) => g.id).sort()).toEqual(
          roster
            .filter((g) => g.source === 'pms')
            .map((g) => g.id)
            .sort(),
        );
      }),
    );
  });
});

describe('sync planner in steps (a 20,000-guest list planned a slice at a time)', () => {
  it('yields after every PLAN_STEP roster entries and listed guests, and plans what planSync plans', () => {
    const n = 2 * PLAN_STEP + 17;
    const data = (i: number): GuestData =>
      guestDataFromCheckin({ lastName: 'Lovelace', roomNumber: String(i), checkInDate: '2026-11-23', checkOutDate: i % 3 === 0 ? '2026-11-27' : '2026-11-26' });
    // Half of the roster listed again (a third of those changed), half gone; as many new guests.
    const roster: RosterEntry[] = Array.from({ length: n }, (_, i) => ({ id: `g${i}`, source: 'pms', pmsGuestId: `P${i}`, data: data(i) }));
    const list: ListedGuest[] = Array.from({ length: n }, (_, i) => {
      const j = i % 2 === 0 ? i : n + i;
      return { pmsGuestId: `P${j}`, lastName: 'Lovelace', roomNumber: String(j), checkInDate: '2026-11-23', checkOutDate: '2026-11-26' };
    });
    const steps = planSyncSteps(roster, list);
    let yields = 0;
    let next = steps.next();
    for (; !next.done; next = steps.next()) yields++;
    // Two full steps of the roster, two of the list, and one before the check-outs are collected.
    expect(yields).toBe(5);
    expect(next.value).toEqual(planSync(roster, list));
    expect(summarize(next.value, n)).toMatchObject({ checkedIn: n - Math.ceil(n / 2), checkedOut: n - Math.ceil(n / 2) });
  });
});
