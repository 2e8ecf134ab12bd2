import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyChanges, compareRoomNumbers, diffGuest, isCalendarDate, refineGuestFields, type GuestData } from '../../src/domain/guest.js';
import { COUNTRY_CODES, LANGUAGE_CODES } from '../../src/domain/iso-codes.js';
import { canonicalJson, parseIdempotencyKey, requestFingerprint, requestFingerprintInSlices } from '../../src/pms/idempotency.js';

const stored: GuestData = {
  firstName: 'Ada',
  lastName: 'Lovelace',
  phone: null,
  roomNumber: '305',
  checkInDate: '2026-11-23',
  checkOutDate: '2026-11-26',
  language: 'en',
  adults: 2,
  children: null,
  nationality: 'GB',
  email: null,
};

describe('dates are real calendar dates', () => {
  it('agrees with the calendar for every day of 1900-2100', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1900, max: 2100 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }), (y, m, d) => {
        const text = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
        const real = new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d;
        expect(isCalendarDate(text)).toBe(real);
      }),
    );
  });

  it('refuses other shapes', () => {
    for (const v of ['2026-1-05', '2026-01-5', '26-01-05', '2026/01/05', '2026-01-05T00:00:00Z', ' 2026-01-05', '2026-00-10', '2026-13-01']) {
      expect(isCalendarDate(v)).toBe(false);
    }
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2100-02-29')).toBe(false);
  });

  it('checkOutDate before checkInDate is DATE_ORDER, also against the stored date', () => {
    expect(refineGuestFields({ checkInDate: '2026-11-23', checkOutDate: '2026-11-22' })).toEqual([
      expect.objectContaining({ field: 'checkOutDate', code: 'DATE_ORDER' }),
    ]);
    expect(refineGuestFields({ checkOutDate: '2026-11-01' }, '', stored)).toEqual([expect.objectContaining({ code: 'DATE_ORDER' })]);
    expect(refineGuestFields({ checkInDate: '2026-11-23', checkOutDate: '2026-11-23' })).toEqual([]);
  });
});

describe('change sets', () => {
  const patchArb = fc.record(
    {
      firstName: fc.option(fc.constantFrom('Ada', 'Grace', 'Alan'), { nil: null }),
      roomNumber: fc.constantFrom('305', ' 305 ', '12', '1A'),
      adults: fc.option(fc.integer({ min: 0, max: 99 }), { nil: null }),
      email: fc.option(fc.constantFrom('a@example.com', 'b@example.com'), { nil: null }),
      language: fc.option(fc.constantFrom('en', 'de'), { nil: null }),
    },
    { requiredKeys: [] },
  );

  it('applying the changes of a patch gives the stored guest with the patch applied; absent fields keep their value', () => {
    fc.assert(
      fc.property(patchArb, (patch) => {
        const changes = diffGuest(stored, patch);
        const next = applyChanges(stored, changes);
        for (const [field, value] of Object.entries(patch)) {
          const expected = field === 'roomNumber' && typeof value === 'string' ? value.trim() : value;
          expect(next[field as keyof GuestData]).toBe(expected);
        }
        for (const field of Object.keys(stored) as Array<keyof GuestData>) {
          if (!(field in patch)) expect(next[field]).toBe(stored[field]);
        }
        // Every reported change is a real difference, with `from` the stored value.
        for (const [field, c] of Object.entries(changes)) {
          expect(c.from).toBe(stored[field as keyof GuestData] ?? null);
          expect(c.to).not.toBe(c.from);
        }
        // Applying the same patch again changes nothing.
        expect(diffGuest(next, patch)).toEqual({});
      }),
    );
  });
});

describe('natural room order', () => {
  it('sorts 2 before 10', () => {
    expect(['10', '2', '1A', '1', '100', 'B2'].sort(compareRoomNumbers)).toEqual(['1', '1A', '2', '10', '100', 'B2']);
  });
});

describe('ISO code lists', () => {
  it('holds the assigned codes', () => {
    expect(LANGUAGE_CODES.size).toBe(184);
    expect(COUNTRY_CODES.size).toBe(249);
    for (const c of ['en', 'de', 'zh', 'zu']) expect(LANGUAGE_CODES.has(c)).toBe(true);
    for (const c of ['zz', 'EN', 'xx']) expect(LANGUAGE_CODES.has(c)).toBe(false);
    for (const c of ['DE', 'US', 'GB', 'SS']) expect(COUNTRY_CODES.has(c)).toBe(true);
    for (const c of ['AB', 'de', 'UK', 'EU']) expect(COUNTRY_CODES.has(c)).toBe(false);
  });
});

describe('idempotency keys and fingerprints', () => {
  it('a bare key and its structured-field string name the same key', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 200 }).filter((s) => !s.startsWith('"')),
        (key) => {
          const quoted = `"${key.replace(/(["\\])/g, '\\$1')}"`;
          expect(parseIdempotencyKey(quoted)).toBe(parseIdempotencyKey(key));
        },
      ),
    );
  });

  it('member order and white space do not change the fingerprint; values do', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(JSON.parse(JSON.stringify(reversed, null, 2)))).toBe(canonicalJson(obj));
      }),
    );
    expect(requestFingerprint('POST', '/a', { x: 1 })).not.toBe(requestFingerprint('POST', '/a', { x: 2 }));
    expect(requestFingerprint('POST', '/a', { x: 1 })).not.toBe(requestFingerprint('POST', '/b', { x: 1 }));
  });
});

describe('the fingerprint hashed in slices (pms/idempotency.ts)', () => {
  it('is the fingerprint of the whole canonical body, for any body and for long lists', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), async (value) => {
        expect(await requestFingerprintInSlices('POST', '/a', value)).toBe(requestFingerprint('POST', '/a', value));
      }),
    );
    const long = JSON.parse(
      JSON.stringify({
        syncMode: 'full',
        guests: Array.from({ length: 1_234 }, (_, i) => ({ pmsGuestId: `G${i}`, b: [i, { z: 1, a: null }] })),
        __proto__x: 1,
      }),
    ) as unknown;
    const withProto = JSON.parse(`{"z":[${Array.from({ length: 600 }, (_, i) => i).join(',')}],"__proto__":{"x":1},"10":"a","2":[]}`) as unknown;
    for (const body of [long, withProto, {}, { list: [] }])
      expect(await requestFingerprintInSlices('POST', '/a', body)).toBe(requestFingerprint('POST', '/a', body));
  });
});

describe('the canonical body behind the fingerprint', () => {
  it('treats __proto__ and numeric member names as ordinary members', () => {
    const a = JSON.parse('{"__proto__":{"x":1},"10":"a","2":"b","b":1}') as unknown;
    const b = JSON.parse('{"b":1,"2":"b","10":"a","__proto__":{"x":1}}') as unknown;
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toContain('"__proto__":{"x":1}');
    expect(canonicalJson(a)).not.toBe(canonicalJson(JSON.parse('{"__proto__":{"x":2},"10":"a","2":"b","b":1}')));
  });
});
