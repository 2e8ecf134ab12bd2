import { sql } from 'kysely';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeyPair } from '../../src/operations.js';
import { testEngines } from '../support/engines.js';
import { guest, startTestServer, uniqueKey, type ApiResponse, type TestServer, pmsBase } from '../support/harness.js';

// SQLite's group commit (docs/architecture.md, "SQLite: group commit"): check-ins that reach
// the writer while another's commit is pending share one COMMIT, each in a savepoint of its
// own. Seen through HTTPS and the metrics: bursts of concurrent check-ins where requests
// fail (409) or replay beside successful ones get exactly the answers and rows they would
// get one at a time, while the writer's commits served more transactions than there were
// commits.

const run = testEngines().includes('sqlite') ? describe : describe.skip;

/** Concurrent check-ins per burst, one connection each. */
const BURST = 10;
const BURSTS = 6;

run('group commit (sqlite)', () => {
  let t: TestServer;
  let metricsUrl: string;

  beforeAll(async () => {
    // A window long enough that requests arriving together find the group open on a slow machine too.
    t = await startTestServer('sqlite', { METRICS_PORT: '0', SQLITE_GROUP_COMMIT_MS: '50' });
    metricsUrl = `http://127.0.0.1:${t.server.metricsPort ?? 0}/metrics`;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  async function commitCounters(): Promise<{ commits: number; transactions: number }> {
    const text = await (await request(metricsUrl)).body.text();
    const value = (name: string): number => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
    return { commits: value('innsync_sqlite_commits_total'), transactions: value('innsync_sqlite_transactions_committed_total') };
  }

  const checkIn = (body: Record<string, unknown>, idempotencyKey: string, key: string): Promise<ApiResponse> =>
    t.api('POST', `${t.pmsBase}/guests/checkin`, { body, idempotencyKey, key });

  it('in bursts of concurrent check-ins, a room taken twice gets one 200 and one 409, a key sent twice one change and one replay, and the rest 200; the writer shares commits meanwhile', async () => {
    // Every connection open before the bursts, so their requests arrive together.
    await Promise.all(Array.from({ length: BURST }, () => t.api('GET', '/readyz', { key: null })));
    const before = await commitCounters();
    const winners: Array<{ pmsGuestId: string; guestId: string; roomNumber: string; key: string; idem: string; body: Record<string, unknown> }> = [];
    const losers: Array<{ key: string; idem: string; body: Record<string, unknown> }> = [];

    for (let b = 0; b < BURSTS; b++) {
      // A key of its own per burst: the check-in limit (60 a minute per key) never answers 429.
      const key = (await issueKeyPair(t.server.database.db, t.slug)).live;
      const room = `G${b}-${uniqueKey('r').slice(-6)}`;
      const twice = guest({ pmsGuestId: `TWICE-${b}-${uniqueKey('g')}` });
      const twiceKey = uniqueKey('twice');
      const rivals = [guest({ roomNumber: room }), guest({ roomNumber: room })];
      const plain = Array.from({ length: BURST - 4 }, () => guest());
      const sends: Array<{ body: Record<string, unknown>; idem: string; kind: 'rival' | 'twice' | 'plain' }> = [
        ...rivals.map((body) => ({ body, idem: uniqueKey('rival'), kind: 'rival' as const })),
        { body: twice, idem: twiceKey, kind: 'twice' },
        { body: twice, idem: twiceKey, kind: 'twice' },
        ...plain.map((body) => ({ body, idem: uniqueKey('plain'), kind: 'plain' as const })),
      ];
      const answers = await Promise.all(sends.map((s) => checkIn(s.body, s.idem, key)));

      // The room: exactly one of the two holds it, the other was told who does.
      const rivalAnswers = answers.slice(0, 2);
      expect(rivalAnswers.map((a) => a.status).sort()).toEqual([200, 409]);
      const won = rivalAnswers.findIndex((a) => a.status === 200);
      const lost = rivalAnswers[1 - won] as ApiResponse;
      expect(lost.body.code).toBe('ROOM_OCCUPIED');
      expect(lost.body.currentGuest.pmsGuestId).toBe(sends[won]?.body.pmsGuestId);
      const winner = sends[won] as { body: Record<string, unknown>; idem: string };
      winners.push({
        pmsGuestId: String(winner.body.pmsGuestId),
        guestId: rivalAnswers[won]?.body.guestId,
        roomNumber: room,
        key,
        idem: winner.idem,
        body: winner.body,
      });
      losers.push({ key, idem: sends[1 - won]?.idem as string, body: sends[1 - won]?.body as Record<string, unknown> });

      // The same key twice: one check-in, answered twice with the same guest (one of them a replay).
      const twiceAnswers = answers.slice(2, 4);
      expect(twiceAnswers.map((a) => a.status)).toEqual([200, 200]);
      expect(twiceAnswers[0]?.body.guestId).toBe(twiceAnswers[1]?.body.guestId);
      expect(twiceAnswers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(1);
      winners.push({
        pmsGuestId: String(twice.pmsGuestId),
        guestId: twiceAnswers[0]?.body.guestId,
        roomNumber: String(twice.roomNumber),
        key,
        idem: twiceKey,
        body: twice,
      });

      for (const [i, a] of answers.slice(4).entries()) {
        expect(a.status).toBe(200);
        winners.push({
          pmsGuestId: String(plain[i]?.pmsGuestId),
          guestId: a.body.guestId,
          roomNumber: String(plain[i]?.roomNumber),
          key,
          idem: sends[4 + i]?.idem as string,
          body: plain[i] as Record<string, unknown>,
        });
      }
    }

    const after = await commitCounters();
    // Shared commits happened: more transactions were made durable than there were commits.
    expect(after.transactions - before.transactions).toBeGreaterThan(after.commits - before.commits);

    // The roster holds every winner once, in its room, and no loser.
    const roster = await t.api('GET', `${t.pmsBase}/guests`);
    expect(roster.status).toBe(200);
    const listed = new Map<string, { guestId: string; roomNumber: string }>(
      roster.body.guests.map((g: { pmsGuestId: string; guestId: string; roomNumber: string }) => [g.pmsGuestId, g]),
    );
    expect(listed.size).toBe(winners.length);
    for (const w of winners) expect(listed.get(w.pmsGuestId)).toMatchObject({ guestId: w.guestId, roomNumber: w.roomNumber });
    for (const l of losers) expect(listed.has(String(l.body.pmsGuestId))).toBe(false);

    // A winner sent again gets its stored answer; a loser's key was not used up: sent again, it is processed again (409 again).
    const again = await checkIn(winners[0]?.body as Record<string, unknown>, winners[0]?.idem as string, winners[0]?.key as string);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.guestId).toBe(winners[0]?.guestId);
    const retried = await checkIn(losers[0]?.body as Record<string, unknown>, losers[0]?.idem as string, losers[0]?.key as string);
    expect(retried.status).toBe(409);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('when the disk fills during bursts, every request answered 200 is stored and every one answered 503 is not; sent again once there is room, those are stored once', async () => {
    const db = t.server.database.db;
    // A key per burst: the burst and its retry stay within the check-in limit (60 a minute per key).
    const keys: string[] = [];
    for (let b = 0; b < 6; b++) keys.push((await issueKeyPair(db, t.slug)).live);
    const pages = Number((await sql<{ page_count: number }>`pragma page_count`.execute(db)).rows[0]?.page_count);
    // The writer may not grow the file past its size now: inserts fail with SQLITE_FULL once the free space in its pages is used.
    await sql.raw(`pragma max_page_count = ${pages}`).execute(db);
    const sent: Array<{ body: Record<string, unknown>; idem: string; key: string; answer: ApiResponse }> = [];
    try {
      for (let b = 0; b < 6; b++) {
        const key = keys[b] as string;
        const bodies = Array.from({ length: BURST }, () => ({
          body: guest({ lastName: 'Full'.repeat(25), firstName: 'Page'.repeat(25) }),
          idem: uniqueKey('full'),
        }));
        const answers = await Promise.all(bodies.map((x) => checkIn(x.body, x.idem, key)));
        bodies.forEach((x, i) => sent.push({ ...x, key, answer: answers[i] as ApiResponse }));
      }
    } finally {
      await sql.raw('pragma max_page_count = 1073741823').execute(db);
    }
    const statuses = new Set(sent.map((s) => s.answer.status));
    expect([...statuses].every((s) => s === 200 || s === 503)).toBe(true);
    expect(sent.some((s) => s.answer.status === 503)).toBe(true);
    for (const s of sent.filter((x) => x.answer.status === 503)) {
      expect(s.answer.body.code).toBe('SERVICE_UNAVAILABLE');
      expect(s.answer.headers['retry-after']).toBeDefined();
    }

    const roster = await t.api('GET', `${t.pmsBase}/guests`);
    const listed = new Set<string>(roster.body.guests.map((g: { pmsGuestId: string }) => g.pmsGuestId));
    for (const s of sent) expect(listed.has(String(s.body.pmsGuestId))).toBe(s.answer.status === 200);

    // Sent again (same key, same body): the 200s are replays of the same guest, the 503s are processed now, once.
    const retry = await Promise.all(sent.map((s) => checkIn(s.body, s.idem, s.key)));
    retry.forEach((r, i) => {
      const s = sent[i] as (typeof sent)[number];
      expect(r.status).toBe(200);
      expect(r.headers['idempotent-replayed']).toBe(s.answer.status === 200 ? 'true' : undefined);
      if (s.answer.status === 200) expect(r.body.guestId).toBe(s.answer.body.guestId);
    });
    const after = await t.api('GET', `${t.pmsBase}/guests`);
    const count = new Map<string, number>();
    for (const g of after.body.guests as Array<{ pmsGuestId: string }>) count.set(g.pmsGuestId, (count.get(g.pmsGuestId) ?? 0) + 1);
    for (const s of sent) expect(count.get(String(s.body.pmsGuestId))).toBe(1);
  });

  it('SQLITE_GROUP_COMMIT_MS=0 commits each transaction alone; the setting is refused outside 0-1000 with a message naming it', async () => {
    const { loadConfig } = await import('../../src/config.js');
    expect(loadConfig({ SQLITE_GROUP_COMMIT_MS: '0' }).sqliteGroupCommitMs).toBe(0);
    expect(loadConfig({}).sqliteGroupCommitMs).toBe(2);
    for (const bad of ['-1', '1001', '2.5', 'fast'])
      expect(() => loadConfig({ SQLITE_GROUP_COMMIT_MS: bad })).toThrow(/SQLITE_GROUP_COMMIT_MS must be a whole number of milliseconds from 0/);

    const alone = await startTestServer('sqlite', { METRICS_PORT: '0', SQLITE_GROUP_COMMIT_MS: '0' });
    try {
      const url = `http://127.0.0.1:${alone.server.metricsPort ?? 0}/metrics`;
      const answers = await Promise.all(Array.from({ length: BURST }, () => alone.post(`${pmsBase(alone.slug)}/guests/checkin`, guest())));
      expect(answers.map((a) => a.status)).toEqual(Array.from({ length: BURST }, () => 200));
      const text = await (await request(url)).body.text();
      const commits = Number(/^innsync_sqlite_commits_total (\d+)/m.exec(text)?.[1]);
      const transactions = Number(/^innsync_sqlite_transactions_committed_total (\d+)/m.exec(text)?.[1]);
      expect(transactions).toBeGreaterThanOrEqual(BURST);
      expect(transactions).toBe(commits);
    } finally {
      await alone.close();
    }
  });
});
