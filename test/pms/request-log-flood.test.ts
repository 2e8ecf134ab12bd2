import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import path from 'node:path';
import { sql } from 'kysely';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeyPair } from '../../src/operations.js';
import { UNATTRIBUTED_ROWS_PER_ADDRESS } from '../../src/pms/request-log-budget.js';
import { addStaffUser, DashboardClient, sleep } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer, pmsBase } from '../support/harness.js';
import { loggedRows } from '../support/request-log.js';

// README.md "Logs": what one request no valid key sent may cost the request log. The path
// and query, User-Agent and Idempotency-Key a row keeps are capped (256 bytes each, the full
// size beside them); requests no valid key sent write at most UNATTRIBUTED_ROWS_PER_ADDRESS
// rows a minute per address (the rest counted in innsync_request_log_rows_skipped_total);
// the hotel's explorer lists them apart, marked. Over real HTTPS, HTTP/2 as an attacker
// would use it, on both engines.

const CAP = 256;
const BIG = 19 * 1024;
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const filler = (n: number, seed: string): string => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

interface H2Answer {
  status: number;
  requestId: string | null;
}

/**
 * `count` requests over one HTTP/2 connection, `concurrency` streams at a time; `headersOf(i)`
 * gives each one's headers (pseudo-headers included).
 */
async function overHttp2(t: TestServer, count: number, concurrency: number, headersOf: (i: number) => http2.OutgoingHttpHeaders): Promise<H2Answer[]> {
  const ca = fs.readFileSync(path.join(t.config.dataDir, 'tls', 'cert.pem'), 'utf8');
  const session = http2.connect(t.baseUrl, { ca, servername: 'localhost', maxHeaderListPairs: 256 });
  session.on('error', () => undefined);
  const answers: H2Answer[] = [];
  let next = 0;
  const one = (i: number): Promise<H2Answer> =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':method': 'GET', ...headersOf(i) }, { endStream: true });
      let status = 0;
      let text = '';
      stream.setEncoding('utf8');
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('data', (d: string) => (text += d));
      stream.on('error', reject);
      stream.on('end', () => {
        let requestId: string | null = null;
        try {
          requestId = (JSON.parse(text) as { requestId?: string }).requestId ?? null;
        } catch {
          // not JSON
        }
        resolve({ status, requestId });
      });
    });
  const worker = async (): Promise<void> => {
    while (next < count) answers.push(await one(next++));
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    session.close();
  }
  return answers;
}

