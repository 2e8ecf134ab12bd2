import { describe, expect, it } from 'vitest';
import { guestMatcher, redactMentions, redactMentionsSteps, stringifySteps } from '../../src/domain/personal-data.js';

/** Runs a generator of steps to its end; its result and how many steps it yielded. */
function drain<R>(steps: Generator<void, R, void>): { value: R; steps: number } {
  let n = 0;
  for (;;) {
    const next = steps.next();
    if (next.done) return { value: next.value, steps: n };
    n++;
  }
}

/** A stored sync answer's shape: lists of guests, one of them the erased guest, and its changes. */
function syncAnswer(n: number): unknown {
  const guest = (i: number) => ({ pmsGuestId: `G${i}`, roomNumber: `${100 + i}`, lastName: `Łast "${i}"\n` });
  return {
    status: 'synced',
    summary: { received: n, checkedIn: n, updated: n, checkedOut: 0, unchanged: 0, manualSkipped: 0, ratio: -0, big: 1e21 },
    details: {
      checkedIn: Array.from({ length: n }, (_, i) => guest(i)),
      checkedOut: [],
      updated: Array.from({ length: n }, (_, i) => ({ ...guest(i), changes: { phone: { from: `+49 ${i}`, to: null }, roomNumber: { from: '1', to: '2' } } })),
      nested: [[1, 'two', null, true], [], [{ guestId: 'gst_erased', email: 'x@example.com' }]],
    },
    requestId: 'req_1',
    _idempotent: true,
  };
}

describe('personal data in steps', () => {
  const matcher = guestMatcher('G7', ['gst_erased']);

  it('redactMentionsSteps and stringifySteps give the text of JSON.stringify(redactMentions(…)), character for character', () => {
    // As a stored answer is read: parsed from its text.
    const parsed: unknown = JSON.parse(JSON.stringify(syncAnswer(300)));
    const expected = JSON.stringify(redactMentions(parsed, matcher));
    const redacted = drain(redactMentionsSteps(parsed, matcher));
    const text = drain(stringifySteps(redacted.value));
    expect(text.value).toBe(expected);
    // The erased guest lost its personal values; the others kept theirs.
    const out = JSON.parse(text.value) as { details: { updated: Array<Record<string, unknown>>; nested: unknown[][] } };
    expect(out.details.updated[7]).toMatchObject({ pmsGuestId: 'G7', lastName: null, changes: { phone: { from: null, to: null, anonymised: true } } });
    expect(out.details.updated[8]).toMatchObject({ pmsGuestId: 'G8', lastName: 'Łast "8"\n' });
    expect(out.details.nested[2]).toEqual([{ guestId: 'gst_erased', email: null }]);
    // And a document with nothing about the guest comes back as the text it was.
    const other = JSON.stringify({ a: [1, { pmsGuestId: 'G1', lastName: 'x' }], b: 'é\u2028' });
    expect(drain(stringifySteps(drain(redactMentionsSteps(JSON.parse(other), matcher)).value)).value).toBe(other);
  });

  it('yields after each item of a list, so a 20,000-guest answer is many short steps', () => {
    const parsed: unknown = JSON.parse(JSON.stringify(syncAnswer(20_000)));
    const redacted = drain(redactMentionsSteps(parsed, matcher));
    const text = drain(stringifySteps(redacted.value));
    // 20,000 checked in + 20,000 updated, and the nested lists' items.
    expect(redacted.steps).toBeGreaterThanOrEqual(40_000);
    expect(text.steps).toBeGreaterThanOrEqual(40_000);
    expect(text.value).toBe(JSON.stringify(redactMentions(parsed, matcher)));
  });
});
