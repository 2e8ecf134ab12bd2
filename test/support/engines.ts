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
