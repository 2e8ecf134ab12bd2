import type { Engine } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { issueKeyPair } from '../../src/operations.js';
import { describeAnswer, isReplay, pmsPost } from '../support/drill-http.js';
import { sleep, startOn, type Instance } from '../support/drill-instance.js';
import type { DrillResult } from '../support/drill-report.js';
import { addHotel, createStorage, invariantViolations, sqliteIntegrity, type DrillStorage } from '../support/drill-storage.js';

export interface SyncKillDrillOptions {
  engine: Engine;
  pgAdminUrl: string | null;
  /** PostgreSQL reached through this PgBouncer (transaction mode) in front of that cluster (test/support/drill-storage.ts). */
  pgBouncerPort?: number | null;
  guests: number;
  kills: number;
}

type Listed = { pmsGuestId: string; lastName: string; firstName: string; roomNumber: string; checkInDate: string; checkOutDate: string };

/**
 * SIGKILL while a large sync is being processed, at a random moment between sending it
 * and its expected end. After each kill the roster is exactly the one before the sync or
 * exactly the submitted list (docs/pms-interface.md, "Full sync": one transaction, never
 * half applied); the sync sent again with its key then leaves exactly the list, and is
 * applied once.
 */
export async function syncKillDrill(o: SyncKillDrillOptions): Promise<DrillResult> {
  const storage = await createStorage(o.engine, o.pgAdminUrl, o.pgBouncerPort ?? null);
  const violations: string[] = [];
  const outcomes = { 'roster as before': 0, 'roster as the list': 0 };
  let instance: Instance | null = null;
  const start = () => startOn(storage, 'server');
  try {
    instance = await start();
    const hotel = await addHotel(storage.db, 1);
    let list: Listed[] = Array.from({ length: o.guests }, (_, i) => guestOf(i, 'A'));
    // A sync key may send 10 requests an hour (docs/pms-interface.md, "Rate limits"): each round issues a new key pair.
    const sync = async (inst: Instance, guests: Listed[], idem: string) => {
      const pair = hotel.pairs[0];
      if (!pair) throw new Error('no key');
      return pmsPost(inst.baseUrl, hotel.slug, '/guests/sync', pair.live, idem, { syncMode: 'full', guests }, 120_000);
    };
    const first = await sync(instance, list, `sync-${randomId(8)}`);
    if (first.status !== 200) throw new Error(`the first sync answered ${describeAnswer(first)}`);
    const took = first.receivedAt - first.sentAt;
    let syncs = 1;
    let nextId = o.guests;
    for (let k = 0; k < o.kills; k++) {
      hotel.pairs[0] = await issueKeyPair(storage.db, hotel.slug);
      // The next list: 10 % moved and renamed, 10 % gone, 10 % new.
      const tenth = Math.max(1, Math.floor(list.length / 10));
      const kept = list.slice(tenth);
      const next = kept.map((g, i) => (i < tenth ? { ...g, firstName: `${g.firstName}x`, roomNumber: `${g.roomNumber}-${k}` } : g));
      for (let i = 0; i < tenth; i++) next.push(guestOf(nextId++, 'A'));
      const idem = `sync-${randomId(8)}`;
      const pending = sync(instance, next, idem);
      await sleep(Math.random() * took);
      instance.kill('SIGKILL');
      await instance.exited;
      const answer = await pending;
      if (storage.engine === 'sqlite') {
        const integrity = await sqliteIntegrity(storage.dataDir);
        if (integrity !== 'ok') violations.push(`kill ${k + 1}: SQLite integrity check: ${integrity}`);
      }
      const roster = await activeRoster(storage, hotel.id);
      const before = same(roster, list);
      const after = same(roster, next);
      if (before) outcomes['roster as before'] += 1;
      else if (after) outcomes['roster as the list'] += 1;
      else violations.push(`kill ${k + 1}: the roster is neither the one before the sync nor the list (${roster.size} active guests; half applied)`);
      if (answer.status === 200 && !after) violations.push(`kill ${k + 1}: the sync was acknowledged but its list is not the roster`);
      instance = await start();
      // The PMS sends it again with its key: processed now, or replayed if it had committed.
      const again = await sync(instance, next, idem);
      syncs += 1;
      if (again.status !== 200) violations.push(`kill ${k + 1}: the sync sent again answered ${describeAnswer(again)}`);
      if (after && again.status === 200 && !isReplay(again)) violations.push(`kill ${k + 1}: the sync had committed, but sending it again processed it anew`);
      if (!same(await activeRoster(storage, hotel.id), next)) violations.push(`kill ${k + 1}: after the sync was sent again, the roster is not the list`);
      list = next;
    }
    const completed = await storage.db
      .selectFrom('activity_log')
      .select('id')
      .where('hotel_id', '=', hotel.id)
      .where('action', '=', 'sync.completed')
      .execute();
    if (completed.length !== syncs) violations.push(`${completed.length} sync.completed entries for ${syncs} syncs (each applied once)`);
    violations.push(...(await invariantViolations(storage.db)));
    return {
      drill: 'kill during a large sync',
      engine: storage.engine,
      figures: {
        guests: o.guests,
        kills: o.kills,
        'sync time (ms)': took,
        ...outcomes,
        'half applied': violations.filter((v) => v.includes('half applied')).length,
      },
      violations,
    };
  } finally {
    await instance?.stop();
    await storage.close();
  }
}

function guestOf(i: number, tag: string): Listed {
  return {
    pmsGuestId: `P${i}`,
    lastName: `Guest ${i}`,
    firstName: `${tag}${i}`,
    roomNumber: String(1000 + i),
    checkInDate: '2026-11-23',
    checkOutDate: '2026-11-27',
  };
}

async function activeRoster(storage: DrillStorage, hotelId: string): Promise<Map<string, string>> {
  const rows = await storage.db
    .selectFrom('guests')
    .select(['pms_guest_id', 'room_number', 'first_name'])
    .where('hotel_id', '=', hotelId)
    .where('status', '=', 'active')
    .execute();
  return new Map(rows.map((r) => [r.pms_guest_id ?? '', `${r.room_number}|${r.first_name ?? ''}`]));
}

function same(roster: Map<string, string>, list: Listed[]): boolean {
  return roster.size === list.length && list.every((g) => roster.get(g.pmsGuestId) === `${g.roomNumber}|${g.firstName}`);
}
