import type { Engine } from '../../src/db/database.js';

/** TEST_ENGINES=sqlite,postgres (the default: every test runs on both). */
export function testEngines(): Engine[] {
  const raw = process.env.TEST_ENGINES ?? 'sqlite,postgres';
  const list = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const e of list) if (e !== 'sqlite' && e !== 'postgres') throw new Error(`TEST_ENGINES: unknown engine ${e}`);
  return list as Engine[];
}

/**
 * The files whose PostgreSQL tests reach the database through PgBouncer in transaction
 * mode (docs/testing.md, "Through PgBouncer"): the roster, idempotency, sync, webhooks,
 * live changes across instances, and the drills. TEST_PG_POOLER=all sends every PostgreSQL test through it, none none.
 */
const THROUGH_PGBOUNCER = [
  /\/test\/pms\/(guest-lifecycle|hotel-lock|idempotency|round-trips|sync)\.test\.ts$/,
  /\/test\/webhooks\//,
  /\/test\/events\/roster-bus\.test\.ts$/,
  /\/test\/drill\//,
];

/** True when this test file's PostgreSQL databases are reached through the run's PgBouncer. */
export function viaPgBouncer(testPath: string = process.env.INNSYNC_TEST_PATH ?? ''): boolean {
  const mode = process.env.TEST_PG_POOLER ?? 'some';
  if (mode === 'none') return false;
  if (mode === 'all') return true;
  if (mode !== 'some') throw new Error(`TEST_PG_POOLER: ${mode} is not one of some, all, none`);
  return THROUGH_PGBOUNCER.some((p) => p.test(testPath));
}
