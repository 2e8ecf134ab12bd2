import type { Engine } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { describeAnswer, isReplay, pmsPost, type Answer } from '../support/drill-http.js';
import { Instance, startInstances } from '../support/drill-instance.js';
import type { DrillResult } from '../support/drill-report.js';
import { addHotel, createStorage, invariantViolations } from '../support/drill-storage.js';

export interface SameKeyDrillOptions {
  engine: Engine;
  pgAdminUrl: string | null;
  /** PostgreSQL reached through this PgBouncer (transaction mode) in front of that cluster (test/support/drill-storage.ts). */
  pgBouncerPort?: number | null;
  rounds: number;
  /** PostgreSQL: the instances sharing the database (SQLite serves from one process). */
  instances: number;
}

type Scenario = 'checkin' | 'move' | 'checkout' | 'sync' | 'checkin, different bodies';
const SCENARIOS: Scenario[] = ['checkin', 'checkin', 'move', 'checkout', 'sync', 'checkin, different bodies'];

/**
 * Concurrent requests with one Idempotency-Key (10 to 20 at once, spread over the
 * instances), round after round. Exactly one is processed; every other gets that one's
 * stored response (a replay) or 409 IDEMPOTENCY_KEY_IN_USE, or, with a different body,
 * 422 IDEMPOTENCY_KEY_REUSED; the key then replays. Checked in the answers and in the
 * database (one stay, one activity entry).
 */
export async function sameKeyDrill(o: SameKeyDrillOptions): Promise<DrillResult> {
  const storage = await createStorage(o.engine, o.pgAdminUrl, o.pgBouncerPort ?? null);
  const violations: string[] = [];
  const instances: Instance[] = [];
  const tally: Record<string, number> = {};
  let requests = 0;
  try {
    instances.push(...(await startInstances(storage, o.instances)));
    for (let round = 0; round < o.rounds; round++) {
      const scenario = SCENARIOS[round % SCENARIOS.length] as Scenario;
      // A hotel and key pair per round: rate limits (60/min, sync 10/h) count per key.
      const hotel = await addHotel(storage.db, 1);
      const key = hotel.pairs[0]?.live ?? '';
      const slug = hotel.slug;
      const url = (i: number) => (instances[i % instances.length] as Instance).baseUrl;
      // Set-up (sequential): a guest in house for move and checkout.
      const g = { pmsGuestId: `P-${randomId(6)}`, lastName: 'Race', roomNumber: '100', checkInDate: '2026-11-23', checkOutDate: '2026-11-25' };
      if (scenario === 'move' || scenario === 'checkout' || scenario === 'sync') {
        const setUp = await pmsPost(url(0), slug, '/guests/checkin', key, `setup-${randomId(8)}`, g);
        if (setUp.status !== 200) violations.push(`round ${round + 1}: set-up check-in answered ${describeAnswer(setUp)}`);
      }
      // 10 to 20 at once; a sync key allows 10 requests an hour (docs/pms-interface.md, "Rate limits"), the replay after the round included.
      const n = scenario === 'sync' ? 5 + Math.floor(Math.random() * 5) : 10 + Math.floor(Math.random() * 11);
      const idem = `race-${round}-${randomId(8)}`;
      const bodies: Array<{ path: string; body: unknown }> = Array.from({ length: n }, (_, i) => {
        if (scenario === 'checkin') return { path: '/guests/checkin', body: { ...g, pmsGuestId: 'P-same', roomNumber: '200' } };
        if (scenario === 'checkin, different bodies') return { path: '/guests/checkin', body: { ...g, pmsGuestId: `P-diff-${i}`, roomNumber: `3${i}` } };
        if (scenario === 'move') return { path: '/guests/update', body: { pmsGuestId: g.pmsGuestId, roomNumber: '101' } };
        if (scenario === 'checkout') return { path: '/guests/checkout', body: { pmsGuestId: g.pmsGuestId } };
        return {
          path: '/guests/sync',
          body: {
            syncMode: 'full',
            guests: [
              { ...g, roomNumber: '102' },
              { ...g, pmsGuestId: 'P-synced', roomNumber: '103' },
            ],
          },
        };
      });
      const answers = await Promise.all(bodies.map((b, i) => pmsPost(url(i), slug, b.path, key, idem, b.body)));
      requests += answers.length;
      for (const a of answers) tally[describeAnswer(a)] = (tally[describeAnswer(a)] ?? 0) + 1;
      const label = `round ${round + 1} (${scenario}, ${n} requests)`;
      const originals = answers.filter((a) => a.status === 200 && !isReplay(a));
      if (originals.length !== 1) violations.push(`${label}: ${originals.length} requests processed (answers: ${answers.map(describeAnswer).join(', ')})`);
      const original = originals[0];
      const allowedErrors = scenario === 'checkin, different bodies' ? ['IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED'] : ['IDEMPOTENCY_KEY_IN_USE'];
      for (const a of answers) {
        if (a.status === 200) {
          if (isReplay(a) && original && !sameBody(a, original)) violations.push(`${label}: a replay differs from the original: ${JSON.stringify(a.body)}`);
        } else if (!(a.status === 409 || a.status === 422) || !allowedErrors.includes(a.body?.code as string)) {
          violations.push(`${label}: answered ${describeAnswer(a)}`);
        }
      }
      // Afterwards the key replays the original.
      if (original) {
        const again = await pmsPost(url(1), slug, bodies[answers.indexOf(original)]?.path ?? '', key, idem, bodies[answers.indexOf(original)]?.body);
        requests += 1;
        if (!isReplay(again) || !sameBody(again, original))
          violations.push(`${label}: the key sent again answered ${describeAnswer(again)} ${JSON.stringify(again.body)}`);
      }
      // The database: exactly one change.
      const action =
        scenario === 'move' ? 'guest.room_moved' : scenario === 'checkout' ? 'guest.checked_out' : scenario === 'sync' ? 'sync.completed' : 'guest.checked_in';
      const entries = await storage.db.selectFrom('activity_log').select('id').where('hotel_id', '=', hotel.id).where('action', '=', action).execute();
      // The set-up check-in is one more guest.checked_in entry (never the scenario's action otherwise).
      const setUpEntries = action === 'guest.checked_in' && (scenario === 'move' || scenario === 'checkout' || scenario === 'sync') ? 1 : 0;
      if (entries.length !== 1 + setUpEntries) violations.push(`${label}: ${entries.length - setUpEntries} ${action} activity entries (1 expected)`);
    }
    violations.push(...(await invariantViolations(storage.db)));
    for (const inst of instances) {
      if (!inst.alive) violations.push(`${inst.label} exited: ${JSON.stringify(inst.exit)}\n${inst.tail()}`);
    }
    return {
      drill: 'same key, concurrent',
      engine: storage.engine,
      figures: {
        rounds: o.rounds,
        instances: instances.length,
        requests,
        answers: JSON.stringify(tally),
        'processed twice or not at all': violations.filter((v) => v.includes('requests processed')).length,
      },
      violations,
    };
  } finally {
    await Promise.all(instances.map((i) => i.stop()));
    await storage.close();
  }
}

function sameBody(a: Answer, b: Answer): boolean {
  const strip = (x: Answer) => {
    const { _idempotent: _, ...rest } = x.body as Record<string, unknown>;
    return JSON.stringify(rest);
  };
  return strip(a) === strip(b);
}
