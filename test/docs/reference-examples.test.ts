import fc from 'fast-check';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomId } from '../../src/domain/ids.js';
import { issueKeyPair } from '../../src/operations.js';
import { readResponse } from '../support/http-response.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { startTestServer, testEngines, uniqueKey, type ApiResponse, type TestServer, pmsBase } from '../support/harness.js';

// The API reference a PMS developer works from: its table of contents leads somewhere,
// every operation shows a request and every answer it can give, each example is valid
// against the document's own schema, and the examples are what the running service
// answers (sent over HTTPS with a test key, and as a live story with a live key).

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
type Json = Record<string, unknown>;
interface Example {
  summary: string;
  value: unknown;
}
interface Operation {
  operationId: string;
  requestBody?: { content: Record<string, { schema: Json; examples?: Record<string, Example> }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Json; examples?: Record<string, Example> }> }>;
  'x-codeSamples': Array<{ source: string }>;
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
// Checked by the document's enums; the formats' names only need to be known.
ajv.addFormat('iso-639-1', true);
ajv.addFormat('iso-3166-1-alpha-2', true);
const valid = (schema: Json, value: unknown): boolean => ajv.validate(schema, value);

/** A body with what differs on every request masked: ids and times. */
function masked(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(masked);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, ['requestId', 'guestId', 'createdAt', 'updatedAt'].includes(k) && x !== null ? '(id)' : masked(x)]));
}

const examplesOf = (op: Operation, status: string): Record<string, Example> => op.responses[status]?.content?.['application/json']?.examples ?? {};
/** The status whose examples answer the request example `name`. */
const answeredWith = (op: Operation, name: string): string | undefined => Object.keys(op.responses).find((s) => examplesOf(op, s)[name]);

/** The words of a curl command as the reference writes them: single-quoted, `'\''` a quote. */
function curlWords(source: string): string[] {
  return [...source.matchAll(/(-H|--data) '((?:[^']|'\\'')*)'|curl '([^']*)'/g)].map((m) => (m[3] !== undefined ? `URL ${m[3]}` : `${m[1]} ${(m[2] ?? '').replaceAll("'\\''", "'")}`));
}

