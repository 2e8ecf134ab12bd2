import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withBodies } from '../../src/db/repositories/request-log.repository.js';
import type { Db } from '../../src/db/database.js';
import { issueKeyPair } from '../../src/operations.js';
import { capBody } from '../../src/pms/request-log-body.js';
import { addStaffUser, DashboardClient, eventually, sleep } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';
import { loggedRows } from '../support/request-log.js';

// docs/pms-interface.md, "Request and activity logs": request-log bodies are capped at
// 64 KiB (first part + marker + full size + SHA-256), a GET /guests answer is stored as its
// count and guest ids, requests not attributed to a hotel keep their sizes but no body, and
// the API reference is not logged. Through real HTTPS requests on both engines.

const CAP = 64 * 1024;
const MARKER = /\n…\[cut: (\d+) bytes in all, sha256 ([0-9a-f]{64})\]$/;
const ROSTER = 5_000;
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

const logRows = loggedRows;

/** Bytes the data takes: SQLite pages in use (database and WAL as one), PostgreSQL the request log's relation (TOAST, indexes) and the whole database. */
async function storageBytes(t: TestServer): Promise<{ requestLog: number; database: number }> {
  const db = t.server.database.db;
  if (t.engine === 'sqlite') {
    const one = async (pragma: string) => Number(Object.values((await sql.raw(`pragma ${pragma}`).execute(db)).rows[0] as object)[0]);
    const used = ((await one('page_count')) - (await one('freelist_count'))) * (await one('page_size'));
    return { requestLog: used, database: used };
  }
  const { rows } = await sql<{
    log: string;
    all: string;
  }>`select pg_total_relation_size('request_log') as log, pg_database_size(current_database()) as all`.execute(db);
  return { requestLog: Number(rows[0]?.log), database: Number(rows[0]?.all) };
}

const MiB = (n: number): string => `${(n / 1024 / 1024).toFixed(2)} MiB`;

/** Guests with personal data of varied width (multi-byte names), as a PMS sends them. */
function roster(run: string, n: number) {
  const names = ['Müller', 'Lovelace', 'Øster', '李', 'Ñúñez', 'Smith', 'Papadopoulos', 'Żółć'];
  return Array.from({ length: n }, (_, i) =>
    guest({
      pmsGuestId: `PMS-${run}-${i}`,
      firstName: i % 3 === 0 ? 'Zoë' : 'Ada',
      lastName: `${names[i % names.length]}-${run}-${i}`,
      roomNumber: `R${i}`,
      phone: `+4930${String(1_000_000 + i)}`,
      email: `guest-${run}-${i}@mail.example`,
      language: 'de',
      nationality: 'DE',
      adults: 2,
      children: i % 3,
    }),
  );
}

