import pg from 'pg';
import { randomId } from '../../src/domain/ids.js';
import { LOCK_TIMEOUT_MS } from '../../src/db/postgres-driver.js';
import { HOTEL_LOCK_SPACE } from '../../src/db/repositories/hotel.repository.js';
import { pgBouncerInstalled, startPgBouncer } from '../support/pgbouncer.js';
import { describeAnswer, pmsPost } from '../support/drill-http.js';
import { startOn } from '../support/drill-instance.js';
import { killDrill } from './kill.js';
import { roomRaceDrill } from './room-race.js';
import type { DrillResult } from '../support/drill-report.js';
import { addHotel, createStorage } from '../support/drill-storage.js';

export interface PoolerDrillOptions {
  pgAdminUrl: string;
  quick: boolean;
}

/**
 * The service through PgBouncer in transaction mode (docs/deployment.md, "Through
 * PgBouncer"): the kill and room-race drills with DATABASE_URL at PgBouncer and the LISTEN
 * session direct, then the lock timeout through it. Another client holds a hotel's lock in
 * a transaction through the same PgBouncer; a check-in of that hotel must be answered 503
 * with Retry-After once LOCK_TIMEOUT_MS has passed (the limit travels with each BEGIN, not
 * with a session PgBouncer does not keep), and the same request sent again once the lock
 * is gone must be processed, once.
 */
export async function poolerDrill(o: PoolerDrillOptions): Promise<DrillResult> {
  if (!pgBouncerInstalled()) throw new Error('PgBouncer is not installed: apt-get install pgbouncer (Debian), then run the drill again');
  const bouncer = await startPgBouncer(o.pgAdminUrl);
  const figures: DrillResult['figures'] = {};
  const violations: string[] = [];
  try {
    const kill = await killDrill({
      engine: 'postgres',
      pgAdminUrl: o.pgAdminUrl,
      pgBouncerPort: bouncer.port,
      kills: o.quick ? 3 : 15,
      clients: o.quick ? 8 : 30,
      pairsPerHotel: o.quick ? 4 : 8,
      runMs: o.quick ? [500, 1500] : [1000, 4000],
      logLossWindowMs: o.quick ? 1000 : 250,
    });
    const race = await roomRaceDrill({ engine: 'postgres', pgAdminUrl: o.pgAdminUrl, pgBouncerPort: bouncer.port, rounds: o.quick ? 100 : 500, instances: 2 });
    for (const [name, r] of [
      ['kill', kill],
      ['room-race', race],
    ] as const) {
      for (const [k, v] of Object.entries(r.figures)) figures[`${name}: ${k}`] = v;
      violations.push(...r.violations.map((v) => `${name}: ${v}`));
    }
    const lock = await lockTimeoutThroughPooler(o.pgAdminUrl, bouncer.port);
    Object.assign(figures, lock.figures);
    violations.push(...lock.violations);
  } finally {
    bouncer.stop();
  }
  return { drill: 'pooler', engine: 'postgres (PgBouncer, transaction mode)', figures, violations };
}

async function lockTimeoutThroughPooler(pgAdminUrl: string, bouncerPort: number): Promise<Pick<DrillResult, 'figures' | 'violations'>> {
  const violations: string[] = [];
  const figures: DrillResult['figures'] = {};
  const storage = await createStorage('postgres', pgAdminUrl, bouncerPort);
  const instance = await startOn(storage, 'instance');
  const holder = new pg.Client({ connectionString: storage.databaseUrl ?? '' });
  try {
    const hotel = await addHotel(storage.db, 1);
    const key = hotel.pairs[0]?.live ?? '';
    await holder.connect();
    await holder.query('begin');
    await holder.query('select pg_advisory_xact_lock($1, hashtext($2))', [HOTEL_LOCK_SPACE, hotel.id]);
    const guest = { pmsGuestId: `P-${randomId(6)}`, lastName: 'Locked', roomNumber: '101', checkInDate: '2026-11-23', checkOutDate: '2026-11-26' };
    const idem = `lock-${randomId(8)}`;
    const blocked = await pmsPost(instance.baseUrl, hotel.slug, '/guests/checkin', key, idem, guest, 60_000);
    const waited = blocked.receivedAt - blocked.sentAt;
    figures['lock timeout: answer while the hotel lock is held'] = describeAnswer(blocked);
    figures['lock timeout: waited (ms)'] = waited;
    figures['lock timeout: Retry-After'] = blocked.headers['retry-after'] ?? 'none';
    if (blocked.status !== 503) violations.push(`a check-in behind a held hotel lock was answered ${describeAnswer(blocked)}, not 503`);
    if (!blocked.headers['retry-after']) violations.push('the 503 behind a held hotel lock has no Retry-After');
    // Bounded by the lock timeout: not answered before it, and not left waiting long after it.
    if (waited < LOCK_TIMEOUT_MS - 100 || waited > LOCK_TIMEOUT_MS + 10_000)
      violations.push(`a check-in behind a held hotel lock waited ${waited} ms; the lock timeout is ${LOCK_TIMEOUT_MS} ms`);
    await holder.query('rollback');
    const again = await pmsPost(instance.baseUrl, hotel.slug, '/guests/checkin', key, idem, guest);
    figures['lock timeout: the same request once the lock is gone'] = describeAnswer(again);
    if (again.status !== 200 || again.body?.status !== 'created')
      violations.push(`the check-in sent again after the lock was released was answered ${describeAnswer(again)}, not 200 created`);
    const rows = await storage.db.selectFrom('guests').select('id').where('hotel_id', '=', hotel.id).execute();
    if (rows.length !== 1) violations.push(`the check-in sent twice left ${rows.length} guests, not 1`);
  } finally {
    await holder.end().catch(() => undefined);
    await instance.stop();
    await storage.close();
  }
  return { figures, violations };
}
