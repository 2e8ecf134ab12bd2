import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle, type DbOrTrx } from '../../src/db/database.js';
import { compiledInsert, compiledInsertRows, compiledShape } from '../../src/db/shapes.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// Compiled shapes (docs/architecture.md, "Compiled shapes"): a statement Kysely builds and
// compiles once per engine, then runs with each call's values. Run against the real
// database of each engine: every run writes and reads its own values, never the first
// run's; an undefined value is stored as NULL; a shape whose placeholder never reaches
// the statement is refused at its first run.

const activityRow = (hotelId: string, id: string, changes?: string) => ({
  id,
  hotel_id: hotelId,
  created_at: '2026-11-27T10:00:00.000Z',
  actor_type: 'system' as const,
  actor_id: null,
  actor_mode: null,
  action: 'sync.completed',
  guest_id: null,
  pms_guest_id: id,
  changes,
});

const insertActivity = compiledInsert('activity_log');

const findActivity = compiledShape((db: DbOrTrx, hotelId: string, pmsGuestId: string) =>
  db
    .selectFrom('activity_log')
    .select(['id', 'pms_guest_id', 'changes', 'action'])
    .where('hotel_id', '=', hotelId)
    .where('pms_guest_id', '=', pmsGuestId)
    .where('action', '=', 'sync.completed'),
);

describe.each(testEngines())('compiled shapes (%s)', (engine) => {
  let t: TestServer;
  let handle: DatabaseHandle;
  let hotelId: string;

  beforeAll(async () => {
    t = await startTestServer(engine);
    await t.server.close();
    handle = openDatabase({ databaseUrl: t.config.databaseUrl, dataDir: t.config.dataDir });
    hotelId = (await handle.db.selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;
  }, 60_000);
  afterAll(async () => {
    await handle?.close();
    await t?.close();
  });

  it('each run binds its own values; an undefined value is stored as NULL', async () => {
    const { db } = handle;
    await db.executeQuery(insertActivity(db, activityRow(hotelId, 'act_shape_one', '{"n":1}')));
    await db.executeQuery(insertActivity(db, activityRow(hotelId, 'act_shape_two', undefined)));
    await db.transaction().execute(async (trx) => {
      await trx.executeQuery(insertActivity(trx, activityRow(hotelId, 'act_shape_three', '{"n":3}')));
    });

    const read = async (id: string) => (await db.executeQuery(findActivity(db, hotelId, id))).rows;
    expect(await read('act_shape_one')).toEqual([{ id: 'act_shape_one', pms_guest_id: 'act_shape_one', changes: '{"n":1}', action: 'sync.completed' }]);
    expect(await read('act_shape_two')).toEqual([{ id: 'act_shape_two', pms_guest_id: 'act_shape_two', changes: null, action: 'sync.completed' }]);
    expect(await read('act_shape_three')).toEqual([{ id: 'act_shape_three', pms_guest_id: 'act_shape_three', changes: '{"n":3}', action: 'sync.completed' }]);
    expect(await read('act_shape_none')).toEqual([]);
  });

  it('a row with other columns gets a statement of its own', async () => {
    const { db } = handle;
    const { changes: _, ...withoutChanges } = activityRow(hotelId, 'act_shape_four');
    await db.executeQuery(insertActivity(db, withoutChanges));
    const rows = (await db.executeQuery(findActivity(db, hotelId, 'act_shape_four'))).rows;
    expect(rows).toEqual([{ id: 'act_shape_four', pms_guest_id: 'act_shape_four', changes: null, action: 'sync.completed' }]);
  });

  it('many rows: every row stored once with its own values, across statements of 32, 8, 4 and 1 rows, ON CONFLICT applied to each', async () => {
    const insertRows = compiledInsertRows('activity_log', (q) => q.onConflict((oc) => oc.column('id').doNothing()));
    const { db } = handle;
    const ids = Array.from({ length: 45 }, (_, i) => `act_rows_${i}`);
    const statements = insertRows(
      db,
      ids.map((id, i) => activityRow(hotelId, id, `{"i":${i}}`)),
    );
    expect(statements.map((s) => s.parameters.length / 10)).toEqual([32, 8, 4, 1]);
    await db.transaction().execute(async (trx) => {
      for (const s of statements) await trx.executeQuery(s);
      // The same rows again, in statements compiled before: the conflict clause keeps each once.
      for (const s of insertRows(
        trx,
        ids.slice(0, 40).map((id) => activityRow(hotelId, id, '{"again":true}')),
      ))
        await trx.executeQuery(s);
    });
    const rows = await db.selectFrom('activity_log').select(['id', 'changes']).where('id', 'like', 'act_rows_%').orderBy('id').execute();
    expect(rows).toHaveLength(45);
    expect(new Map(rows.map((r) => [r.id, r.changes]))).toEqual(new Map(ids.map((id, i) => [id, `{"i":${i}}`])));
  });

  it('many rows with different columns: consecutive rows with the same columns share a statement', () => {
    const insertRows = compiledInsertRows('activity_log');
    const full = activityRow(hotelId, 'a', '{}');
    const { changes: _, ...partial } = activityRow(hotelId, 'b');
    const statements = insertRows(handle.db, [full, full, partial, partial, partial, full]);
    expect(statements.map((s) => s.parameters.length)).toEqual([20, 18, 9, 10]);
  });

  it('a placeholder that does not reach the statement is refused at the first run', () => {
    const careless = compiledShape((db: DbOrTrx, hotelId: string, _unused: string) => db.selectFrom('hotels').select('id').where('id', '=', hotelId));
    expect(() => careless(handle.db, hotelId, 'x')).toThrow(/value\(s\) at 1 do not reach the statement/);
  });
});