describe('capBody', () => {
  it('cuts on a character boundary: never half of a multi-byte character, at most 64 KiB before the marker', () => {
    // 'a' then 2-byte characters: byte 65,536 is the second byte of one, which goes whole.
    const text = `a${'é'.repeat(40_000)}`;
    const stored = capBody(text);
    const m = MARKER.exec(stored);
    expect(m?.[1]).toBe(String(bytes(text)));
    expect(m?.[2]).toBe(sha256(text));
    const head = stored.slice(0, m?.index);
    expect(bytes(head)).toBe(CAP - 1);
    expect(text.startsWith(head)).toBe(true);
    // 4-byte characters (surrogate pairs in JS) are not split either.
    const emoji = `${'x'.repeat(CAP - 2)}😀😀`;
    const cut = capBody(emoji);
    expect(cut.slice(0, MARKER.exec(cut)?.index)).toBe('x'.repeat(CAP - 2));
    // Exactly 64 KiB is kept whole.
    const full = 'é'.repeat(CAP / 2);
    expect(capBody(full)).toBe(full);
  });

  it('never ends inside an object that names no guest: a guest cut before its pmsGuestId is left out, one cut after it is kept', () => {
    const filler = (i: number) => ({ pmsGuestId: `F-${i}`, lastName: `Filler${i}` });
    const guests = Array.from({ length: 3000 }, (_, i) => filler(i));
    const at = (text: string, marker: string) => text.indexOf(marker);
    // Pad the body so that byte 65,536 falls inside guest 1000's last name.
    const shape = (pad: number, order: 'name-first' | 'id-first') => {
      const target = order === 'name-first' ? { lastName: 'Zyxwvut', pmsGuestId: 'T-1' } : { pmsGuestId: 'T-1', lastName: 'Zyxwvut' };
      return JSON.stringify({ syncMode: 'full', pad: 'x'.repeat(pad), guests: [...guests.slice(0, 1000), target, ...guests.slice(1000)] });
    };
    for (const order of ['name-first', 'id-first'] as const) {
      const unpadded = shape(0, order);
      const text = shape(CAP - at(unpadded, 'Zyxw') - 2, order);
      expect(text.slice(CAP - 4, CAP + 2)).toBe(':"Zyxw');
      const head = capBody(text).slice(0, MARKER.exec(capBody(text))?.index);
      if (order === 'name-first') {
        expect(head).not.toContain('Zy');
        expect(head.endsWith('{"pmsGuestId":"F-999","lastName":"Filler999"},')).toBe(true);
      } else expect(head.endsWith('{"pmsGuestId":"T-1","lastName":"Zy')).toBe(true);
    }
  });

  it('keeps the bytes the whole text encodes to, whatever characters stand at the cut (a lone surrogate included)', () => {
    // The whole text encoded, cut on a character boundary at 64 KiB, hashed whole: what capBody keeps.
    const reference = (text: string): string => {
      const all = Buffer.from(text, 'utf8');
      let end = CAP;
      while (end > 0 && ((all[end] ?? 0) & 0xc0) === 0x80) end--;
      return `${all.subarray(0, end).toString('utf8')}\n…[cut: ${all.length} bytes in all, sha256 ${createHash('sha256').update(all).digest('hex')}]`;
    };
    const tails = ['é', '€', '😀', '\ud83d', '\ude00', 'x'];
    for (let lead = CAP - 4; lead <= CAP + 1; lead++) {
      for (const a of tails) {
        for (const b of tails) {
          const text = `${'x'.repeat(lead)}${a}${b}${'y'.repeat(10)}`;
          if (Buffer.byteLength(text, 'utf8') > CAP) expect(capBody(text)).toBe(reference(text));
        }
      }
    }
  });
});

