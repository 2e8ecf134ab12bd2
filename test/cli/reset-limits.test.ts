import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { startTestServer, testEngines, type ApiResponse, type TestServer } from '../support/harness.js';
import { firstInFreshWindow } from '../support/rate-limit-headers.js';
import { lines, parseJsonOutput, runCli, storageEnv, type CliResult } from './cli-helpers.js';

// `innsync key reset-limits <keyId>`: a developer locked out by the sync limit (10 an hour)
// resets both keys of the pair while the server runs. The server runs in this process, the
// command in its own, as in production: on SQLite the counters are in the server's memory.

describe.each(testEngines())('innsync key reset-limits (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
  });
  afterAll(() => t.close());

  const cli = (args: string[]): Promise<CliResult> => runCli(args, { env: storageEnv(t.config) });
  /** A full sync listing no guest: the hotel has none, so a live one changes nothing either. */
  const sync = (key: string): Promise<ApiResponse> => t.post(`${base}/guests/sync`, { syncMode: 'full', guests: [] }, { key });
  const list = (key: string): Promise<ApiResponse> => t.api('GET', `${base}/guests`, { key });
  const remaining = (res: ApiResponse): number => Number(res.headers['x-ratelimit-remaining']);

  /** Sends until the limit answers 429; every answer before it is 200. */
  async function exhaust(send: () => Promise<ApiResponse>, limit: number): Promise<void> {
    for (let i = 0; i < limit; i++) expect((await send()).status, `request ${i + 1}`).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
  }

  it('after the command, the next sync of either key of the pair is accepted and every endpoint starts afresh; another pair stays limited', async () => {
    const pair: IssuedKeyPair = await issueKeyPair(t.server.database.db, t.slug);
    const other: IssuedKeyPair = await issueKeyPair(t.server.database.db, t.slug);
    // The whole test runs inside one hourly and one minute window (set-up, never asserted on).
    const { res: first } = await firstInFreshWindow(() => sync(pair.live), 30_000);
    expect(first.status).toBe(200);
    await exhaust(() => sync(pair.live), 9);
    await exhaust(() => sync(pair.test), 10);
    await exhaust(() => sync(other.live), 10);
    const { res: firstList } = await firstInFreshWindow(() => list(pair.live), 20_000);
    expect(firstList.status).toBe(200);
    await exhaust(() => list(pair.live), 29);

    const r = await cli(['key', 'reset-limits', pair.keyId, '--json']);
    expect(r.stderr).toBe('');
    expect(parseJsonOutput(r)).toEqual({ keyId: pair.keyId, reset: true });

    for (const key of [pair.live, pair.test]) {
      const res = await sync(key);
      expect(res.status, res.text).toBe(200);
      expect(remaining(res)).toBe(9);
    }
    const listed = await list(pair.live);
    expect(listed.status).toBe(200);
    expect(remaining(listed)).toBe(29);
    // Counting goes on from the reset: the pair's limit still holds.
    await exhaust(() => sync(pair.live), 9);
    // The other pair's limit is untouched.
    const untouched = await sync(other.live);
    expect(untouched.status).toBe(429);
    expect(untouched.body.code).toBe('RATE_LIMITED');
  }, 90_000);

  it('without --json the command prints text for people; an unknown key id exits 1 with one line naming it; no key id is a usage error (2)', async () => {
    const pair = await issueKeyPair(t.server.database.db, t.slug);
    const [text, unknown, unknownJson, usage] = await Promise.all([
      cli(['key', 'reset-limits', pair.keyId]),
      cli(['key', 'reset-limits', 'key_doesnotexist00']),
      cli(['key', 'reset-limits', 'key_doesnotexist00', '--json']),
      cli(['key', 'reset-limits']),
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toBe('');
    expect(text.stdout).toContain(pair.keyId);
    expect(() => JSON.parse(text.stdout)).toThrow();

    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(lines(unknown.stderr)).toEqual([expect.stringMatching(/key_doesnotexist00.*innsync key list/)]);
    expect(unknownJson.code).toBe(1);
    expect(JSON.parse(unknownJson.stderr)).toMatchObject({ status: 'error', message: expect.stringContaining('key_doesnotexist00') });

    expect(usage.code).toBe(2);
    expect(usage.stdout).toBe('');
    expect(lines(usage.stderr)).toHaveLength(1);
  });
});
