import { sql } from 'kysely';
import type { Engine } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { describeAnswer, isReplay, pmsPost, type Answer } from '../support/drill-http.js';
import { sleep, startOn, type Instance } from '../support/drill-instance.js';
import type { DrillResult } from '../support/drill-report.js';
import { addHotel, createStorage, invariantViolations, type DrillStorage } from '../support/drill-storage.js';

export interface StallDrillOptions {
  engine: Engine;
  pgAdminUrl: string | null;
  /** PostgreSQL reached through this PgBouncer (transaction mode) in front of that cluster (test/support/drill-storage.ts). */
  pgBouncerPort?: number | null;
  /** How long the request stays stalled inside its transaction (the earlier takeover came after 60 s). */
  stallSeconds: number;
  /**
   * Each round stalls one request: 'resume' lets it finish, 'crash' kills its process
   * while it is stalled. PostgreSQL: 'commit' stalls it at COMMIT (every statement done),
   * 'mid' right after it changed the guest (before its response is stored). 'freeze'
   * (PostgreSQL): the database finishes the statement but the service's process is
   * stopped (SIGSTOP) inside the transaction, and continued after a retry settled it.
   */
  variants: Array<{ then: 'resume' | 'crash' | 'freeze'; at: 'commit' | 'mid' }>;
}

/**
 * A request held inside its transaction while the PMS, having had no answer, sends it
 * again with the same key (to the other instance on PostgreSQL). PostgreSQL: a trigger,
 * installed in the drill's own database, sleeps in the request's transaction (a stalled
 * database), at COMMIT or right after the guest's row changed. SQLite: the process is
 * stopped (SIGSTOP) right after the request was sent. The
 * request is processed exactly once, whatever happens: the retries wait and get 409
 * IDEMPOTENCY_KEY_IN_USE or the stored response, never a second processing.
 */
