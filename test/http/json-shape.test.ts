import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseListInParts, SLICED_LIST_ITEMS } from '../../src/http/json-body.js';
import { JsonShapeScanner, MAX_JSON_DEPTH, MAX_OBJECT_MEMBERS } from '../../src/http/json-shape.js';

/** The verdict the scanner must reach, computed from the parsed value. */
function expected(value: unknown, depth = 1): 'deep' | 'wide' | null {
  if (value === null || typeof value !== 'object') return null;
  if (depth > MAX_JSON_DEPTH) return 'deep';
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  if (!Array.isArray(value) && children.length > MAX_OBJECT_MEMBERS) return 'wide';
  for (const child of children) {
    const v = expected(child, depth + 1);
    if (v) return v;
  }
  return null;
}

function verdict(chunks: Uint8Array[]): 'deep' | 'wide' | null {
  const scanner = new JsonShapeScanner();
  for (const chunk of chunks) {
    const err = scanner.push(chunk);
    if (err) return err.code === 'INVALID_JSON' ? 'deep' : 'wide';
  }
  return null;
}

/** A JSON value that is sometimes deep or wide, with strings full of brackets, quotes and backslashes. */
const tricky = fc.string({ unit: fc.constantFrom('{', '}', '[', ']', ',', '"', '\\', 'a', 'é', '😀') });
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small' }, tricky, fc.integer(), fc.constant(null), tie('array'), tie('object'), tie('chain')),
  array: fc.array(tie('node'), { maxLength: 4 }),
  object: fc.dictionary(tricky, tie('node'), { maxKeys: 4 }),
  // Wide objects and deep chains near the limits.
  chain: fc.integer({ min: MAX_JSON_DEPTH - 3, max: MAX_JSON_DEPTH + 3 }).map((n) => JSON.parse('['.repeat(n) + ']'.repeat(n)) as unknown),
})).node;
const wide = fc
  .integer({ min: MAX_OBJECT_MEMBERS - 2, max: MAX_OBJECT_MEMBERS + 2 })
  .map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`"k\\\\${i}`, `v,${i}}`])));

describe('JSON shape limits, read as the bytes arrive', () => {
  it('the verdict on a body split anywhere (inside strings, escapes, multi-byte characters) equals the verdict on its parsed value', () => {
    fc.assert(
      fc.property(fc.oneof(value, wide, fc.array(wide, { maxLength: 2 })), fc.array(fc.nat(), { maxLength: 6 }), (v, cuts) => {
        const bytes = Buffer.from(JSON.stringify(v), 'utf8');
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        const chunks: Uint8Array[] = [];
        let from = 0;
        for (const p of [...points, bytes.length]) {
          chunks.push(bytes.subarray(from, p));
          from = p;
        }
        expect(verdict(chunks)).toBe(expected(v));
        expect(verdict([bytes])).toBe(expected(v));
      }),
      { numRuns: 500 },
    );
  });
});

describe('a long top-level list parsed a part at a time (http/json-body.ts)', () => {
  /** JSON.parse of the whole, or 'invalid'. */
  const whole = (text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch {
      return 'invalid';
    }
  };
  /** What the body parser makes of `bytes` pushed in `cuts` chunks: in parts when the scanner finds a long list. */
  const inParts = async (bytes: Buffer, cuts: number[]): Promise<{ sliced: boolean; value: unknown }> => {
    const scanner = new JsonShapeScanner();
    let from = 0;
    for (const to of [...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length]) {
      if (scanner.push(bytes.subarray(from, to))) return { sliced: false, value: 'refused' };
      from = to;
    }
    const list = scanner.listBounds(SLICED_LIST_ITEMS);
    if (!list) return { sliced: false, value: whole(bytes.toString('utf8')) };
    try {
      return { sliced: true, value: await parseListInParts(bytes, list) };
    } catch {
      return { sliced: true, value: 'invalid' };
    }
  };
  const item = fc.oneof(tricky, fc.integer(), fc.constant(null), fc.dictionary(fc.constantFrom('a', 'b', 'é'), tricky, { maxKeys: 3 }));

  it('gives what JSON.parse of the whole gives, member order included, valid or not', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(item, { minLength: SLICED_LIST_ITEMS, maxLength: SLICED_LIST_ITEMS * 2 + 3 }),
        fc.constantFrom('guests', 'list', '__proto__', 'g\\u0075ests'),
        fc.constantFrom('', '"before":1,', '"guests":[],'),
        fc.constantFrom('', ',"after":{"x":[1,2]}', ',"guests":{}'),
        fc.option(fc.tuple(fc.nat(), fc.constantFrom(',', ']', '[', '"', '}', ' ', 'x')), { nil: null }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async (items, name, before, after, damage, cuts) => {
          const list = JSON.stringify(items).replace(/,/g, (c, i: number) => (i % 7 === 0 ? ', ' : c));
          let text = `{${before}"${name}" : ${list}${after}}`;
          if (damage) {
            const at = damage[0] % text.length;
            text = text.slice(0, at) + damage[1] + text.slice(at);
          }
          const bytes = Buffer.from(text, 'utf8');
          const got = await inParts(
            bytes,
            cuts.map((c) => c % bytes.length),
          );
          // What the body parser reads is bytes: the whole decoded (a cut surrogate pair is U+FFFD there).
          const expectedValue = whole(bytes.toString('utf8'));
          if (got.value === 'refused') return;
          expect(JSON.stringify(got.value)).toBe(JSON.stringify(expectedValue));
          expect(got.value).toEqual(expectedValue);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('parses a sync body of 2,500 guests in parts, as JSON.parse would', async () => {
    const guests = Array.from({ length: 2500 }, (_, i) => ({ pmsGuestId: `G${i}`, lastName: 'Müller', roomNumber: `${i}`, adults: 2 }));
    const text = JSON.stringify({ syncMode: 'full', guests });
    const got = await inParts(Buffer.from(text, 'utf8'), [100, 70_000, 70_001]);
    expect(got.sliced).toBe(true);
    expect(got.value).toEqual(JSON.parse(text));
  });
});