describe('the API reference: contents, examples, schemas', () => {
  let t: TestServer;
  let doc: { paths: Record<string, Record<string, Operation>> };
  let page: string;
  /** The page's text with its character references read. */
  let text: string;
  let operations: Array<[string, string, Operation]>;

  beforeAll(async () => {
    t = await startTestServer('sqlite');
    doc = (await t.api('GET', '/api/pms/v1/openapi.json', { key: null })).body;
    page = (await t.api('GET', '/api/pms/v1/docs', { key: null })).text;
    text = page.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));
    operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [path, method, op] as [string, string, Operation]));
  });
  afterAll(() => t.close());

  /** A request example sent as the operation takes it (POST: a JSON body; GET: the query). */
  const sendExample = (path: string, method: string, value: unknown, key: string): Promise<ApiResponse> => {
    const url = path.replace('{slug}', t.slug);
    if (method === 'get') return t.api('GET', `${url}?${new URLSearchParams(value as Record<string, string>).toString()}`, { key });
    return t.api('POST', url, { key, body: value, idempotencyKey: uniqueKey('example') });
  };

  it('starts with a table of contents whose every link lands on a heading of the page', () => {
    const nav = /<nav id="contents">([\s\S]*?)<\/nav>/.exec(page)?.[1] ?? '';
    expect(page.indexOf('<nav id="contents">')).toBeLessThan(page.indexOf('<h2 id="rules">'));
    const ids = [...page.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]);
    expect(new Set(ids).size, 'ids are unique').toBe(ids.length);
    const links = [...nav.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]);
    for (const link of links) expect(ids, `#${link}`).toContain(link);
    const sections = ['rules', 'endpoints', 'events-webhooks', 'errors', 'error-codes', 'codes-inside-errors'];
    const perOperation = operations.flatMap(([, , op]) => [op.operationId, `${op.operationId}-curl`, `${op.operationId}-response`, `${op.operationId}-errors`]);
    expect(links).toEqual(expect.arrayContaining([...sections, ...perOperation]));
  });

  it('every operation has a curl command and request examples (where it takes a body), each valid against the schema when it is answered 200', () => {
    for (const [path, method, op] of operations) {
      expect(op['x-codeSamples'][0]?.source, op.operationId).toMatch(/^curl 'https:\/\/<host>\/api\/pms\/v1\/<slug>\//);
      expect(op['x-codeSamples'][0]?.source).toContain("-H 'Authorization: Bearer pms_test_…'");
      expect(text, `the page shows the curl of ${op.operationId}`).toContain(op['x-codeSamples'][0]?.source);
      expect(op['x-codeSamples'][0]?.source).toContain(`curl 'https://<host>${path.replace('{slug}', '<slug>')}`);
      if (method === 'get') continue;
      expect(op['x-codeSamples'][0]?.source).toMatch(/-H 'Idempotency-Key: .+' \\\n {2}-H 'Content-Type: application\/json' \\\n {2}--data '\{/);
      const media = op.requestBody?.content['application/json'];
      const examples = Object.entries(media?.examples ?? {});
      expect(examples.length, op.operationId).toBeGreaterThan(0);
      for (const [name, e] of examples) {
        const status = answeredWith(op, name);
        expect(status, `${op.operationId} ${name}: a response example of the same name`).toBeDefined();
        // What the document's schema allows is what the service answers 200 (and refuses is 422).
        expect(valid(media?.schema ?? {}, e.value), `${op.operationId} ${name} (${status}): ${ajv.errorsText()}`).toBe(status === '200');
      }
    }
  });

  it('every response has examples, one of each code it lists, each valid against its schema', () => {
    for (const [, , op] of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        const media = response.content?.['application/json'];
        const examples = Object.entries(media?.examples ?? {});
        expect(examples.length, `${op.operationId} ${status}`).toBeGreaterThan(0);
        for (const [name, e] of examples) expect(valid(media?.schema ?? {}, e.value), `${op.operationId} ${status} ${name}: ${ajv.errorsText()}`).toBe(true);
        if (status === '200') continue;
        const codes = examples.map(([, e]) => (e.value as { code: string }).code);
        expect(new Set(codes), `${op.operationId} ${status}`).toEqual(new Set(response.description.split(', ')));
      }
    }
  });

  it('the page shows every example the document has', () => {
    for (const [, , op] of operations) {
      const all = [...Object.values(op.requestBody?.content['application/json']?.examples ?? {}), ...Object.keys(op.responses).flatMap((s) => Object.values(examplesOf(op, s)))];
      for (const e of all) expect(text).toContain(JSON.stringify(e.value, null, 2));
    }
  });

  it('each request example, sent with a test key, gets the status its example claims and the answer shown (ids aside)', async () => {
    for (const [path, method, op] of operations) {
      const requests = method === 'get' ? { list: { summary: '', value: {} }, unknownParameter: { summary: '', value: { floor: '4' } } } : op.requestBody?.content['application/json']?.examples;
      for (const [name, e] of Object.entries(requests ?? {})) {
        const status = answeredWith(op, name) ?? '';
        const res = await sendExample(path, method, e.value, t.keys.test);
        expect(res.status, `${op.operationId} ${name}: ${res.text}`).toBe(Number(status));
        const shown = examplesOf(op, status)[status === '200' ? `${name}TestKey` : name];
        expect(masked(res.body), `${op.operationId} ${name}`).toEqual(masked(shown?.value));
      }
    }
  });

  it('each curl command, run as written (host, slug and test key filled in), gets the test-key answer shown', async () => {
    for (const [, , op] of operations) {
      const words = curlWords(op['x-codeSamples'][0]?.source ?? '');
      const url = (words.find((w) => w.startsWith('URL '))?.slice(4) ?? '').replace('<host>', t.baseUrl.replace('https://', '')).replace('<slug>', t.slug);
      const headers = Object.fromEntries(
        words.filter((w) => w.startsWith('-H ')).map((w) => w.slice(3).replace('pms_test_…', t.keys.test).split(': ') as [string, string]),
      );
      const body = words.find((w) => w.startsWith('--data '))?.slice(7);
      const res = await readResponse(await request(url, { method: body === undefined ? 'GET' : 'POST', headers, body, dispatcher: t.agent }));
      expect(res.status, `${op.operationId}: ${res.text}`).toBe(200);
      const [main] = Object.keys(examplesOf(op, '200'));
      expect(masked(res.body), op.operationId).toEqual(masked(examplesOf(op, '200')[`${main}TestKey`]?.value));
    }
  });

  it("the document's roomNumber rule (1-20 characters after trimming, no control characters) is the service's", async () => {
    const checkIn = doc.paths['/api/pms/v1/{slug}/guests/checkin']?.post;
    const room = (checkIn?.requestBody?.content['application/json']?.schema.properties as Record<string, Json>).roomNumber ?? {};
    expect(room.pattern).toEqual(expect.any(String));
    const space = fc.constantFrom(' ', '\u00a0', '\u3000', '\ufeff', '\u2028');
    const char = fc.oneof(fc.constantFrom('4', 'A', '-', 'é', '😀', '\u200b'), space, fc.constantFrom('\t', '\n', '\u0085', '\u0000'));
    const samples = [
      ...['1', 'R'.repeat(20), 'R'.repeat(21), `  ${'R'.repeat(20)}  `, '\u3000', '', '😀'.repeat(20), '😀'.repeat(21), ` ${'4'.repeat(19)}\u00a0`],
      ...fc.sample(fc.string({ unit: char, maxLength: 24 }), { numRuns: 30, seed: 405 }),
    ];
    const key = (await issueKeyPair(t.server.database.db, t.slug)).test;
    const outcomes = new Set<number>();
    for (const [i, roomNumber] of samples.entries()) {
      const body = { pmsGuestId: `ROOM-${i}`, lastName: 'Rule', roomNumber, checkInDate: '2026-11-23', checkOutDate: '2026-11-24' };
      const res = await sendExample('/api/pms/v1/{slug}/guests/checkin', 'post', body, key);
      expect(res.status, `${JSON.stringify(roomNumber)}: ${res.text}`).toBe(valid(room, roomNumber) ? 200 : 422);
      outcomes.add(res.status);
    }
    expect([...outcomes].sort()).toEqual([200, 422]);
  });
});

