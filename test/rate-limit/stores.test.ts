import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { consume } from '../../src/rate-limit/limits.js';
import { DatabaseRateLimitStore, MemoryRateLimitStore, type RateLimitStore } from '../../src/rate-limit/stores.js';
import { createTestStorage, testEngines } from '../support/harness.js';

// conventions: one shared suite runs against every counter-store implementation.
type Factory = () => Promise<{ store: RateLimitStore; second?: RateLimitStore; close(): Promise<void> }>;

const handles: DatabaseHandle[] = [];
const dataDirs: string[] = [];
afterAll(async () => {
  for (const h of handles) await h.close();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

async function databaseStore(engine: 'sqlite' | 'postgres') {
  const storage = await createTestStorage(engine);
  dataDirs.push(storage.dataDir);
  const open = () => {
    const h = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    handles.push(h);
    return h;
  };
  const a = open();
  await migrateToLatest(a.db);
  // A second handle on the same database stands for a second service instance.
  const b = engine === 'postgres' ? open() : a;
  const store = new DatabaseRateLimitStore(a.db);
  const second = new DatabaseRateLimitStore(b.db);
  return {
    store,
    second,
    close: async () => {
      store.close();
      second.close();
    },
  };
}

const factories: Array<[string, Factory]> = [
  [
    'memory',
    () => {
      const store = new MemoryRateLimitStore();
      return Promise.resolve({ store, close: () => Promise.resolve(store.close()) });
    },
  ],
  ...testEngines().map((e): [string, Factory] => [`database (${e})`, () => databaseStore(e)]),
];

describe.each(factories)('rate-limit counter store: %s', (_name, factory) => {
  const minute = 60_000;
  const t0 = Date.UTC(2026, 10, 23, 10, 0, 0);

  it('counts hits per bucket within a fixed window and starts again in the next window', async () => {
    const { store, close } = await factory();
    expect([await store.hit('a', minute, t0), await store.hit('a', minute, t0 + 1000), await store.hit('a', minute, t0 + 59_999)]).toEqual([1, 2, 3]);
    expect(await store.hit('b', minute, t0 + 10)).toBe(1);
    expect(await store.hit('a', minute, t0 + minute)).toBe(1);
    await close();
  });

  it('peek reads the window without counting; unhit takes one hit back, never below zero, only in its window', async () => {
    const { store, close } = await factory();
    await store.hit('p', minute, t0);
    await store.hit('p', minute, t0 + 1);
    expect(await store.peek('p', minute, t0 + 2)).toBe(2);
    expect(await store.peek('p', minute, t0 + minute)).toBe(0);
    await store.unhit('p', minute, t0 + minute); // another window: nothing to take back
    expect(await store.peek('p', minute, t0 + 3)).toBe(2);
    await store.unhit('p', minute, t0 + 3);
    expect(await store.peek('p', minute, t0 + 4)).toBe(1);
    await store.unhit('p', minute, t0 + 5);
    await store.unhit('p', minute, t0 + 6);
    expect(await store.peek('p', minute, t0 + 7)).toBe(0);
    expect(await store.hit('p', minute, t0 + 8)).toBe(1);
    await close();
  });

  it('consume() allows the limit and refuses the next, with the headers', async () => {
    const { store, close } = await factory();
    const policy = { name: 'checkin', limit: 3, windowMs: minute };
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await consume(store, 'key_x', policy, t0 + 15_000));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(results.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0']);
    expect(results[3]?.retryAfterSeconds).toBe(45);
    expect(results[3]?.headers['x-ratelimit-reset']).toBe(String((t0 + minute) / 1000));
    expect(results[0]?.headers['ratelimit-policy']).toBe('"checkin";q=3;w=60');
    expect(results[3]?.headers.ratelimit).toBe('"checkin";r=0;t=45');
    await close();
  });

  it('with a shared database the counters are shared by every instance', async () => {
    const { store, second, close } = await factory();
    if (second && second !== store) {
      await store.hit('shared', minute, t0);
      await second.hit('shared', minute, t0);
      expect(await store.hit('shared', minute, t0)).toBe(3);
    }
    await close();
  });
});

describe('rate-limit counter store in memory: a reset of the key (innsync key reset-limits)', () => {
  const hour = 3_600_000;
  const t0 = Date.UTC(2026, 10, 23, 10, 0, 0);

  it('forgets the hits counted before forgetBefore, once: later hits with the same reset count on', async () => {
    const store = new MemoryRateLimitStore();
    for (let i = 0; i < 10; i++) await store.hit('sync:key_a', hour, t0 + i);
    expect(await store.hit('sync:key_a', hour, t0 + 100, null)).toBe(11);
    const resetAt = t0 + 200;
    expect(await store.hit('sync:key_a', hour, t0 + 300, resetAt)).toBe(1);
    expect(await store.hit('sync:key_a', hour, t0 + 400, resetAt)).toBe(2);
    // Another bucket counted before the reset starts again at its own next hit.
    await store.hit('list:key_a', hour, t0);
    expect(await store.hit('list:key_a', hour, t0 + 500, resetAt)).toBe(1);
    // A reset older than the count changes nothing.
    expect(await store.hit('sync:key_a', hour, t0 + 600, t0)).toBe(3);
    store.close();
  });
});
