import type { Engine } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { describeAnswer, pmsPost, type Answer } from '../support/drill-http.js';
import { Instance, startInstances } from '../support/drill-instance.js';
import type { DrillResult } from '../support/drill-report.js';
import { addHotel, createStorage, invariantViolations } from '../support/drill-storage.js';

export interface RoomRaceDrillOptions {
  engine: Engine;
  pgAdminUrl: string | null;
  /** PostgreSQL reached through this PgBouncer (transaction mode) in front of that cluster (test/support/drill-storage.ts). */
  pgBouncerPort?: number | null;
  rounds: number;
  instances: number;
}

type RaceOp =
  | { kind: 'checkin'; pms: string; room: string }
  | { kind: 'move'; pms: string; room: string }
  | { kind: 'checkout'; pms: string }
  | { kind: 'sync'; rooms: Record<string, string> };

type Roster = Map<string, string>;

const CANDIDATES: RaceOp[] = [
  { kind: 'move', pms: 'A', room: 'X' },
  { kind: 'move', pms: 'B', room: 'X' },
  { kind: 'checkin', pms: 'C', room: 'X' },
  { kind: 'checkin', pms: 'D', room: 'X' },
  { kind: 'move', pms: 'A', room: '2' },
  { kind: 'move', pms: 'B', room: '1' },
  { kind: 'checkout', pms: 'A' },
  { kind: 'checkout', pms: 'B' },
  { kind: 'sync', rooms: { A: '2', B: '1' } },
  { kind: 'sync', rooms: { A: 'X', B: '2' } },
];

/** What the service answers `op` on `roster`, and the roster after it (docs/pms-interface.md, "Guest states", serially). */
function model(roster: Roster, op: RaceOp): { answer: string; next: Roster } {
  const next = new Map(roster);
  const holder = (room: string) => [...roster].find(([, r]) => r === room)?.[0];
  if (op.kind === 'checkin') {
    if (roster.has(op.pms)) return { answer: `409 GUEST_ALREADY_CHECKED_IN in ${roster.get(op.pms)}`, next };
    if (holder(op.room) !== undefined) return { answer: `409 ROOM_OCCUPIED by ${holder(op.room)}`, next };
    next.set(op.pms, op.room);
    return { answer: '200', next };
  }
  if (op.kind === 'move') {
    const from = roster.get(op.pms);
    if (from === undefined) return { answer: '404 GUEST_NOT_FOUND', next };
    if (from === op.room) return { answer: '200 {}', next };
    if (holder(op.room) !== undefined) return { answer: `409 ROOM_OCCUPIED by ${holder(op.room)}`, next };
    next.set(op.pms, op.room);
    return { answer: `200 ${from}->${op.room}`, next };
  }
  if (op.kind === 'checkout') {
    const from = roster.get(op.pms);
    if (from === undefined) return { answer: '404 GUEST_NOT_FOUND', next };
    next.delete(op.pms);
    return { answer: `200 ${from}`, next };
  }
  const listed = new Map(Object.entries(op.rooms));
  let checkedIn = 0;
  let updated = 0;
  let unchanged = 0;
  for (const [pms, room] of listed) {
    const was = roster.get(pms);
    if (was === undefined) checkedIn += 1;
    else if (was === room) unchanged += 1;
    else updated += 1;
  }
  const checkedOut = [...roster.keys()].filter((p) => !listed.has(p)).length;
  return { answer: `200 ${checkedIn}/${updated}/${checkedOut}/${unchanged}`, next: listed };
}

/** The answer in the model's words: status, code, and who a 409 names. */
function observed(op: RaceOp, a: Answer): string {
  if (a.body?.code === 'ROOM_OCCUPIED') return `409 ROOM_OCCUPIED by ${String(a.body.currentGuest?.pmsGuestId ?? 'nobody')}`;
  if (a.body?.code === 'GUEST_ALREADY_CHECKED_IN') return `409 GUEST_ALREADY_CHECKED_IN in ${String(a.body.roomNumber ?? 'nowhere')}`;
  if (a.status !== 200) return describeAnswer(a);
  const b = a.body as Record<string, unknown>;
  if (op.kind === 'checkin') return '200';
  if (op.kind === 'checkout') return `200 ${String(b.roomNumber)}`;
  if (op.kind === 'move') {
    const room = (b.changes as Record<string, { from: string; to: string }> | undefined)?.roomNumber;
    return room ? `200 ${room.from}->${room.to}` : '200 {}';
  }
  const s = b.summary as Record<string, number>;
  return `200 ${s.checkedIn}/${s.updated}/${s.checkedOut}/${s.unchanged}`;
}

function* permutations<T>(items: T[]): Generator<T[]> {
  if (items.length <= 1) {
    yield items;
    return;
  }
  for (let i = 0; i < items.length; i++) {
    const rest = [...items.slice(0, i), ...items.slice(i + 1)];
    for (const p of permutations(rest)) yield [items[i] as T, ...p];
  }
}

