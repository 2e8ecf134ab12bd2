import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomId } from '../../src/domain/ids.js';
import { issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type RequestOptions, type TestServer, pmsBase } from '../support/harness.js';

// docs/pms-interface.md, "Guest fields", "Request bodies", "Errors" and "Order of checks",
// proven through real HTTPS requests.
// Each test gets its own key pair (rate limits count per key and endpoint: 60/min for
// events, 10/h for sync), so the file never runs into 429.

type Body = Record<string, unknown>;
type FieldIssue = [field: string, code: string];

/** Every 422 body: status, code, message, requestId and errors[{field, code, message}], nothing else. */
function expect422(res: ApiResponse, code: 'VALIDATION_ERROR' | 'INVALID_DATE_FORMAT', issues: FieldIssue[]): void {
  expect(res.status, res.text).toBe(422);
  expect(Object.keys(res.body).sort()).toEqual(['code', 'errors', 'message', 'requestId', 'status']);
  expect(res.body).toMatchObject({ status: 'error', code, message: expect.any(String), requestId: expect.stringMatching(/^req_/) });
  expect(res.body.message.length).toBeGreaterThan(0);
  for (const e of res.body.errors as unknown[]) {
    expect(e).toEqual({ field: expect.any(String), code: expect.any(String), message: expect.any(String) });
  }
  for (const [field, fieldCode] of issues) {
    expect(res.body.errors, `${field} ${fieldCode}`).toContainEqual({ field, code: fieldCode, message: expect.any(String) });
  }
}

/** A 422 whose errors name exactly these (field, code) pairs. */
function expectOnly422(res: ApiResponse, code: 'VALIDATION_ERROR' | 'INVALID_DATE_FORMAT', issues: FieldIssue[]): void {
  expect422(res, code, issues);
  const got = (res.body.errors as Array<{ field: string; code: string }>).map((e) => `${e.field} ${e.code}`).sort();
  expect(got).toEqual(issues.map(([f, c]) => `${f} ${c}`).sort());
}

/** The standard error envelope of a non-422 error. */
function expectError(res: ApiResponse, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toMatchObject({ status: 'error', code, message: expect.any(String), requestId: expect.stringMatching(/^req_/) });
}

const rid = (): string => randomId(8);

/** A sync list entry: a valid check-in body. */
const syncGuest = (over: Body = {}): Body => guest(over);

