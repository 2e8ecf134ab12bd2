import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