describe.each(testEngines())('the API reference: its story is what the service answers with a live key (%s)', (engine) => {
  let t: TestServer;
  let ops: Record<string, Operation>;
  beforeAll(async () => {
    t = await startTestServer(engine);
    const doc = (await t.api('GET', '/api/pms/v1/openapi.json', { key: null })).body as { paths: Record<string, Record<string, Operation>> };
    ops = Object.fromEntries(Object.values(doc.paths).flatMap((o) => Object.values(o).map((op) => [op.operationId, op])));
  });
  afterAll(() => t.close());

  const request = (id: string, name: string): unknown => ops[id]?.requestBody?.content['application/json']?.examples?.[name]?.value;
  const answer = (id: string, status: number, name: string): unknown => masked(examplesOf(ops[id] as Operation, String(status))[name]?.value);
  /** Each story has a hotel of its own. */
  let hotel = { slug: '', key: '' };
  beforeEach(async () => {
    const slug = `reference-${randomId(8)}`;
    hotel = { slug, key: (await t.addHotel(slug)).live };
  });
  const post = (path: string, body: unknown): Promise<ApiResponse> => t.post(`${pmsBase(hotel.slug)}/guests/${path}`, body, { key: hotel.key });
  async function expectAnswer(res: ApiResponse, id: string, status: number, name: string): Promise<void> {
    expect(res.status, res.text).toBe(status);
    expect(masked(res.body)).toEqual(answer(id, status, name));
  }

  it('Ada checks in, is refused twice, moves, checks out, and is not found any more', async () => {
    const ada = request('checkInGuest', 'checkIn') as Json;
    await expectAnswer(await post('checkin', ada), 'checkInGuest', 200, 'checkIn');
    await expectAnswer(await post('checkin', ada), 'checkInGuest', 409, 'GUEST_ALREADY_CHECKED_IN');
    await expectAnswer(await post('checkin', { ...ada, pmsGuestId: 'PMS-100999' }), 'checkInGuest', 409, 'ROOM_OCCUPIED');
    await expectAnswer(await post('update', request('updateGuest', 'roomMove')), 'updateGuest', 200, 'roomMove');
    await expectAnswer(await post('checkout', request('checkOutGuest', 'checkOut')), 'checkOutGuest', 200, 'checkOut');
    await expectAnswer(await post('checkout', request('checkOutGuest', 'checkOut')), 'checkOutGuest', 404, 'GUEST_NOT_FOUND');
    await expectAnswer(await post('update', request('updateGuest', 'roomMove')), 'updateGuest', 404, 'GUEST_NOT_FOUND');
  });

  it('the sync of the house, the list after it, and a sync into a walk-in guest’s room', async () => {
    const list = examplesOf(ops.listGuests as Operation, '200').list?.value as { guests: Json[] };
    const synced = examplesOf(ops.syncGuests as Operation, '200').fullList?.value as { details: { updated: Json[]; checkedOut: Json[] } };
    const { guests } = request('syncGuests', 'fullList') as { guests: Json[] };
    // The house before: the walk-in guest and Babbage as the examples show them, Grace in the room she moves from.
    const shown = list.guests.find((g) => g.source === 'receptionist') ?? {};
    const walkIn = Object.fromEntries(Object.entries(shown).filter(([k]) => !['guestId', 'pmsGuestId', 'source', 'createdAt', 'updatedAt'].includes(k)));
    const admin = await addStaffUser(t.server.database.db, hotel.slug, `admin-${engine}@reference.example`, 'admin');
    expect((await (await DashboardClient.loggedIn(t, admin.email)).post('/guests', walkIn)).status).toBe(201);
    const moved = synced.details.updated[0] as { pmsGuestId: string; changes: { roomNumber: { from: string } } };
    const babbage = synced.details.checkedOut[0] as Json;
    for (const g of [guests[0], { ...guests.find((x) => x.pmsGuestId === moved.pmsGuestId), roomNumber: moved.changes.roomNumber.from }, { ...guests[0], ...babbage, firstName: null }])
      expect((await post('checkin', g)).status).toBe(200);
    await expectAnswer(await post('sync', request('syncGuests', 'fullList')), 'syncGuests', 200, 'fullList');
    await expectAnswer(await t.api('GET', `${pmsBase(hotel.slug)}/guests`, { key: hotel.key }), 'listGuests', 200, 'list');
    const turing = guests.at(-1);
    const intoWalkIn = await post('sync', { syncMode: 'full', guests: [{ ...turing, roomNumber: walkIn.roomNumber }] });
    await expectAnswer(intoWalkIn, 'syncGuests', 409, 'ROOM_OCCUPIED');
  });
});