describe.each(testEngines())('field and envelope validation over HTTPS (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let k: IssuedKeyPair;

  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    k = await issueKeyPair(t.server.database.db, t.slug);
  });

  const post = (path: string, body: unknown, opts: RequestOptions = {}): Promise<ApiResponse> => t.post(`${base}${path}`, body, { key: k.live, ...opts });
  const checkin = (over: Body, opts: RequestOptions = {}): Promise<ApiResponse> => post('/guests/checkin', guest(over), opts);
  const listByPmsId = async (pmsGuestId: string): Promise<Body> => {
    const res = await t.api('GET', `${base}/guests?pmsGuestId=${encodeURIComponent(pmsGuestId)}`, { key: k.live });
    expect(res.body.count).toBe(1);
    return res.body.guests[0] as Body;
  };

  /** Accepted values are stored as sent (read back through GET /guests). */
  async function expectAccepted(field: string, values: unknown[]): Promise<void> {
    for (const value of values) {
      const g = guest({ [field]: value });
      const res = await post('/guests/checkin', g);
      expect(res.status, `${field}=${JSON.stringify(value)}: ${res.text}`).toBe(200);
      if (field !== 'pmsGuestId' && field !== 'roomNumber') expect((await listByPmsId(String(g.pmsGuestId)))[field]).toEqual(value);
    }
  }

  /** Each refused value is a 422 naming exactly this field with this code. */
  async function expectRefused(
    field: string,
    cases: Array<[unknown, string]>,
    code: 'VALIDATION_ERROR' | 'INVALID_DATE_FORMAT' = 'VALIDATION_ERROR',
  ): Promise<void> {
    for (const [value, fieldCode] of cases) {
      const res = await checkin({ [field]: value });
      expectOnly422(res, code, [[field, fieldCode]]);
    }
  }

  // ---------------------------------------------------------------- guest fields

  describe('guest fields', () => {
    it('pmsGuestId is 1-128 chars (1 and 128 accepted)', async () => {
      const long = `P${rid()}`.padEnd(128, 'x');
      const res = await checkin({ pmsGuestId: long });
      expect(res.status).toBe(200);
      expect(res.body.pmsGuestId).toBe(long);
      const one = await checkin({ pmsGuestId: 'q' });
      expect(one.status).toBe(200);
    });

    it('pmsGuestId empty, 129 chars, control characters or not a string is refused', async () => {
      await expectRefused('pmsGuestId', [
        ['', 'TOO_SHORT'],
        ['P'.repeat(129), 'TOO_LONG'],
        ['ab\u0000cd', 'INVALID_FORMAT'],
        ['ab\ncd', 'INVALID_FORMAT'],
        ['ab\u007fcd', 'INVALID_FORMAT'],
        ['ab\u0085cd', 'INVALID_FORMAT'],
        [42, 'INVALID_TYPE'],
      ]);
    });

    it('roomNumber is trimmed (" 305 " is stored as "305")', async () => {
      const room = `3${rid()}`;
      const g = guest({ roomNumber: `  ${room} ` });
      const res = await post('/guests/checkin', g);
      expect(res.status).toBe(200);
      expect(res.body.roomNumber).toBe(room);
      expect((await listByPmsId(String(g.pmsGuestId))).roomNumber).toBe(room);
      // The trimmed value is what a room holds: the padded form is the same room.
      const clash = await checkin({ roomNumber: room });
      expect(clash.status).toBe(409);
      expect(clash.body.code).toBe('ROOM_OCCUPIED');
    });

    it('roomNumber is 1-20 chars after trimming (1 and 20 accepted, padding does not count)', async () => {
      const twenty = `${rid()}`.padEnd(20, '0');
      const res = await checkin({ roomNumber: twenty });
      expect(res.status).toBe(200);
      expect(res.body.roomNumber).toBe(twenty);
      const padded = `${rid()}`.padEnd(20, '1');
      const res2 = await checkin({ roomNumber: `   ${padded}   ` });
      expect(res2.status).toBe(200);
      expect(res2.body.roomNumber).toBe(padded);
      const one = await checkin({ roomNumber: 'S' });
      expect(one.status).toBe(200);
    });

    it('roomNumber blanks only, empty, 21 chars or control characters is refused', async () => {
      await expectRefused('roomNumber', [
        ['   ', 'TOO_SHORT'],
        ['', 'TOO_SHORT'],
        ['R'.repeat(21), 'TOO_LONG'],
        ['30\u00015', 'INVALID_FORMAT'],
        ['\t305\t', 'INVALID_FORMAT'],
        ['305\n', 'INVALID_FORMAT'],
        [305, 'INVALID_TYPE'],
      ]);
    });

    it('lastName is 1-100 chars (1 and 100 accepted)', async () => {
      await expectAccepted('lastName', ['L', 'L'.repeat(100)]);
    });

    it('lastName empty or 101 chars is refused (an empty string is not "absent")', async () => {
      await expectRefused('lastName', [
        ['', 'TOO_SHORT'],
        ['L'.repeat(101), 'TOO_LONG'],
        [7, 'INVALID_TYPE'],
      ]);
    });

    it('firstName is 1-100 chars, optional, may be null', async () => {
      await expectAccepted('firstName', ['F', 'F'.repeat(100), null]);
    });

    it('firstName "" breaks the 1-100 rule (an empty string is not "absent"); 101 chars refused', async () => {
      await expectRefused('firstName', [
        ['', 'TOO_SHORT'],
        ['F'.repeat(101), 'TOO_LONG'],
      ]);
    });

    it('checkInDate is a real calendar date (2024-02-29 accepted)', async () => {
      const g = guest({ checkInDate: '2024-02-29', checkOutDate: '2024-03-01' });
      const res = await post('/guests/checkin', g);
      expect(res.status).toBe(200);
      expect(await listByPmsId(String(g.pmsGuestId))).toMatchObject({ checkInDate: '2024-02-29', checkOutDate: '2024-03-01' });
    });

    it('checkInDate 2026-02-30, 2023-02-29, 2026-13-01, 2026-1-5, a timestamp or a number is 422 INVALID_DATE_FORMAT', async () => {
      await expectRefused(
        'checkInDate',
        [
          ['2026-02-30', 'INVALID_DATE_FORMAT'],
          ['2023-02-29', 'INVALID_DATE_FORMAT'],
          ['2026-13-01', 'INVALID_DATE_FORMAT'],
          ['2026-1-5', 'INVALID_DATE_FORMAT'],
          ['2026-11-23T00:00:00Z', 'INVALID_DATE_FORMAT'],
          ['23.11.2026', 'INVALID_DATE_FORMAT'],
          [20261123, 'INVALID_DATE_FORMAT'],
        ],
        'INVALID_DATE_FORMAT',
      );
    });

    it('checkOutDate is a real calendar date (2024-02-29 accepted; 2026-02-30, 2026-1-5, a number refused)', async () => {
      const res = await checkin({ checkInDate: '2024-02-28', checkOutDate: '2024-02-29' });
      expect(res.status).toBe(200);
      await expectRefused(
        'checkOutDate',
        [
          ['2026-02-30', 'INVALID_DATE_FORMAT'],
          ['2026-1-5', 'INVALID_DATE_FORMAT'],
          [20261126, 'INVALID_DATE_FORMAT'],
        ],
        'INVALID_DATE_FORMAT',
      );
    });

    it('checkOutDate not before checkInDate (same day accepted, a day earlier refused)', async () => {
      const same = await checkin({ checkInDate: '2026-11-23', checkOutDate: '2026-11-23' });
      expect(same.status).toBe(200);
      const res = await checkin({ checkInDate: '2026-11-23', checkOutDate: '2026-11-22' });
      expectOnly422(res, 'VALIDATION_ERROR', [['checkOutDate', 'DATE_ORDER']]);
    });

    it('checkOutDate not before checkInDate also on update, against the stored date', async () => {
      const g = guest({ checkInDate: '2026-11-23', checkOutDate: '2026-11-26' });
      await post('/guests/checkin', g);
      // Only checkOutDate sent: compared with the stored checkInDate.
      const early = await post('/guests/update', { pmsGuestId: g.pmsGuestId, checkOutDate: '2026-11-22' });
      expectOnly422(early, 'VALIDATION_ERROR', [['checkOutDate', 'DATE_ORDER']]);
      // Only checkInDate sent: compared with the stored checkOutDate.
      const late = await post('/guests/update', { pmsGuestId: g.pmsGuestId, checkInDate: '2026-11-27' });
      expectOnly422(late, 'VALIDATION_ERROR', [['checkOutDate', 'DATE_ORDER']]);
      // Both sent in the wrong order.
      const both = await post('/guests/update', { pmsGuestId: g.pmsGuestId, checkInDate: '2026-12-02', checkOutDate: '2026-12-01' });
      expectOnly422(both, 'VALIDATION_ERROR', [['checkOutDate', 'DATE_ORDER']]);
      expect(await listByPmsId(String(g.pmsGuestId))).toMatchObject({ checkInDate: '2026-11-23', checkOutDate: '2026-11-26' });
      // Moving both dates consistently is fine.
      const ok = await post('/guests/update', { pmsGuestId: g.pmsGuestId, checkInDate: '2026-11-27', checkOutDate: '2026-11-28' });
      expect(ok.status).toBe(200);
      expect(ok.body.changes).toEqual({ checkInDate: { from: '2026-11-23', to: '2026-11-27' }, checkOutDate: { from: '2026-11-26', to: '2026-11-28' } });
    });

    it('update dates must be real calendar dates (422 INVALID_DATE_FORMAT)', async () => {
      const g = guest();
      await post('/guests/checkin', g);
      const res = await post('/guests/update', { pmsGuestId: g.pmsGuestId, checkOutDate: '2026-02-30' });
      expectOnly422(res, 'INVALID_DATE_FORMAT', [['checkOutDate', 'INVALID_DATE_FORMAT']]);
    });

    it('phone is E.164 (+ then 2-15 digits, first not 0), optional, may be null', async () => {
      await expectAccepted('phone', ['+4930123456', '+12', '+123456789012345', null]);
    });

    it('phone not E.164 is refused (1 digit, 16 digits, leading 0, no +, spaces)', async () => {
      await expectRefused('phone', [
        ['+1', 'INVALID_FORMAT'],
        ['+1234567890123456', 'INVALID_FORMAT'],
        ['+0123456', 'INVALID_FORMAT'],
        ['4930123456', 'INVALID_FORMAT'],
        ['+49 30 123456', 'INVALID_FORMAT'],
        ['', 'INVALID_FORMAT'],
        [4930123456, 'INVALID_TYPE'],
      ]);
    });

    it('email is an e-mail address of at most 254 chars (254 accepted), optional, may be null', async () => {
      // 64 + 1 + 189 = 254 characters, every DNS label at most 63.
      const email254 = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
      expect(email254).toHaveLength(254);
      await expectAccepted('email', ['guest@example.com', email254, null]);
    });

    it('email over 254 chars or not an address is refused', async () => {
      const email255 = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`;
      expect(email255).toHaveLength(255);
      const long = await checkin({ email: email255 });
      expect422(long, 'VALIDATION_ERROR', [['email', 'TOO_LONG']]);
      expect(long.body.errors.every((e: { field: string }) => e.field === 'email')).toBe(true);
      await expectRefused('email', [
        ['not-an-address', 'INVALID_FORMAT'],
        ['a@', 'INVALID_FORMAT'],
        ['', 'INVALID_FORMAT'],
      ]);
    });

    it('language is an assigned ISO 639-1 code in lower case (en, de accepted), may be null', async () => {
      await expectAccepted('language', ['en', 'de', null]);
    });

    it('language zz (unassigned), EN (upper case) and eng (639-2) are refused', async () => {
      await expectRefused('language', [
        ['zz', 'INVALID_VALUE'],
        ['EN', 'INVALID_VALUE'],
        ['eng', 'INVALID_VALUE'],
      ]);
    });

    it('nationality is an assigned ISO 3166-1 alpha-2 code in upper case (DE, US accepted), may be null', async () => {
      await expectAccepted('nationality', ['DE', 'US', null]);
    });

    it('nationality AB (unassigned), de (lower case) and DEU (alpha-3) are refused', async () => {
      await expectRefused('nationality', [
        ['AB', 'INVALID_VALUE'],
        ['de', 'INVALID_VALUE'],
        ['DEU', 'INVALID_VALUE'],
      ]);
    });

    it('adults and children are integers 0-99 (0 and 99 accepted), may be null', async () => {
      await expectAccepted('adults', [0, 99, null]);
      await expectAccepted('children', [0, 99, null]);
    });

    it('adults and children 100, -1, 1.5 and "2" are refused', async () => {
      for (const field of ['adults', 'children']) {
        await expectRefused(field, [
          [100, 'OUT_OF_RANGE'],
          [-1, 'OUT_OF_RANGE'],
          [1.5, 'INVALID_TYPE'],
          ['2', 'INVALID_TYPE'],
        ]);
      }
    });

    it('required fields missing at check-in are 422 naming each of them', async () => {
      const res = await post('/guests/checkin', {});
      expectOnly422(res, 'VALIDATION_ERROR', [
        ['pmsGuestId', 'REQUIRED'],
        ['roomNumber', 'REQUIRED'],
        ['lastName', 'REQUIRED'],
        ['checkInDate', 'REQUIRED'],
        ['checkOutDate', 'REQUIRED'],
      ]);
      // One missing at a time: named alone.
      for (const field of ['pmsGuestId', 'roomNumber', 'lastName', 'checkInDate', 'checkOutDate']) {
        const g = guest();
        delete g[field];
        expectOnly422(await post('/guests/checkin', g), 'VALIDATION_ERROR', [[field, 'REQUIRED']]);
      }
    });

    it('the optional fields may be absent or null at check-in (stored as null)', async () => {
      const minimal = { pmsGuestId: `P${rid()}`, roomNumber: `M${rid()}`, lastName: 'Min', checkInDate: '2026-11-23', checkOutDate: '2026-11-24' };
      expect((await post('/guests/checkin', minimal)).status).toBe(200);
      const nulls: Record<string, unknown> = {
        ...guest(),
        firstName: null,
        phone: null,
        email: null,
        language: null,
        nationality: null,
        adults: null,
        children: null,
      };
      expect((await post('/guests/checkin', nulls)).status).toBe(200);
      for (const id of [minimal.pmsGuestId, String(nulls.pmsGuestId)]) {
        expect(await listByPmsId(id)).toMatchObject({
          firstName: null,
          phone: null,
          email: null,
          language: null,
          nationality: null,
          adults: null,
          children: null,
        });
      }
    });

    it('a required field sent as null is refused (null is only for optional fields)', async () => {
      const res = await checkin({ lastName: null, roomNumber: null });
      // Each field is reported once.
      expectOnly422(res, 'VALIDATION_ERROR', [
        ['lastName', 'INVALID_TYPE'],
        ['roomNumber', 'INVALID_TYPE'],
      ]);
      const g = guest();
      await post('/guests/checkin', g);
      const upd = await post('/guests/update', { pmsGuestId: g.pmsGuestId, lastName: null });
      expectOnly422(upd, 'VALIDATION_ERROR', [['lastName', 'INVALID_TYPE']]);
    });

    it('update applies the same field rules (roomNumber trimmed, blanks refused, empty firstName refused)', async () => {
      const g = guest();
      await post('/guests/checkin', g);
      const room = `U${rid()}`;
      const moved = await post('/guests/update', { pmsGuestId: g.pmsGuestId, roomNumber: ` ${room}  ` });
      expect(moved.status).toBe(200);
      expect(moved.body.changes.roomNumber).toEqual({ from: g.roomNumber, to: room });
      expectOnly422(await post('/guests/update', { pmsGuestId: g.pmsGuestId, roomNumber: '  ' }), 'VALIDATION_ERROR', [['roomNumber', 'TOO_SHORT']]);
      expectOnly422(await post('/guests/update', { pmsGuestId: g.pmsGuestId, firstName: '' }), 'VALIDATION_ERROR', [['firstName', 'TOO_SHORT']]);
      expectOnly422(await post('/guests/update', { pmsGuestId: g.pmsGuestId, adults: 100 }), 'VALIDATION_ERROR', [['adults', 'OUT_OF_RANGE']]);
      expectOnly422(await post('/guests/update', { firstName: 'X' }), 'VALIDATION_ERROR', [['pmsGuestId', 'REQUIRED']]);
      expect(await listByPmsId(String(g.pmsGuestId))).toMatchObject({ roomNumber: room, firstName: 'Ada', adults: null });
    });

    it('checkout body is pmsGuestId only, under the pmsGuestId rules', async () => {
      expectOnly422(await post('/guests/checkout', {}), 'VALIDATION_ERROR', [['pmsGuestId', 'REQUIRED']]);
      expectOnly422(await post('/guests/checkout', { pmsGuestId: '' }), 'VALIDATION_ERROR', [['pmsGuestId', 'TOO_SHORT']]);
      const g = guest();
      await post('/guests/checkin', g);
      const extra = await post('/guests/checkout', { pmsGuestId: g.pmsGuestId, roomNumber: g.roomNumber });
      expectOnly422(extra, 'VALIDATION_ERROR', [['roomNumber', 'UNKNOWN_FIELD']]);
      expect((await post('/guests/checkout', { pmsGuestId: g.pmsGuestId })).status).toBe(200);
    });
  });

  // ---------------------------------------------------------------- 422 envelope

  describe('Errors, 422 envelope', () => {
    it('an unknown member (roomNo) is 422 VALIDATION_ERROR naming it, with a live key', async () => {
      const g = guest({ roomNo: '305' });
      const res = await post('/guests/checkin', g);
      expectOnly422(res, 'VALIDATION_ERROR', [['roomNo', 'UNKNOWN_FIELD']]);
      expect(res.body.errors[0].message).toContain('roomNo');
      const upd = await post('/guests/update', { pmsGuestId: g.pmsGuestId, roomNo: '305' });
      expectOnly422(upd, 'VALIDATION_ERROR', [['roomNo', 'UNKNOWN_FIELD']]);
    });

    it('an unknown member (roomNo) is refused in test mode too', async () => {
      const res = await post('/guests/checkin', guest({ roomNo: '305' }), { key: k.test });
      expectOnly422(res, 'VALIDATION_ERROR', [['roomNo', 'UNKNOWN_FIELD']]);
      expect(res.body.requestId).toMatch(/^req_test_/);
      const upd = await post('/guests/update', { pmsGuestId: 'any', roomNo: '305' }, { key: k.test });
      expectOnly422(upd, 'VALIDATION_ERROR', [['roomNo', 'UNKNOWN_FIELD']]);
      const out = await post('/guests/checkout', { pmsGuestId: 'any', roomNo: '305' }, { key: k.test });
      expectOnly422(out, 'VALIDATION_ERROR', [['roomNo', 'UNKNOWN_FIELD']]);
    });

    it('errors lists every problem found, not only the first', async () => {
      const res = await post('/guests/checkin', {
        pmsGuestId: '',
        roomNumber: '   ',
        lastName: '',
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-24',
        phone: '0049',
        language: 'zz',
        nationality: 'de',
        adults: 100,
        children: 1.5,
        roomNo: '1',
      });
      expectOnly422(res, 'VALIDATION_ERROR', [
        ['pmsGuestId', 'TOO_SHORT'],
        ['roomNumber', 'TOO_SHORT'],
        ['lastName', 'TOO_SHORT'],
        ['phone', 'INVALID_FORMAT'],
        ['language', 'INVALID_VALUE'],
        ['nationality', 'INVALID_VALUE'],
        ['adults', 'OUT_OF_RANGE'],
        ['children', 'INVALID_TYPE'],
        ['roomNo', 'UNKNOWN_FIELD'],
      ]);
    });

    it('INVALID_DATE_FORMAT wins over other field errors, and errors still lists all', async () => {
      const res = await checkin({ lastName: '', adults: -1, checkOutDate: '2026-02-30', roomNo: 'x' });
      expectOnly422(res, 'INVALID_DATE_FORMAT', [
        ['lastName', 'TOO_SHORT'],
        ['adults', 'OUT_OF_RANGE'],
        ['checkOutDate', 'INVALID_DATE_FORMAT'],
        ['roomNo', 'UNKNOWN_FIELD'],
      ]);
    });

    it('a 422 leaves the Idempotency-Key unconsumed (a 4xx does not use the key up)', async () => {
      const key = uniqueKey('val');
      const bad = await post('/guests/checkin', guest({ lastName: '' }), { idempotencyKey: key });
      expect(bad.status).toBe(422);
      const good = await post('/guests/checkin', guest(), { idempotencyKey: key });
      expect(good.status).toBe(200);
    });
  });

  // ---------------------------------------------------------------- transport envelope

  describe('Errors, body, media type, size, routing', () => {
    const rawPost = (
      path: string,
      rawBody: string,
      headers: Record<string, string> = { 'content-type': 'application/json' },
      opts: RequestOptions = {},
    ): Promise<ApiResponse> => t.api('POST', `${base}${path}`, { key: k.live, idempotencyKey: uniqueKey(), rawBody, headers, ...opts });

    it('an unparseable body is 400 INVALID_JSON', async () => {
      for (const raw of ['{"pmsGuestId": ', 'not json', "{'a': 1}", '']) {
        const res = await rawPost('/guests/checkin', raw);
        expectError(res, 400, 'INVALID_JSON');
      }
    });

    it('a body that is valid JSON but not an object ([], 42, null, "x", true) is 400 INVALID_JSON', async () => {
      for (const raw of ['[]', '42', 'null', '"x"', 'true', '[{"pmsGuestId":"a"}]']) {
        const res = await rawPost('/guests/checkin', raw);
        expectError(res, 400, 'INVALID_JSON');
      }
      expectError(await rawPost('/guests/sync', '[]'), 400, 'INVALID_JSON');
      expectError(await rawPost('/guests/update', 'null'), 400, 'INVALID_JSON');
    });

    it('Content-Type text/plain is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      const body = JSON.stringify(guest());
      expectError(await rawPost('/guests/checkin', body, { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectError(await rawPost('/guests/checkin', body, { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectError(await rawPost('/guests/checkin', body, { 'content-type': 'application/jsonp' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectError(await rawPost('/guests/update', body, { 'content-type': 'text/json' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('a missing Content-Type is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
      expectError(await rawPost('/guests/checkin', JSON.stringify(guest()), {}), 415, 'UNSUPPORTED_MEDIA_TYPE');
      // No body at all and no Content-Type: still 415, not a crash.
      const res = await t.api('POST', `${base}/guests/checkout`, { key: k.live, idempotencyKey: uniqueKey() });
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('Content-Type matching is case-insensitive and allows parameters (Application/JSON; charset=utf-8)', async () => {
      for (const type of ['Application/JSON; charset=utf-8', 'application/json;charset=UTF-8', 'APPLICATION/JSON']) {
        const g = guest();
        const res = await rawPost('/guests/checkin', JSON.stringify(g), { 'content-type': type });
        expect(res.status, `${type}: ${res.text}`).toBe(200);
        expect(res.body).toMatchObject({ status: 'created', pmsGuestId: g.pmsGuestId });
      }
    });

    it('an event body over 1 MiB is 413 PAYLOAD_TOO_LARGE', async () => {
      const huge = JSON.stringify(guest({ lastName: 'x'.repeat(1024 * 1024) }));
      expectError(await rawPost('/guests/checkin', huge), 413, 'PAYLOAD_TOO_LARGE');
      expectError(await rawPost('/guests/update', huge), 413, 'PAYLOAD_TOO_LARGE');
      expectError(await rawPost('/guests/checkout', JSON.stringify({ pmsGuestId: 'x', pad: ' '.repeat(1024 * 1024) })), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('an event body just under 1 MiB is not 413 (validated instead)', async () => {
      const body = JSON.stringify(guest({ lastName: 'x'.repeat(1024 * 1024 - 300) }));
      expect(body.length).toBeLessThanOrEqual(1024 * 1024);
      const res = await rawPost('/guests/checkin', body);
      expectOnly422(res, 'VALIDATION_ERROR', [['lastName', 'TOO_LONG']]);
    });

    it('a sync body of ~2 MiB is read and validated (16 MiB limit for sync), not 413', async () => {
      // 11,000 valid guests and one fault in the last: the 422 naming it proves the whole
      // body was read and validated (whatever sync itself answers in this version).
      const guests = Array.from({ length: 11_000 }, (_, i) => ({
        pmsGuestId: `BIG-${i}`,
        roomNumber: `B${i}`,
        lastName: 'Lovelace-Byron-King',
        firstName: 'Augusta Ada',
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-26',
        email: `guest${i}@example.com`,
        ...(i === 10_999 ? { phone: '123' } : {}),
      }));
      const raw = JSON.stringify({ syncMode: 'full', guests });
      expect(raw.length).toBeGreaterThan(2 * 1024 * 1024);
      const res = await rawPost('/guests/sync', raw);
      expectOnly422(res, 'VALIDATION_ERROR', [['guests[10999].phone', 'INVALID_FORMAT']]);
    });

    it('a sync body over 16 MiB is 413 PAYLOAD_TOO_LARGE', async () => {
      const raw = JSON.stringify({ syncMode: 'full', guests: [], pad: 'x'.repeat(16 * 1024 * 1024) });
      expectError(await rawPost('/guests/sync', raw), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('an unknown path is 404 NOT_FOUND as JSON (never HTML), with or without a key', async () => {
      for (const path of [`${base}/guests/checkinn`, `${base}/nothing`, '/api/pms/v2/x/guests', '/nope', '/api/pms/v1/']) {
        for (const key of [null, k.live, 'pms_live_wrongwrongwrongwrong']) {
          const res = await t.api('GET', path, { key });
          expectError(res, 404, 'NOT_FOUND');
          expect(res.text).not.toMatch(/<html/i);
        }
      }
      const post404 = await t.api('POST', `${base}/guests/checkinn`, { key: null, body: guest() });
      expectError(post404, 404, 'NOT_FOUND');
    });

    it('a known path with a wrong method is 405 METHOD_NOT_ALLOWED with an Allow header, before authentication', async () => {
      const cases: Array<[string, string, string]> = [
        ['DELETE', '/guests', 'GET'],
        ['PUT', '/guests', 'GET'],
        ['GET', '/guests/checkin', 'POST'],
        ['PATCH', '/guests/update', 'POST'],
        ['DELETE', '/guests/checkout', 'POST'],
        ['GET', '/guests/sync', 'POST'],
      ];
      for (const [method, path, allowed] of cases) {
        for (const key of [null, 'pms_live_wrongwrongwrongwrong', k.live]) {
          const res = await t.api(method, `${base}${path}`, { key });
          expectError(res, 405, 'METHOD_NOT_ALLOWED');
          const allow = res.headers.allow?.split(',').map((s) => s.trim()) ?? [];
          expect(allow, `${method} ${path}`).toContain(allowed);
          expect(allow).not.toContain(method);
        }
      }
      // Under a slug that does not exist the path is still known: 405, not 401.
      expectError(await t.api('DELETE', '/api/pms/v1/no-such-hotel/guests', { key: null }), 405, 'METHOD_NOT_ALLOWED');
    });

    it('order of checks: route/method before body checks (wrong method with a bad or huge body is 405)', async () => {
      for (const rawBody of ['{bad', 'x'.repeat(1024 * 1024 + 10)]) {
        const res = await t.api('PUT', `${base}/guests/checkin`, { key: null, rawBody, headers: { 'content-type': 'application/json' } });
        expectError(res, 405, 'METHOD_NOT_ALLOWED');
        expect(res.headers.allow).toContain('POST');
      }
    });

    it('order of checks: route before body checks (unknown path with a bad or huge body is 404)', async () => {
      for (const rawBody of ['{bad', 'x'.repeat(1024 * 1024 + 10)]) {
        const res = await t.api('POST', `${base}/nope`, { key: null, rawBody, headers: { 'content-type': 'application/json' } });
        expectError(res, 404, 'NOT_FOUND');
      }
    });
  });

  // ---------------------------------------------------------------- order of checks

  describe('order of checks', () => {
    it('order of checks: a bad key with a bad body is 401 UNAUTHORIZED', async () => {
      for (const key of [null, 'pms_live_wrongwrongwrongwrong', 'garbage']) {
        const res = await t.api('POST', `${base}/guests/checkin`, { key, rawBody: '{bad', headers: { 'content-type': 'text/plain' } });
        expectError(res, 401, 'UNAUTHORIZED');
        expect(res.body.requestId).toMatch(/^req_(?!test_)/);
      }
      const invalidFields = await t.post(`${base}/guests/checkin`, guest({ lastName: '' }), { key: 'pms_test_wrongwrongwrongwrong' });
      expectError(invalidFields, 401, 'UNAUTHORIZED');
    });

    it('order of checks: a valid key without Idempotency-Key and a bad content type is 400 IDEMPOTENCY_KEY_REQUIRED', async () => {
      const res = await t.api('POST', `${base}/guests/checkin`, { key: k.live, rawBody: '{bad', headers: { 'content-type': 'text/plain' } });
      expectError(res, 400, 'IDEMPOTENCY_KEY_REQUIRED');
      const noType = await t.api('POST', `${base}/guests/update`, { key: k.live, rawBody: 'x' });
      expectError(noType, 400, 'IDEMPOTENCY_KEY_REQUIRED');
    });

    it('order of checks: a valid key, an Idempotency-Key, a wrong content type and a bad body is 415', async () => {
      const res = await t.api('POST', `${base}/guests/checkin`, {
        key: k.live,
        idempotencyKey: uniqueKey(),
        rawBody: '{bad',
        headers: { 'content-type': 'text/plain' },
      });
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('order of checks: content type and JSON before field validation (415 and 400 win over a body with field errors)', async () => {
      const invalid = JSON.stringify(guest({ lastName: '', roomNo: 'x' }));
      expectError(
        await t.api('POST', `${base}/guests/checkin`, {
          key: k.live,
          idempotencyKey: uniqueKey(),
          rawBody: invalid,
          headers: { 'content-type': 'text/plain' },
        }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      );
      const tooBigAndInvalid = JSON.stringify(guest({ lastName: '', pad: 'x'.repeat(1024 * 1024) }));
      expectError(
        await t.api('POST', `${base}/guests/checkin`, {
          key: k.live,
          idempotencyKey: uniqueKey(),
          rawBody: tooBigAndInvalid,
          headers: { 'content-type': 'application/json' },
        }),
        413,
        'PAYLOAD_TOO_LARGE',
      );
    });

    it('order of checks: field validation before state (invalid update of an unknown guest is 422, not 404)', async () => {
      const res = await post('/guests/update', { pmsGuestId: `nobody-${rid()}`, adults: 100 });
      expectOnly422(res, 'VALIDATION_ERROR', [['adults', 'OUT_OF_RANGE']]);
      const dup = guest();
      await post('/guests/checkin', dup);
      // A check-in that would be 409 GUEST_ALREADY_CHECKED_IN but breaks a field rule: 422.
      expectOnly422(await post('/guests/checkin', { ...dup, phone: '123' }), 'VALIDATION_ERROR', [['phone', 'INVALID_FORMAT']]);
    });

    it('IDEMPOTENCY_KEY_INVALID for an empty or 256-character key', async () => {
      expectError(await post('/guests/checkin', guest(), { idempotencyKey: '' }), 400, 'IDEMPOTENCY_KEY_INVALID');
      expectError(await post('/guests/checkin', guest(), { idempotencyKey: 'k'.repeat(256) }), 400, 'IDEMPOTENCY_KEY_INVALID');
      expect((await post('/guests/checkin', guest(), { idempotencyKey: `${uniqueKey()}`.padEnd(255, 'k') })).status).toBe(200);
    });
  });

  // ---------------------------------------------------------------- sync

  describe('sync validation', () => {
    // Each sync test runs on a hotel of its own (sync is 10 requests per hour per key, and
    // a valid full sync would reconcile the whole roster of the hotel).
    let syncBase: string;
    let syncKeys: IssuedKeyPair;
    beforeEach(async () => {
      const slug = `sync-${randomId(10)}`;
      syncKeys = await t.addHotel(slug);
      syncBase = `${pmsBase(slug)}`;
    });
    const sync = (body: unknown, opts: RequestOptions = {}): Promise<ApiResponse> => t.post(`${syncBase}/guests/sync`, body, { key: syncKeys.live, ...opts });
    /** A valid sync body passes validation and is applied. */
    const expectPassedValidation = (res: ApiResponse): void => {
      expect(res.status, res.text).toBe(200);
      expect(res.body.status).toBe('synced');
    };

    it('a valid sync body passes validation (empty list, and guests with null optional fields)', async () => {
      expectPassedValidation(await sync({ syncMode: 'full', guests: [syncGuest(), syncGuest({ phone: null, adults: 2, roomNumber: ' 7 ' })] }));
      expectPassedValidation(await sync({ syncMode: 'full', guests: [] }));
    });

    it('syncMode missing or not "full" is 422 VALIDATION_ERROR', async () => {
      expectOnly422(await sync({ guests: [] }), 'VALIDATION_ERROR', [['syncMode', 'REQUIRED']]);
      for (const mode of ['partial', 'FULL', '', null, 1]) {
        const res = await sync({ syncMode: mode, guests: [] });
        expect422(res, 'VALIDATION_ERROR', []);
        expect(res.body.errors.length, JSON.stringify(mode)).toBeGreaterThan(0);
        for (const e of res.body.errors as Array<{ field: string }>) expect(e.field).toBe('syncMode');
      }
      expect((await sync({ syncMode: 'partial', guests: [] })).body.errors[0].message).toBe('syncMode must be "full".');
    });

    it('guests missing or not an array is 422 VALIDATION_ERROR', async () => {
      expectOnly422(await sync({ syncMode: 'full' }), 'VALIDATION_ERROR', [['guests', 'REQUIRED']]);
      for (const guests of [{}, 'all', null, 3]) {
        expectOnly422(await sync({ syncMode: 'full', guests }), 'VALIDATION_ERROR', [['guests', 'INVALID_TYPE']]);
      }
    });

    it('an unknown member of the sync body is 422 naming it', async () => {
      expectOnly422(await sync({ syncMode: 'full', guests: [], mode: 'full' }), 'VALIDATION_ERROR', [['mode', 'UNKNOWN_FIELD']]);
    });

    it('a duplicate pmsGuestId inside one sync list is 422 VALIDATION_ERROR naming it', async () => {
      const a = syncGuest({ pmsGuestId: 'DUP-1' });
      const b = syncGuest();
      const c = syncGuest({ pmsGuestId: 'DUP-1' });
      const res = await sync({ syncMode: 'full', guests: [a, b, c] });
      expectOnly422(res, 'VALIDATION_ERROR', [['guests[2].pmsGuestId', 'DUPLICATE']]);
      expect(res.body.errors[0].message).toContain('DUP-1');
    });

    it('a duplicate roomNumber (after trimming) inside one sync list is 422 VALIDATION_ERROR naming it', async () => {
      const res = await sync({ syncMode: 'full', guests: [syncGuest({ roomNumber: '305' }), syncGuest({ roomNumber: ' 305  ' })] });
      expectOnly422(res, 'VALIDATION_ERROR', [['guests[1].roomNumber', 'DUPLICATE']]);
      expect(res.body.errors[0].message).toContain('305');
    });

    it('a listed guest breaking a field rule is 422 naming guests[i].field', async () => {
      const res = await sync({
        syncMode: 'full',
        guests: [syncGuest(), syncGuest({ phone: '12345' }), syncGuest({ adults: 100, roomNo: '1' }), syncGuest({ roomNumber: '   ' })],
      });
      expectOnly422(res, 'VALIDATION_ERROR', [
        ['guests[1].phone', 'INVALID_FORMAT'],
        ['guests[2].adults', 'OUT_OF_RANGE'],
        ['guests[2].roomNo', 'UNKNOWN_FIELD'],
        ['guests[3].roomNumber', 'TOO_SHORT'],
      ]);
    });

    it('sync guests obey the check-in rules (required fields, date order, date format wins)', async () => {
      const missing = syncGuest();
      delete missing.lastName;
      const res = await sync({ syncMode: 'full', guests: [missing, syncGuest({ checkInDate: '2026-11-23', checkOutDate: '2026-11-20' })] });
      expectOnly422(res, 'VALIDATION_ERROR', [
        ['guests[0].lastName', 'REQUIRED'],
        ['guests[1].checkOutDate', 'DATE_ORDER'],
      ]);
      const dated = await sync({ syncMode: 'full', guests: [syncGuest({ firstName: '' }), syncGuest({ checkInDate: '2026-02-30' })] });
      expectOnly422(dated, 'INVALID_DATE_FORMAT', [
        ['guests[0].firstName', 'TOO_SHORT'],
        ['guests[1].checkInDate', 'INVALID_DATE_FORMAT'],
      ]);
      const notObject = await sync({ syncMode: 'full', guests: [syncGuest(), 'guest', null] });
      expect422(notObject, 'VALIDATION_ERROR', [
        ['guests[1]', 'INVALID_TYPE'],
        ['guests[2]', 'INVALID_TYPE'],
      ]);
    });

    it('more than 20,000 guests in a sync is 422 VALIDATION_ERROR (20,001 refused)', async () => {
      const guests = Array.from({ length: 20_001 }, (_, i) => ({
        pmsGuestId: `G${i}`,
        roomNumber: `${i}`,
        lastName: 'L',
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-24',
      }));
      const res = await sync({ syncMode: 'full', guests });
      expectOnly422(res, 'VALIDATION_ERROR', [['guests', 'TOO_MANY']]);
    });

    it('exactly 20,000 guests is within the limit (only the one faulty guest is named, no TOO_MANY)', async () => {
      const guests = Array.from({ length: 20_000 }, (_, i) => ({
        pmsGuestId: `G${i}`,
        roomNumber: `${i}`,
        lastName: i === 19_999 ? '' : 'L',
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-24',
      }));
      expectOnly422(await sync({ syncMode: 'full', guests }), 'VALIDATION_ERROR', [['guests[19999].lastName', 'TOO_SHORT']]);
    });

    it('a sync refused with 422 leaves the Idempotency-Key unconsumed (a corrected body may reuse it)', async () => {
      const key = uniqueKey('sync');
      expect((await sync({ syncMode: 'partial', guests: [] }, { idempotencyKey: key })).status).toBe(422);
      expectPassedValidation(await sync({ syncMode: 'full', guests: [] }, { idempotencyKey: key }));
    });
  });
});