/** True when some serial order of the requests gives exactly these answers and this final roster. */
function explainable(initial: Roster, ops: RaceOp[], answers: string[], final: Roster): boolean {
  const order = ops.map((_, i) => i);
  for (const perm of permutations(order)) {
    let roster = initial;
    let ok = true;
    for (const i of perm) {
      const r = model(roster, ops[i] as RaceOp);
      if (r.answer !== answers[i]) {
        ok = false;
        break;
      }
      roster = r.next;
    }
    if (ok && roster.size === final.size && [...roster].every(([p, r]) => final.get(p) === r)) return true;
  }
  return false;
}

const describeOp = (op: RaceOp): string =>
  op.kind === 'sync' ? `sync ${JSON.stringify(op.rooms)}` : op.kind === 'checkout' ? `checkout ${op.pms}` : `${op.kind} ${op.pms}→${op.room}`;

/**
 * Concurrent room moves, swaps (a sync that exchanges two rooms), check-ins into one
 * room and check-outs, across the instances. Every round's answers and final roster must
 * be those of some serial order of its requests; no 5xx.
 */
export async function roomRaceDrill(o: RoomRaceDrillOptions): Promise<DrillResult> {
  const storage = await createStorage(o.engine, o.pgAdminUrl, o.pgBouncerPort ?? null);
  const violations: string[] = [];
  const instances: Instance[] = [];
  const tally: Record<string, number> = {};
  let requests = 0;
  let unexplained = 0;
  try {
    instances.push(...(await startInstances(storage, o.instances)));
    for (let round = 0; round < o.rounds; round++) {
      const hotel = await addHotel(storage.db, 1);
      const key = hotel.pairs[0]?.live ?? '';
      const url = (i: number) => (instances[i % instances.length] as Instance).baseUrl;
      const person = (pms: string, room: string) => ({
        pmsGuestId: pms,
        lastName: `Guest ${pms}`,
        roomNumber: room,
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-26',
      });
      const initial: Roster = new Map([
        ['A', '1'],
        ['B', '2'],
      ]);
      for (const [pms, room] of initial) {
        const a = await pmsPost(url(0), hotel.slug, '/guests/checkin', key, `setup-${randomId(8)}`, person(pms, room));
        if (a.status !== 200) violations.push(`round ${round + 1}: set-up check-in of ${pms} answered ${describeAnswer(a)}`);
      }
      const count = 3 + Math.floor(Math.random() * 3);
      const ops = [...CANDIDATES].sort(() => Math.random() - 0.5).slice(0, count);
      const answers = await Promise.all(
        ops.map((op, i) => {
          const idem = `race-${randomId(10)}`;
          if (op.kind === 'checkin') return pmsPost(url(i), hotel.slug, '/guests/checkin', key, idem, person(op.pms, op.room));
          if (op.kind === 'move') return pmsPost(url(i), hotel.slug, '/guests/update', key, idem, { pmsGuestId: op.pms, roomNumber: op.room });
          if (op.kind === 'checkout') return pmsPost(url(i), hotel.slug, '/guests/checkout', key, idem, { pmsGuestId: op.pms });
          return pmsPost(url(i), hotel.slug, '/guests/sync', key, idem, { syncMode: 'full', guests: Object.entries(op.rooms).map(([p, r]) => person(p, r)) });
        }),
      );
      requests += ops.length;
      const said = ops.map((op, i) => observed(op, answers[i] as Answer));
      for (const s of said)
        tally[
          s
            .split(' ')
            .slice(0, 2)
            .join(' ')
            .replace(/^200 .*/, '200')
        ] =
          (tally[
            s
              .split(' ')
              .slice(0, 2)
              .join(' ')
              .replace(/^200 .*/, '200')
          ] ?? 0) + 1;
      const rows = await storage.db
        .selectFrom('guests')
        .select(['pms_guest_id', 'room_number'])
        .where('hotel_id', '=', hotel.id)
        .where('status', '=', 'active')
        .execute();
      const final: Roster = new Map(rows.map((r) => [r.pms_guest_id ?? '', r.room_number]));
      if (!explainable(initial, ops, said, final)) {
        unexplained += 1;
        violations.push(
          `round ${round + 1}: no serial order explains ${ops.map((op, i) => `${describeOp(op)} = ${said[i]}`).join('; ')}; final ${JSON.stringify([...final])}`,
        );
      }
    }
    violations.push(...(await invariantViolations(storage.db)));
    for (const inst of instances) if (!inst.alive) violations.push(`${inst.label} exited: ${JSON.stringify(inst.exit)}\n${inst.tail()}`);
    const fiveXX = Object.entries(tally)
      .filter(([k]) => k.startsWith('5'))
      .reduce((n, [, v]) => n + v, 0);
    return {
      drill: 'room race (moves, swaps, check-ins into one room)',
      engine: storage.engine,
      figures: {
        rounds: o.rounds,
        instances: instances.length,
        requests,
        answers: JSON.stringify(tally),
        '5xx': fiveXX,
        'rounds no serial order explains': unexplained,
      },
      violations,
    };
  } finally {
    await Promise.all(instances.map((i) => i.stop()));
    await storage.close();
  }
}