/** One plain-HTTP request (the 403 HTTPS_REQUIRED port). */
function plainGet(port: number, target: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, method: 'GET', headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Rows of requests no valid key sent (no hotel), all addresses. */
async function unattributedRows(t: TestServer): Promise<number> {
  const r = await t.server.database.db
    .selectFrom('request_log')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('hotel_id', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Bytes on disk: SQLite's files in DATA_DIR (database, WAL, shared memory); PostgreSQL's request log relation and the whole database. */
async function storageBytes(t: TestServer): Promise<{ dataDir: number; requestLog: number }> {
  const db = t.server.database.db;
  if (t.engine === 'sqlite') {
    const sizeOf = (dir: string): number =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .reduce((sum, e) => sum + (e.isDirectory() ? sizeOf(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0);
    const total = sizeOf(t.config.dataDir);
    return { dataDir: total, requestLog: total };
  }
  const { rows } = await sql<{
    log: string;
    all: string;
  }>`select pg_total_relation_size('request_log') as log, pg_database_size(current_database()) as all`.execute(db);
  return { dataDir: Number(rows[0]?.all), requestLog: Number(rows[0]?.log) };
}

const MiB = (n: number): string => `${(n / 1024 / 1024).toFixed(2)} MiB`;

describe.each(testEngines())('request log under requests without a valid key (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let admin: DashboardClient;

  beforeAll(async () => {
    t = await startTestServer(engine, { METRICS_PORT: '0' });
    base = `${t.pmsBase}`;
    const user = await addStaffUser(t.server.database.db, t.slug, `flood-admin-${engine}@api.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, user.email);
  }, 60_000);
  afterAll(() => t.close());

  const scrape = async (): Promise<string> => (await request(`http://127.0.0.1:${t.server.metricsPort}/metrics`)).body.text();
  const skipped = async (): Promise<number> => Number(/^innsync_request_log_rows_skipped_total\{limit="per-address"\} (\d+)/m.exec(await scrape())?.[1] ?? 0);

  it('the path, query, User-Agent, Idempotency-Key and slug a row keeps are capped, with the full size recorded, for a valid key and for none; the explorer shows the sizes', async () => {
    const pair = await issueKeyPair(t.server.database.db, t.slug);
    const query = `x=${filler(BIG, 'q')}`;
    const ua = `flood/${filler(BIG, 'u')}`;
    const idem = `idem-${filler(BIG, 'k')}`;
    const slug = `s${filler(300, 'long-slug-')}`;
    const [valid, wrong, longSlug] = await Promise.all([
      overHttp2(t, 1, 1, () => ({ ':path': `${base}/guests?${query}`, 'user-agent': ua, 'idempotency-key': idem, authorization: `Bearer ${pair.live}` })),
      overHttp2(t, 1, 1, () => ({ ':path': `${base}/guests?${query}`, 'user-agent': ua, 'idempotency-key': idem, authorization: 'Bearer wrong' })),
      overHttp2(t, 1, 1, () => ({ ':path': `${pmsBase(slug)}/guests`, 'user-agent': 'short' })),
    ]);
    // The valid key's request is refused for its unknown query member (422), still by the hotel's key.
    expect([valid[0]?.status, wrong[0]?.status, longSlug[0]?.status]).toEqual([422, 401, 401]);
    const ids = [valid[0]?.requestId ?? '', wrong[0]?.requestId ?? '', longSlug[0]?.requestId ?? ''];
    const rows = await loggedRows(t.server.database.db, ids);
    for (const id of ids.slice(0, 2)) {
      const row = rows.get(id);
      const target = `${base}/guests?${query}`;
      expect(row?.path.startsWith(`${base}/guests?x=qqq`)).toBe(true);
      expect(row?.path.endsWith('…')).toBe(true);
      expect(bytes(row?.path ?? '')).toBeLessThanOrEqual(2 * CAP + 1 + 2 * bytes('…'));
      expect(Number(row?.path_bytes)).toBe(bytes(target));
      expect(row?.user_agent).toBe(`${ua.slice(0, CAP)}…`);
      expect(Number(row?.user_agent_bytes)).toBe(bytes(ua));
      expect(row?.idempotency_key).toBe(`${idem.slice(0, CAP)}…`);
      expect(Number(row?.idempotency_key_bytes)).toBe(bytes(idem));
    }
    expect(rows.get(ids[0] ?? '')?.hotel_id).not.toBeNull();
    expect(rows.get(ids[1] ?? '')?.hotel_id).toBeNull();
    const slugRow = rows.get(ids[2] ?? '');
    expect(slugRow?.slug).toBe(`${slug.slice(0, 64)}…`);
    expect(Number(slugRow?.path_bytes)).toBe(bytes(`${pmsBase(slug)}/guests`));
    expect(slugRow?.user_agent).toBe('short');
    expect(slugRow?.user_agent_bytes).toBeNull();

    // A short request keeps everything whole, no sizes.
    const small = await t.api('GET', `${base}/guests?source=pms`, { key: pair.live, headers: { 'user-agent': 'pms/1.0' } });
    const smallRow = (await loggedRows(t.server.database.db, [small.body.requestId as string])).get(small.body.requestId as string);
    expect(smallRow).toMatchObject({
      path: `${base}/guests?source=pms`,
      user_agent: 'pms/1.0',
      path_bytes: null,
      user_agent_bytes: null,
      idempotency_key_bytes: null,
    });

    // The explorer: the valid key's row with its full sizes; the wrong key's marked as not authenticated.
    const detail = async (id: string) => (await admin.get(`/requests/${id}`)).body.request as Record<string, unknown>;
    expect(await detail(ids[0] ?? '')).toMatchObject({
      authenticated: true,
      pathBytes: bytes(`${base}/guests?${query}`),
      userAgentBytes: bytes(ua),
      idempotencyKeyBytes: bytes(idem),
      userAgent: `${ua.slice(0, CAP)}…`,
    });
    expect(await detail(ids[1] ?? '')).toMatchObject({ authenticated: false, userAgentBytes: bytes(ua), keyId: null });
  });

  it(`many requests without a valid key from one address (plain-HTTP 403s, then 401s and 429s over HTTP/2) write ${UNATTRIBUTED_ROWS_PER_ADDRESS} rows; the rest are counted; a valid key's requests are all written; the explorer lists those apart, marked`, async () => {
    // A server of its own: the budget is per address and minute, and this uses it up.
    const s = await startTestServer(engine, { METRICS_PORT: '0' });
    try {
      const sBase = `${pmsBase(s.slug)}`;
      // Logged in first: the dashboard's login shares the address's per-IP limit the flood uses up.
      const user = await addStaffUser(s.server.database.db, s.slug, `flood-budget-${engine}@api.example`, 'admin');
      const sAdmin = await DashboardClient.loggedIn(s, user.email);
      const plain = await Promise.all(Array.from({ length: 30 }, () => plainGet(s.server.httpPort ?? 0, `${sBase}/guests`, { 'user-agent': 'plain' })));
      expect(new Set(plain)).toEqual(new Set([403]));
      const answers = await overHttp2(s, 300, 50, (i) => ({
        ':path': `${sBase}/guests?n=${i}`,
        'user-agent': 'flood',
        authorization: 'Bearer wrong',
      }));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((c) => c === 401).length).toBeGreaterThan(0);
      expect(statuses.filter((c) => c === 429).length).toBeGreaterThan(100);
      expect(statuses.every((c) => c === 401 || c === 429)).toBe(true);

      // A valid key's requests are written whatever the address has used.
      const pair = await issueKeyPair(s.server.database.db, s.slug);
      const mine: string[] = [];
      for (let i = 0; i < 5; i++) mine.push((await s.api('GET', `${sBase}/guests`, { key: pair.live })).body.requestId as string);
      await loggedRows(s.server.database.db, mine);
      await sleep(400); // the writer's batches (every 100 ms)
      expect(await unattributedRows(s)).toBe(UNATTRIBUTED_ROWS_PER_ADDRESS);
      const metrics = await (await request(`http://127.0.0.1:${s.server.metricsPort}/metrics`)).body.text();
      const notWritten = Number(/^innsync_request_log_rows_skipped_total\{limit="per-address"\} (\d+)/m.exec(metrics)?.[1]);
      expect(notWritten).toBe(330 - UNATTRIBUTED_ROWS_PER_ADDRESS);

      // The hotel's explorer: its key's requests by default, none of the refused ones; those only with sender=none, marked.
      const listed = (await sAdmin.get('/requests?limit=200')).body.requests as Array<{ id: string; authenticated: boolean; keyId: string | null }>;
      expect(listed.map((r) => r.id).sort()).toEqual([...mine].sort());
      expect(listed.every((r) => r.authenticated && r.keyId === pair.keyId)).toBe(true);
      const refused = (await sAdmin.get('/requests?limit=200&sender=none')).body.requests as Array<{ authenticated: boolean; statusCode: number }>;
      expect(refused.length).toBe(UNATTRIBUTED_ROWS_PER_ADDRESS);
      expect(refused.every((r) => !r.authenticated && [401, 403, 429].includes(r.statusCode))).toBe(true);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('the flood of one address (2,000 requests of a 19 KB query, User-Agent and Idempotency-Key, a wrong key, 50 streams on one HTTP/2 connection) grows storage by far less than 1 MiB', async () => {
    const s = await startTestServer(engine);
    try {
      const sBase = `${pmsBase(s.slug)}`;
      await sleep(300);
      const before = await storageBytes(s);
      const rowsBefore = await unattributedRows(s);
      const query = `x=${filler(BIG, 'a')}`;
      const ua = filler(BIG, 'b');
      const answers = await overHttp2(s, 2_000, 50, (i) => ({
        ':path': `${sBase}/guests?${query}${i}`,
        'user-agent': ua,
        'idempotency-key': `${filler(BIG, 'c')}${i}`,
        authorization: 'Bearer not-a-key',
      }));
      const sent = answers.length * 3 * BIG;
      expect(answers.every((a) => a.status === 401 || a.status === 429)).toBe(true);
      await sleep(500);
      const after = await storageBytes(s);
      const rows = (await unattributedRows(s)) - rowsBefore;
      console.log(
        `[${engine}] 2,000 requests without a valid key, ${MiB(sent)} of path, User-Agent and key text sent: ${rows} rows written; data ${MiB(after.dataDir - before.dataDir)}, request log ${MiB(after.requestLog - before.requestLog)}`,
      );
      expect(rows).toBeLessThanOrEqual(UNATTRIBUTED_ROWS_PER_ADDRESS);
      // Before the caps and the budget each row kept ~58 KB: 2,000 rows were over 100 MiB.
      expect(after.requestLog - before.requestLog).toBeLessThan(1024 * 1024);
      expect(after.dataDir - before.dataDir).toBeLessThan(5 * 1024 * 1024);
    } finally {
      await s.close();
    }
  }, 120_000);

  it('a valid idempotency key is never cut; a key over 255 characters is refused 400 and logged cut with its size', async () => {
    const key = uniqueKey('whole');
    const ok = await t.post(`${base}/guests/checkin`, guest({ pmsGuestId: 'FLOOD-1', roomNumber: '701' }), { idempotencyKey: key });
    expect(ok.status).toBe(200);
    const long = filler(300, 'k');
    const refused = await t.post(`${base}/guests/checkin`, guest({ pmsGuestId: 'FLOOD-2', roomNumber: '702' }), { idempotencyKey: long });
    expect(refused.status).toBe(400);
    const rows = await loggedRows(t.server.database.db, [ok.body.requestId as string, refused.body.requestId as string]);
    expect(rows.get(ok.body.requestId as string)).toMatchObject({ idempotency_key: key, idempotency_key_bytes: null });
    expect(rows.get(refused.body.requestId as string)).toMatchObject({ idempotency_key: `${long.slice(0, CAP)}…` });
    expect(Number(rows.get(refused.body.requestId as string)?.idempotency_key_bytes)).toBe(300);
    expect(await skipped()).toBe(0);
  });
});
