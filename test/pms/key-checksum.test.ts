import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { insertKeyPair } from '../../src/db/repositories/api-key.repository.js';
import { sha256Hex } from '../../src/domain/ids.js';
import { hotelIdOf, withoutRequestId } from '../support/dashboard-client.js';
import { directDatabaseUrl, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// README.md, "The API": every key issued is `pms_live_` or `pms_test_`,
// 32 base62 characters and the base62 CRC32 of all before it in 6; a key of that shape whose
// checksum fails is refused before any database lookup. Keys of the earlier shape work on.

/** The README's expression for secret scanners, as written there. */
const SCANNER_PATTERN = /\bpms_(live|test)_[0-9A-Za-z]{38}\b/;

/** The README's recipe, written here on its own: the CRC32 of a key's first 41 characters, in base62, 6 characters. */
function checksumOf(body: string): string {
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let n = crc32(body);
  let text = '';
  for (let i = 0; i < 6; i++) {
    text = alphabet[n % 62] + text;
    n = Math.floor(n / 62);
  }
  return text;
}

const readmeChecksumHolds = (key: string): boolean => checksumOf(key.slice(0, -6)) === key.slice(-6);

/** The key with its character at `index` replaced by another base62 character. */
const flipped = (key: string, index: number): string => key.slice(0, index) + (key[index] === 'a' ? 'b' : 'a') + key.slice(index + 1);

describe.each(testEngines())('checksummed API keys (%s)', (engine) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  it('every new key has the scanner shape and a checksum the README recipe verifies; each pair is new', async () => {
    const seen = new Set<string>();
    for (const key of [t.keys.live, t.keys.test]) {
      expect(key).toMatch(SCANNER_PATTERN);
      expect(key.length).toBe(47);
      expect(readmeChecksumHolds(key), key).toBe(true);
      seen.add(key);
    }
    expect(t.keys.live.startsWith('pms_live_')).toBe(true);
    expect(t.keys.test.startsWith('pms_test_')).toBe(true);
    expect(seen.size).toBe(2);
    // A random string of the same shape almost never holds (1 in 2^32).
    const random = `pms_live_${randomBytes(48)
      .toString('base64')
      .replace(/[^0-9A-Za-z]/g, '')
      .slice(0, 38)}`;
    expect(readmeChecksumHolds(random)).toBe(false);
  });

  it('a key of the new shape with a wrong checksum gets the same 401 as any unknown key; a changed random part too', async () => {
    const unknown = await t.api('GET', `${t.pmsBase}/guests`, { key: `pms_live_${'A'.repeat(32)}` });
    expect(unknown.status).toBe(401);
    for (const index of [12, t.keys.live.length - 1]) {
      const bad = flipped(t.keys.live, index);
      expect(readmeChecksumHolds(bad)).toBe(false);
      const res = await t.api('GET', `${t.pmsBase}/guests`, { key: bad });
      expect(res.status).toBe(401);
      expect(withoutRequestId(res.body)).toEqual(withoutRequestId(unknown.body));
    }
    expect((await t.api('GET', `${t.pmsBase}/guests`, { key: t.keys.live })).status).toBe(200);
  });

  it('a key issued before checksums (32 base64url characters) keeps working until revoked', async () => {
    const db = t.server.database.db;
    const old = { live: `pms_live_${randomBytes(24).toString('base64url')}`, test: `pms_test_${randomBytes(24).toString('base64url')}` };
    const hotelId = await hotelIdOf(db, t.slug);
    const restrictions = { networks: null, expiresOn: null, readOnly: false };
    await insertKeyPair(db, {
      pairId: `key_old_${engine}`,
      hotelId,
      liveHash: sha256Hex(old.live),
      testHash: sha256Hex(old.test),
      now: new Date().toISOString(),
      restrictions,
    });
    expect(old.live).not.toMatch(SCANNER_PATTERN);
    expect((await t.api('GET', `${t.pmsBase}/guests`, { key: old.live })).status).toBe(200);
    expect((await t.api('GET', `${t.pmsBase}/guests`, { key: old.test })).status).toBe(200);
  });

  it.skipIf(engine !== 'postgres')(
    'no database lookup: while api_keys is locked, a bad checksum is answered 401 and a well-formed unknown key waits',
    async () => {
      const holder = new pg.Client({ connectionString: directDatabaseUrl(t.config) });
      const watcher = new pg.Client({ connectionString: directDatabaseUrl(t.config) });
      // Ended however the test ends (a refusal that waited for the lock times the test out).
      onTestFinished(async () => {
        await holder.end();
        await watcher.end();
      });
      await holder.connect();
      await watcher.connect();
      {
        await holder.query('begin');
        await holder.query('lock table api_keys in access exclusive mode');
        // A key of the new shape whose checksum holds: it needs the lookup, so it waits for the lock.
        const body = `pms_live_${'B'.repeat(32)}`;
        const wellFormed = body + checksumOf(body);
        let settled = false;
        const waiting = t.api('GET', `${t.pmsBase}/guests`, { key: wellFormed }).finally(() => {
          settled = true;
        });
        // The server's key lookups (the only reads by key_hash) waiting for a lock.
        const waiters = async (): Promise<number> =>
          Number(
            (await watcher.query("select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike 'select%key_hash%'")).rows[0].n,
          );
        await expect.poll(waiters).toBe(1);
        const refused = await t.api('GET', `${t.pmsBase}/guests`, { key: flipped(wellFormed, wellFormed.length - 1) });
        expect(refused.status).toBe(401);
        expect(refused.body.code).toBe('UNAUTHORIZED');
        // The lookup still waits: the refusal above did not need the table.
        expect(await waiters()).toBe(1);
        expect(settled).toBe(false);
        await holder.query('rollback');
        const answered = await waiting;
        expect(answered.status).toBe(401);
      }
    },
  );
});