describe.each(testEngines())('request-log caps (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let hotelId: string;
  let admin: DashboardClient;
  const run = `r${process.pid}${Date.now() % 100_000}`;
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    hotelId = (await db().selectFrom('hotels').select('id').where('slug', '=', t.slug).executeTakeFirstOrThrow()).id;
    const user = await addStaffUser(db(), t.slug, `caps-admin-${engine}-${run}@api.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, user.email);
  }, 60_000);
  afterAll(() => t.close());

  const detail = async (id: string) => {
    const res = await admin.get(`/requests/${id}`);
    expect(res.status).toBe(200);
    return res.body.request as Record<string, unknown>;
  };

  it("a small body is stored exactly as sent (nothing cut, no marker), with its size and the response's", async () => {
    const pair = await issueKeyPair(db(), t.slug);
    const body = guest({ lastName: 'Müller-Lüdenscheidt', firstName: 'Zoë' });
    const key = uniqueKey('small');
    const res = await t.api('POST', `${base}/guests/checkin`, { key: pair.live, body, idempotencyKey: key });
    expect(res.status).toBe(200);
    const id = res.body.requestId as string;
    const row = (await logRows(db(), [id])).get(id);
    expect(row).toMatchObject({
      hotel_id: hotelId,
      api_key_id: pair.keyId,
      status_code: 200,
      request_body: JSON.stringify(body),
      response_body: res.text,
      idempotency_key: key,
    });
    expect(Number(row?.request_bytes)).toBe(bytes(JSON.stringify(body)));
    expect(Number(row?.response_bytes)).toBe(bytes(res.text));
    expect(row?.request_body).not.toContain('…[cut');
    expect(await detail(id)).toMatchObject({
      requestBody: JSON.stringify(body),
      responseBody: res.text,
      requestBytes: bytes(JSON.stringify(body)),
      responseBytes: bytes(res.text),
      requestCut: false,
      responseCut: false,
      requestSha256: null,
      responseSha256: null,
      responseDigest: null,
      bodyWithheld: null,
    });
  });

  /** A sync of this body as sent (text or bytes), answered 200; its request-log row and stored request body. */
  async function syncLogged(key: string, sent: string | Buffer) {
    const res = await t.api('POST', `${base}/guests/sync`, {
      key,
      rawBody: sent,
      headers: { 'content-type': 'application/json' },
      idempotencyKey: uniqueKey('sync'),
    });
    expect(res.status, res.text.slice(0, 500)).toBe(200);
    const id = res.body.requestId as string;
    const row = (await logRows(db(), [id])).get(id);
    return { res, id, row, stored: row?.request_body ?? '' };
  }

  it('the marker of a cut body names the SHA-256 of the bytes as sent, also when they are not valid UTF-8', async () => {
    const pair = await issueKeyPair(db(), t.slug);
    const guests = roster(`${run}-bytes`, ROSTER);
    // The first guest's first name holds a byte that is no UTF-8 (read as U+FFFD).
    const text = JSON.stringify({ syncMode: 'full', guests });
    const at = text.indexOf('"firstName":"') + '"firstName":"'.length;
    const sent = Buffer.concat([Buffer.from(text.slice(0, at), 'utf8'), Buffer.from([0xff]), Buffer.from(text.slice(at), 'utf8')]);
    const { stored } = await syncLogged(pair.live, sent);
    const m = MARKER.exec(stored);
    expect(m, stored.slice(-200)).not.toBeNull();
    expect(m?.[2]).toBe(createHash('sha256').update(sent).digest('hex'));
  });

  it(`a sync body over 64 KiB (${ROSTER} guests) is stored as its first 64 KiB, then a marker with its full size and SHA-256; request_bytes is the full size; the explorer says it was cut`, async () => {
    const pair = await issueKeyPair(db(), t.slug);
    const guests = roster(run, ROSTER);
    const sent = JSON.stringify({ syncMode: 'full', guests });
    expect(bytes(sent)).toBeGreaterThan(10 * CAP);
    const { res, id, row, stored } = await syncLogged(pair.live, sent);
    expect(row).toBeDefined();
    const m = MARKER.exec(stored);
    expect(m, stored.slice(-200)).not.toBeNull();
    expect(Number(m?.[1])).toBe(bytes(sent));
    expect(m?.[2]).toBe(sha256(sent));
    const head = stored.slice(0, m?.index);
    expect(bytes(head)).toBeLessThanOrEqual(CAP);
    // The cut keeps a guest it falls in only once its pmsGuestId is complete: at most that guest's beginning is left out.
    expect(bytes(head)).toBeGreaterThan(CAP - 100);
    expect(sent.startsWith(head)).toBe(true);
    expect(head).toMatch(/(\},?|\{"pmsGuestId":"[^"]+"[^{}]*)$/);
    expect(Number(row?.request_bytes)).toBe(bytes(sent));
    // The answer (every guest checked in) is over 64 KiB too: cut the same way. Over 256 Ki
    // characters, it was sent in pieces, its size and SHA-256 taken as they left.
    expect(res.text.length).toBeGreaterThan(256 * 1024);
    expect(Number(row?.response_bytes)).toBe(bytes(res.text));
    const rm = MARKER.exec(row?.response_body ?? '');
    expect(rm?.[2]).toBe(sha256(res.text));
    expect(bytes(row?.response_body ?? '')).toBeLessThan(CAP + 200);

    expect(await detail(id)).toMatchObject({
      requestBytes: bytes(sent),
      responseBytes: bytes(res.text),
      requestCut: true,
      responseCut: true,
      requestSha256: sha256(sent),
      responseSha256: sha256(res.text),
      responseDigest: null,
      bodyWithheld: null,
    });
  }, 120_000);

  it(`GET /guests of ${ROSTER} guests (put in by the sync above) is stored as its count and guest ids, cut at 64 KiB: no names, phones, e-mails or pmsGuestIds; the explorer says so`, async () => {
    const pair = await issueKeyPair(db(), t.slug);
    const list = await t.api('GET', `${base}/guests?source=pms`, { key: pair.live });
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(ROSTER);
    const id = list.body.requestId as string;
    const row = (await logRows(db(), [id])).get(id);
    const stored = row?.response_body ?? '';
    expect(stored.slice(0, 40)).toMatch(new RegExp(`^\\{"count":${ROSTER},"ids":\\["guest_`));
    expect(Number(row?.response_bytes)).toBe(bytes(list.text));
    const ids = (list.body.guests as { guestId: string }[]).map((g) => g.guestId);
    const digest = JSON.stringify({ count: ROSTER, ids });
    expect(bytes(digest)).toBeGreaterThan(CAP);
    const m = MARKER.exec(stored);
    expect(Number(m?.[1])).toBe(bytes(digest));
    expect(m?.[2]).toBe(sha256(digest));
    const head = stored.slice(0, m?.index);
    expect(digest.startsWith(head)).toBe(true);
    const kept = [...head.matchAll(/"(guest_[a-z0-9]+)"/g)].map((x) => x[1]);
    expect(kept.length).toBeGreaterThan(1_000);
    expect(kept).toEqual(ids.slice(0, kept.length));
    // Nothing of the roster but the ids: no names, phones, e-mails or pmsGuestIds.
    for (const absent of ['lastName', 'Müller', 'Zoë', '+4930', '@mail.example', `PMS-${run}`]) expect(stored).not.toContain(absent);
    expect(await detail(id)).toMatchObject({
      responseDigest: 'count-and-ids',
      responseCut: true,
      responseBytes: bytes(list.text),
      requestCut: false,
      requestBytes: null,
    });

    // A test key's (empty) roster is a digest too.
    const sandbox = await t.api('GET', `${base}/guests`, { key: pair.test });
    const sandboxRow = (await logRows(db(), [sandbox.body.requestId as string])).get(sandbox.body.requestId as string);
    expect(sandboxRow?.response_body).toBe('{"count":0,"ids":[]}');

    // HEAD is answered by the same route: its row holds the same digest, not the roster.
    const headReq = await t.api('HEAD', `${base}/guests`, { key: pair.live });
    expect(headReq.status).toBe(200);
    const headRow = await eventually(async () => {
      const found = await db().selectFrom('request_log').selectAll().where('method', '=', 'HEAD').where('api_key_id', '=', pair.keyId).executeTakeFirst();
      return found ? (await withBodies(db(), [found]))[0] : undefined;
    });
    expect(headRow.response_body?.startsWith(`{"count":${ROSTER},"ids":["`)).toBe(true);
    expect(Number(headRow.response_bytes)).toBeGreaterThan(20 * CAP);
  }, 120_000);

  it(`20 GETs /guests of ${ROSTER} guests grow the database by a small fraction of 20 rosters`, async () => {
    const pair = await issueKeyPair(db(), t.slug);
    const list = await t.api('GET', `${base}/guests?source=pms`, { key: pair.live });
    expect(list.body.count).toBe(ROSTER);
    await logRows(db(), [list.body.requestId as string]);
    const before = await storageBytes(t);
    const requestIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await t.api('GET', `${base}/guests`, { key: pair.live });
      expect(res.status).toBe(200);
      requestIds.push(res.body.requestId as string);
    }
    expect((await logRows(db(), requestIds)).size).toBe(20);
    const after = await storageBytes(t);
    const growth = after.requestLog - before.requestLog;
    const rosters = 20 * bytes(list.text);
    console.log(
      `[${engine}] 20 GET /guests of ${ROSTER} guests: answers ${MiB(rosters)} in all; request log grew ${MiB(growth)} (database ${MiB(after.database - before.database)})`,
    );
    // Each row holds at most ~64 KiB of ids: 20 rows stay below 20 × 100 KiB, a tenth of the rosters.
    expect(growth).toBeLessThan(20 * 100 * 1024);
    expect(growth).toBeLessThan(rosters / 10);
  }, 120_000);

  it('a 401 (bad key) and an unknown path with a body keep their metadata and sizes, but no request or response body', async () => {
    const pair = await issueKeyPair(db(), t.slug);
    const ua = `caps-test/${engine}`;
    const body = guest({ lastName: 'Schmidt-Unbekannt' });
    const text = JSON.stringify(body);
    const key = uniqueKey('denied');
    const denied = await t.api('POST', `${base}/guests/checkin`, { key: `${pair.live}x`, body, idempotencyKey: key, headers: { 'user-agent': ua } });
    expect(denied.status).toBe(401);
    const unknown = await t.api('POST', `${base}/guests/nowhere`, { key: pair.live, body, headers: { 'user-agent': ua } });
    expect(unknown.status).toBe(404);
    const rows = await logRows(db(), [denied.body.requestId as string, unknown.body.requestId as string]);
    expect(rows.get(denied.body.requestId as string)).toMatchObject({
      method: 'POST',
      path: `${base}/guests/checkin`,
      slug: t.slug,
      status_code: 401,
      hotel_id: null,
      api_key_id: null,
      client_ip: '127.0.0.1',
      user_agent: ua,
      idempotency_key: key,
      request_body: null,
      response_body: null,
    });
    expect(rows.get(unknown.body.requestId as string)).toMatchObject({
      method: 'POST',
      path: `${base}/guests/nowhere`,
      status_code: 404,
      hotel_id: null,
      user_agent: ua,
      request_body: null,
      response_body: null,
    });
    for (const [res, row] of [
      [denied, rows.get(denied.body.requestId as string)],
      [unknown, rows.get(unknown.body.requestId as string)],
    ] as const) {
      expect(Number(row?.request_bytes)).toBe(bytes(text));
      expect(Number(row?.response_bytes)).toBe(bytes(res.text));
      expect(typeof row?.duration_ms).toBe('number');
    }
    // The hotel's explorer lists the 401 (addressed to its slug) and says why no body is shown.
    expect(await detail(denied.body.requestId as string)).toMatchObject({
      statusCode: 401,
      requestBody: null,
      responseBody: null,
      requestBytes: bytes(text),
      responseBytes: bytes(denied.text),
      requestCut: false,
      responseCut: false,
      bodyWithheld: 'unattributed',
    });
  });

  it('100 unauthenticated fetches of /api/pms/v1/openapi.json add no request-log row and grow the database by next to nothing', async () => {
    // A server of its own: the fetches use up the per-IP budget (100/min) of this address.
    const s = await startTestServer(engine);
    try {
      await sleep(300); // the request-log writer's batch (every 100 ms), if it had anything
      const rowsBefore = (await s.server.database.db.selectFrom('request_log').select('id').execute()).length;
      const before = await storageBytes(s);
      let served = 0;
      for (let i = 0; i < 100; i++) {
        const res = await s.api('GET', '/api/pms/v1/openapi.json', { key: null });
        expect(res.status).toBe(200);
        served += bytes(res.text);
      }
      await sleep(500);
      const rowsAfter = (await s.server.database.db.selectFrom('request_log').select('id').execute()).length;
      const after = await storageBytes(s);
      console.log(
        `[${engine}] 100 openapi.json fetches: ${MiB(served)} served; request log grew ${after.requestLog - before.requestLog} bytes, database ${after.database - before.database} bytes; rows ${rowsBefore} -> ${rowsAfter}`,
      );
      expect(served).toBeGreaterThan(100 * 100 * 1024);
      expect(rowsAfter).toBe(rowsBefore);
      expect(after.requestLog - before.requestLog).toBeLessThan(64 * 1024);
      expect(after.database - before.database).toBeLessThan(256 * 1024);
    } finally {
      await s.close();
    }
  }, 60_000);
});
