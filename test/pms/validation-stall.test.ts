import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeyPair } from '../../src/operations.js';
import { startTestServer, testEngines, uniqueKey, type ApiResponse, type TestServer } from '../support/harness.js';

// A sync body's checks never hold the service: while a hostile sync (a test key is enough)
// is read, parsed and checked, the health probe keeps being answered. The test client runs
// in the server's own process, so a probe answer is a turn of the server's event loop.

/** The longest the probe may go unanswered: generous (a pause of the whole service lasted seconds). */
const MAX_PROBE_GAP_MS = 1_000;
/** An error answer is a few KiB at most. */
const MAX_ANSWER_BYTES = 8 * 1024;

describe.each(testEngines())('a hostile sync body does not stall the service (%s)', (engine) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  /**
   * Sends `rawBody` as a sync with a fresh test key while /healthz is asked again and again;
   * returns the sync's answer, the probes answered while it was in flight and the longest
   * time without a probe answer (from the sync's start to its answer).
   */
  async function syncWhileProbing(rawBody: string): Promise<{ res: ApiResponse; probes: number; maxGap: number }> {
    const pair = await issueKeyPair(t.server.database.db, t.slug);
    let done = false;
    let probes = 0;
    let last = performance.now();
    let maxGap = 0;
    const poller = (async () => {
      while (!done) {
        const probe = await t.api('GET', '/healthz', { key: null });
        expect(probe.status).toBe(200);
        const now = performance.now();
        maxGap = Math.max(maxGap, now - last);
        last = now;
        if (!done) probes += 1;
      }
    })();
    last = performance.now();
    const res = await t.api('POST', `${t.pmsBase}/guests/sync`, {
      key: pair.test,
      rawBody,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: uniqueKey('stall'),
    });
    done = true;
    maxGap = Math.max(maxGap, performance.now() - last);
    await poller;
    return { res, probes, maxGap };
  }

  it('130,000 guests {"a":1} (1 MB) with the test key: 422 guests TOO_MANY alone, refused as the body arrives; the probe was answered throughout', async () => {
    const body = JSON.stringify({ guests: Array.from({ length: 130_000 }, () => ({ a: 1 })) });
    const { res, probes, maxGap } = await syncWhileProbing(body);
    expect(res.status, res.text.slice(0, 300)).toBe(422);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.errors).toEqual([{ field: 'guests', code: 'TOO_MANY', message: 'guests must have at most 20,000 items.' }]);
    expect(res.text.length).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    expect(probes).toBeGreaterThan(0);
    expect(maxGap).toBeLessThan(MAX_PROBE_GAP_MS);
  });

  it('520,000 zeros (1 MB): the same refusal, the probe answered throughout', async () => {
    const { res, maxGap } = await syncWhileProbing(`{"guests":[${'0,'.repeat(519_999)}0]}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: 'guests', code: 'TOO_MANY', message: 'guests must have at most 20,000 items.' }]);
    expect(maxGap).toBeLessThan(MAX_PROBE_GAP_MS);
  });

  it('20,001 guests, each one broken: only guests TOO_MANY is named (the items are never checked)', async () => {
    const { res } = await syncWhileProbing(JSON.stringify({ syncMode: 'full', guests: Array.from({ length: 20_001 }, () => ({ a: 1 })) }));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: 'guests', code: 'TOO_MANY', message: 'guests must have at most 20,000 items.' }]);
    expect(res.body.errorsNotShown).toBeUndefined();
  });

  // Parsing and fingerprinting 2.7 MB of 380,000 values takes its time on a busy machine: the
  // structural proof here is the answer, which says the check stopped after 50 problems
  // (it used to find and count all 460,000 of them, for seconds).
  it('20,000 guests (the limit) of 18 unknown members each: the check stops after 50 problems, the 422 lists 20 and says so', async () => {
    const item = `{${Array.from({ length: 18 }, (_, i) => `"m${i}":0`).join(',')}}`;
    const body = `{"syncMode":"full","guests":[${Array.from({ length: 20_000 }, () => item).join(',')}]}`;
    const { res } = await syncWhileProbing(body);
    expect(res.status, res.text.slice(0, 300)).toBe(422);
    expect(res.body.code).toBe('VALIDATION_ERROR');
    expect(res.body.message).toBe('More than 50 problems with the fields; the check stopped there. The first 20 are listed in errors.');
    expect(res.body.errors).toHaveLength(20);
    expect(res.body.errors[0]).toMatchObject({ field: 'guests[0].pmsGuestId', code: 'REQUIRED' });
    expect(res.body.errorsNotShown).toBe(30);
    expect(res.text.length).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
  });

  it('a body of more than 400,000 values in short lists (1.1 MB) is refused as it arrives: 422 (body) TOO_MANY', async () => {
    const list = `{"a":[${'0,'.repeat(17_999)}0]}`;
    const { res, maxGap } = await syncWhileProbing(`{"syncMode":"full","guests":[${Array.from({ length: 30 }, () => list).join(',')}]}`);
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      {
        field: '(body)',
        code: 'TOO_MANY',
        message: "The body has more than 400,000 values; no request of this API has that many. Check the body's structure.",
      },
    ]);
    expect(maxGap).toBeLessThan(MAX_PROBE_GAP_MS);
  });
});