export async function stallDrill(o: StallDrillOptions): Promise<DrillResult> {
  const storage = await createStorage(o.engine, o.pgAdminUrl, o.pgBouncerPort ?? null);
  const violations: string[] = [];
  const tally: Record<string, number> = {};
  const instances: Instance[] = [];
  const start = (label: string) => startOn(storage, label);
  try {
    instances.push(await start('instance 1'));
    if (storage.engine === 'postgres') {
      instances.push(await start('instance 2'));
      await installStall(storage);
    }
    // SQLite has no stall position to choose, and its 'resume' is a frozen process: one round per outcome.
    const variants =
      storage.engine === 'sqlite' ? o.variants.filter((v, i) => v.then !== 'freeze' && o.variants.findIndex((w) => w.then === v.then) === i) : o.variants;
    for (const [round, { then: variant, at }] of variants.entries()) {
      const label = `round ${round + 1} (${storage.engine === 'postgres' ? `stalled at ${at === 'commit' ? 'COMMIT' : 'mid-transaction'}, ` : ''}${variant})`;
      const hotel = await addHotel(storage.db, 1);
      const key = hotel.pairs[0]?.live ?? '';
      const pmsGuestId = `P-${randomId(6)}`;
      const first = instances[0] as Instance;
      const setUp = await pmsPost(first.baseUrl, hotel.slug, '/guests/checkin', key, `setup-${randomId(8)}`, {
        pmsGuestId,
        lastName: 'Stall',
        firstName: 'Before',
        roomNumber: '1',
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-25',
      });
      if (setUp.status !== 200) violations.push(`${label}: set-up answered ${describeAnswer(setUp)}`);
      const idem = `stall-${randomId(10)}`;
      // A frozen process: the database stalls one second, the process stays stopped for the rest.
      const seconds = variant === 'freeze' ? 1 : o.stallSeconds;
      const body = { pmsGuestId, firstName: storage.engine === 'sqlite' ? 'After' : `${at === 'commit' ? 'STALL' : 'HOLD'}-${seconds}` };
      const send = (inst: Instance, timeoutMs = (o.stallSeconds + 30) * 1000) =>
        pmsPost(inst.baseUrl, hotel.slug, '/guests/update', key, idem, body, timeoutMs);
      const answers: Answer[] = [];
      const original = send(first);
      let retryTo: Instance;
      if (storage.engine === 'postgres') {
        await waitForStall(storage);
        if (variant === 'crash') first.kill('SIGKILL');
        if (variant === 'freeze') first.kill('SIGSTOP');
        retryTo = instances[1] as Instance;
        // The PMS retries, one request at a time, while the first is stalled (frozen: until
        // PostgreSQL ends the idle transaction and a retry is processed).
        // (PostgreSQL ends a transaction idle for 60 s: IDLE_IN_TRANSACTION_TIMEOUT_MS.)
        const stallEnds = Date.now() + (variant === 'freeze' ? Math.max(o.stallSeconds, 80) : o.stallSeconds) * 1000;
        while (Date.now() < stallEnds - 1000 && !(variant === 'freeze' && answers.some((a) => a.status === 200))) answers.push(await send(retryTo));
        if (variant === 'freeze') {
          first.kill('SIGCONT');
          if (!answers.some((a) => a.status === 200)) violations.push(`${label}: no retry was processed while the first request's process was frozen`);
        }
      } else {
        await sleep(Math.random() * 3);
        first.kill('SIGSTOP');
        const retry = send(first);
        await sleep(o.stallSeconds * 1000);
        if (variant === 'crash') {
          first.kill('SIGKILL');
          first.child.kill('SIGCONT');
        } else first.kill('SIGCONT');
        answers.push(await retry);
        retryTo = first;
      }
      const originalAnswer = await original;
      if (variant === 'crash') {
        await first.exited;
        instances[0] = await start('instance 1');
        if (storage.engine === 'sqlite') retryTo = instances[0];
      }
      // Then until it has an answer that settles it.
      for (let i = 0; i < 60 && !answers.some((a) => a.status === 200) && originalAnswer.status !== 200; i++) {
        answers.push(await send(retryTo));
        if (answers[answers.length - 1]?.status !== 200) await sleep(500);
      }
      const all = [originalAnswer, ...answers];
      for (const a of all) tally[describeAnswer(a)] = (tally[describeAnswer(a)] ?? 0) + 1;
      const fresh = all.filter((a) => a.status === 200 && !isReplay(a));
      const entries = await storage.db.selectFrom('activity_log').select('id').where('hotel_id', '=', hotel.id).where('action', '=', 'guest.updated').execute();
      const summary = `original: ${describeAnswer(originalAnswer)}; retries: ${answers.map(describeAnswer).join(', ')}`;
      if (entries.length !== 1) violations.push(`${label}: processed ${entries.length} times (${summary})`);
      if (fresh.length > 1) violations.push(`${label}: ${fresh.length} fresh 200 answers (${summary})`);
      const oks = all.filter((a) => a.status === 200).map((a) => JSON.stringify({ ...(a.body as object), _idempotent: undefined }));
      if (new Set(oks).size > 1) violations.push(`${label}: the 200 answers differ: ${[...new Set(oks)].join(' / ')}`);
      for (const a of all) {
        if (a.status >= 500 && a.status !== 503) violations.push(`${label}: answered ${describeAnswer(a)}`);
        if (a.status >= 400 && a.status < 500 && a.body?.code !== 'IDEMPOTENCY_KEY_IN_USE') violations.push(`${label}: answered ${describeAnswer(a)}`);
      }
    }
    violations.push(...(await invariantViolations(storage.db)));
    for (const inst of instances)
      if (!inst.alive && !inst.exit?.expected) violations.push(`${inst.label} exited: ${JSON.stringify(inst.exit)}\n${inst.tail()}`);
    return {
      drill: 'request stalled in its transaction, retried meanwhile',
      engine: storage.engine,
      figures: {
        rounds: variants.length,
        variants: variants.map((v) => (storage.engine === 'postgres' ? `${v.then} (stalled at ${v.at})` : v.then)).join(', '),
        'stall (s)': o.stallSeconds,
        answers: JSON.stringify(tally),
        'processed twice': violations.filter((v) => v.includes('processed 2') || v.includes('fresh 200')).length,
      },
      violations,
    };
  } finally {
    await Promise.all(instances.map((i) => i.stop()));
    await storage.close();
  }
}

/**
 * A stalled database, in the drill's own database only: an update that sets a first
 * name `STALL-<seconds>` sleeps that long when its transaction commits (a deferred
 * constraint trigger, after every statement of the request), `HOLD-<seconds>` at once
 * (while the guest's row is being updated, before the response is stored).
 */
async function installStall(storage: DrillStorage): Promise<void> {
  await sql`create or replace function drill_stall() returns trigger language plpgsql as $$
    begin
      if new.first_name like (tg_argv[0] || '-%') then perform pg_sleep(split_part(new.first_name, '-', 2)::float); end if;
      return new;
    end $$`.execute(storage.db);
  await sql`create constraint trigger drill_stall_commit after update on guests deferrable initially deferred for each row execute function drill_stall('STALL')`.execute(
    storage.db,
  );
  await sql`create trigger drill_stall_now before update on guests for each row execute function drill_stall('HOLD')`.execute(storage.db);
}

async function waitForStall(storage: DrillStorage): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const rows = await sql<{ n: number }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event = 'PgSleep'`.execute(
      storage.db,
    );
    if (Number(rows.rows[0]?.n ?? 0) > 0) return;
    await sleep(25);
  }
  throw new Error('the request never reached the stall');
}
