import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// Every table the code's schema (src/db/schema.ts, `Database`) names exists once the
// migrations have run, on both engines: a migration whose statement was built but never
// executed fails here rather than at a user's first use of the table.

function schemaTables(): string[] {
  const text = fs.readFileSync(new URL('../../src/db/schema.ts', import.meta.url), 'utf8');
  const body = /export interface Database \{([^}]*)\}/.exec(text)?.[1] ?? '';
  return [...body.matchAll(/^\s+(\w+): \w+;/gm)].map((m) => m[1] ?? '').sort();
}

/** Tables of one engine only: PostgreSQL keeps a body's guest keys in its row (migration 0020). */
const NOT_ON: Record<string, string[]> = { postgres: ['request_log_guest_keys'], sqlite: [] };

describe.each(testEngines())('the migrated schema (%s)', (engine) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  it('has every table src/db/schema.ts names', async () => {
    const expected = schemaTables();
    expect(expected.length).toBeGreaterThan(20);
    const present = new Set((await t.server.database.db.introspection.getTables()).map((table) => table.name));
    expect(expected.filter((name) => !present.has(name) && !(NOT_ON[engine] ?? []).includes(name))).toEqual([]);
  });
});
