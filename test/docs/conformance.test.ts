import fc from 'fast-check';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeyPair } from '../../src/operations.js';
import { guest, startTestServer, uniqueKey, type ApiResponse, type TestServer } from '../support/harness.js';

// A generic OpenAPI conformance check. Requests generated from arbitraries (valid
// and broken guests, wrong types, unknown members, missing headers) go to the real server
// over HTTPS; every answer's status must be one the document lists for the operation, its
// body must match the document's schema for that status, and the headers the document
// declares must be there.

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
type Json = Record<string, unknown>;

describe('the service answers as its OpenAPI document says', () => {
  let t: TestServer;
  let doc: Json;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  // Checked by the document's enums; the formats' names only need to be known.
  ajv.addFormat('iso-639-1', true);
  ajv.addFormat('iso-3166-1-alpha-2', true);
  const validators = new Map<string, ValidateFunction>();
  /** Statuses seen per operation: the generated requests must reach more than one outcome. */
  const seen = new Map<string, Set<number>>();
  const keys: string[] = [];
  let nextKey = 0;

  beforeAll(async () => {
    t = await startTestServer('sqlite');
    doc = (await t.api('GET', '/api/pms/v1/openapi.json', { key: null })).body as Json;
    // The limits are per key and endpoint (sync: 10 an hour): enough keys for every request below.
    for (let i = 0; i < 12; i++) keys.push((await issueKeyPair(t.server.database.db, t.slug)).live);
  });
  afterAll(() => t.close());

  const operation = (path: string, method: string): Json => ((doc.paths as Json)[path] as Json)[method] as Json;

  /** Checks one answer against the operation's documented responses. */
  function conforms(op: Json, res: ApiResponse, label: string): void {
    const responses = op.responses as Record<string, Json>;
    seen.set(String(op.operationId), (seen.get(String(op.operationId)) ?? new Set()).add(res.status));
    const documented = responses[String(res.status)];
    expect(documented, `${label}: HTTP ${res.status} is not documented (${Object.keys(responses).join(', ')}); body ${res.text}`).toBeDefined();
    if (!documented) return;
    const schema = ((documented.content as Json | undefined)?.['application/json'] as Json | undefined)?.schema;
    if (schema) {
      const id = `${String(op.operationId)} ${res.status}`;
      let validate = validators.get(id);
      if (!validate) {
        validate = ajv.compile(schema);
        validators.set(id, validate);
      }
      expect(validate(res.body), `${label}: body does not match the ${res.status} schema: ${ajv.errorsText(validate.errors)}; ${res.text}`).toBe(true);
    }
    for (const header of Object.keys((documented.headers ?? {}) as Json)) {
      if (header === 'Idempotent-Replayed' || header === 'Retry-After') continue; // only on replays, and on 429/503 (checked below)
      expect(res.headers[header.toLowerCase()], `${label}: header ${header}`).toBeDefined();
    }
    if (res.status === 429) expect(res.headers['retry-after'], `${label}: Retry-After`).toBeDefined();
  }

  // Values of a guest's fields: valid ones, and the mistakes a PMS makes.
  const text = fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.constant(''), fc.string({ minLength: 101, maxLength: 120 }), fc.integer(), fc.constant(null));
  const date = fc.oneof(fc.constant('2026-11-23'), fc.constant('2026-11-26'), fc.constant('2026-02-30'), fc.constant('23.11.2026'), fc.integer());
  const field = {
    pmsGuestId: fc.oneof(fc.stringMatching(/^[A-Z]{2}-\d{1,6}$/), fc.constant(''), fc.integer()),
    lastName: text,
    firstName: text,
    roomNumber: fc.oneof(fc.stringMatching(/^\d{1,4}$/), fc.constant('  '), fc.string({ minLength: 21, maxLength: 25 }), fc.integer()),
    checkInDate: date,
    checkOutDate: date,
    phone: fc.oneof(fc.constant('+4930123456'), fc.constant('030 123'), fc.constant(null)),
    email: fc.oneof(fc.constant('ada@example.com'), fc.constant('not-an-email'), fc.constant(null)),
    language: fc.oneof(fc.constant('en'), fc.constant('xx'), fc.constant('EN'), fc.constant(null)),
    nationality: fc.oneof(fc.constant('DE'), fc.constant('de'), fc.constant('XX'), fc.constant(null)),
    adults: fc.oneof(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 100, max: 1000 }), fc.constant(-1), fc.constant('2'), fc.constant(null)),
    children: fc.oneof(fc.integer({ min: 0, max: 99 }), fc.constant(1.5), fc.constant(null)),
    roomKey: fc.constant('unknown member'),
  };
  const body = fc.record(field, { requiredKeys: [] });

  const post = (path: string, payload: unknown, headers: { key?: string; idem?: string | null; type?: string } = {}): Promise<ApiResponse> =>
    t.api('POST', `${t.pmsBase}${path}`, {
      key: headers.key ?? keys[0],
      rawBody: JSON.stringify(payload),
      headers: { 'content-type': headers.type ?? 'application/json' },
      idempotencyKey: headers.idem === undefined ? uniqueKey('conf') : headers.idem,
    });
  const anyKey = (): string => keys[nextKey++ % keys.length] ?? '';

  it('check-in, update and checkout: generated bodies, each answer as documented', async () => {
    const samples = fc.sample(body, { numRuns: 60, seed: 20261124 });
    // One guest goes through all three: checked in, updated, checked out.
    const g = guest();
    const validOf = { checkin: g, update: { pmsGuestId: g.pmsGuestId, lastName: 'Conformance' }, checkout: { pmsGuestId: g.pmsGuestId } };
    for (const [path, method, id] of [
      ['/guests/checkin', 'post', 'checkin'],
      ['/guests/update', 'post', 'update'],
      ['/guests/checkout', 'post', 'checkout'],
    ] as const) {
      const op = operation(`/api/pms/v1/{slug}${path}`, method);
      for (const [i, sample] of samples.entries()) {
        const res = await post(path, sample, { key: anyKey() });
        conforms(op, res, `${id} #${i} ${JSON.stringify(sample)}`);
      }
      // A valid one (and its replay), no key, no Idempotency-Key, a wrong content type, not JSON.
      const valid = validOf[id];
      const idem = uniqueKey('replay');
      conforms(op, await post(path, valid, { idem }), `${id} first`);
      const replay = await post(path, valid, { idem });
      conforms(op, replay, `${id} replay`);
      if (replay.status === 200) expect(replay.headers['idempotent-replayed']).toBe('true');
      if (id === 'checkin') conforms(op, await post(path, guest({ roomNumber: g.roomNumber })), 'checkin into a held room');
      conforms(op, await post(path, valid, { key: 'pms_live_nottherightkeyatall' }), `${id} bad key`);
      conforms(op, await post(path, valid, { idem: null }), `${id} no Idempotency-Key`);
      conforms(op, await post(path, valid, { type: 'text/plain' }), `${id} text/plain`);
      conforms(
        op,
        await t.api('POST', `${t.pmsBase}${path}`, { rawBody: '{"pmsGuestId":', headers: { 'content-type': 'application/json' }, idempotencyKey: uniqueKey() }),
        `${id} broken JSON`,
      );
    }
  });

  it('the generated requests reached the documented outcomes, success and refusals alike', () => {
    for (const id of ['checkInGuest', 'updateGuest', 'checkOutGuest']) expect([...(seen.get(id) ?? [])].sort(), id).toEqual(expect.arrayContaining([200, 400, 401, 415, 422]));
    expect([...(seen.get('checkInGuest') ?? [])]).toContain(409);
  });

  it('sync and the guest list: generated lists and filters, each answer as documented', async () => {
    const sync = operation('/api/pms/v1/{slug}/guests/sync', 'post');
    const lists = fc.sample(fc.array(body, { maxLength: 4 }), { numRuns: 40, seed: 11 });
    for (const [i, list] of lists.entries()) {
      const res = await post('/guests/sync', { syncMode: i % 7 === 0 ? 'partial' : 'full', guests: list }, { key: anyKey() });
      conforms(sync, res, `sync #${i}`);
    }
    conforms(sync, await post('/guests/sync', { syncMode: 'full', guests: [guest(), guest()] }, { key: anyKey() }), 'sync valid');
    const list = operation('/api/pms/v1/{slug}/guests', 'get');
    const queries = fc.sample(
      fc.record({ source: fc.constantFrom('pms', 'receptionist', 'walkin'), roomNumber: fc.constantFrom('101', ''), extra: fc.constant('1') }, { requiredKeys: [] }),
      { numRuns: 25, seed: 7 },
    );
    for (const [i, q] of queries.entries()) {
      const res = await t.api('GET', `${t.pmsBase}/guests?${new URLSearchParams(q as Record<string, string>).toString()}`, { key: keys[i % keys.length] });
      conforms(list, res, `list ${JSON.stringify(q)}`);
    }
    expect([...(seen.get('syncGuests') ?? [])]).toEqual(expect.arrayContaining([200, 422]));
    expect([...(seen.get('listGuests') ?? [])]).toEqual(expect.arrayContaining([200, 422]));
  });
});
