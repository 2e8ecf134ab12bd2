// Which guest values are personal data, and how a stored record loses them (README.md, Personal data:
// retention and erasure). Room, dates, counts and the fact of each change stay, so
// occupancy history and the activity timeline keep reading.

import type { GuestDataField } from './guest.js';

/** The guest fields removed by anonymisation and erasure. */
export const PERSONAL_FIELDS = ['firstName', 'lastName', 'phone', 'email', 'language', 'nationality'] as const satisfies readonly GuestDataField[];

const PERSONAL = new Set<string>(PERSONAL_FIELDS);

/** A change of a personal field whose values were removed: the field did change. */
const ANONYMISED_CHANGE = Object.freeze({ from: null, to: null, anonymised: true });

/** A change set `{ field: { from, to } }` without personal values (other values kept). */
export function redactChanges(changes: unknown): unknown {
  if (!isRecord(changes)) return changes;
  const out: Record<string, unknown> = {};
  for (const [field, change] of Object.entries(changes)) out[field] = PERSONAL.has(field) ? ANONYMISED_CHANGE : change;
  return out;
}

/** Says whether a JSON object is about the guest in question (its `pmsGuestId` or `guestId`). */
export type GuestMatcher = (o: Record<string, unknown>) => boolean | null;

/**
 * A matcher for one guest: true for an object naming one of its stays, false for an
 * object naming another guest, null for an object that names no guest.
 */
export function guestMatcher(pmsGuestId: string | null, guestIds: Iterable<string>): GuestMatcher {
  const ids = new Set(guestIds);
  return (o) => {
    const pms = typeof o.pmsGuestId === 'string' ? o.pmsGuestId : null;
    const id = typeof o.guestId === 'string' ? o.guestId : null;
    if (pms === null && id === null) return null;
    return (pms !== null && pms === pmsGuestId) || (id !== null && ids.has(id));
  };
}

/**
 * A stored JSON document (an idempotent response) with every object about the guest
 * stripped of its personal values; everything else as it was.
 */
export function redactMentions(value: unknown, isGuest: GuestMatcher): unknown {
  const steps = redactMentionsSteps(value, isGuest);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/**
 * redactMentions in steps: the generator yields after each item of a list, so its caller
 * can let other work run between two (roster/turns.ts); a stored 20,000-guest answer is
 * not one block of work. A list's items that are objects are redacted whole (they are
 * small: one guest each).
 */
export function* redactMentionsSteps(value: unknown, isGuest: GuestMatcher): Generator<void, unknown, void> {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const v of value) {
      out.push(Array.isArray(v) ? yield* redactMentionsSteps(v, isGuest) : redactMentions(v, isGuest));
      yield;
    }
    return out;
  }
  if (!isRecord(value)) return value;
  const about = isGuest(value) === true;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (about && PERSONAL.has(key)) out[key] = null;
    else if (about && key === 'changes') out[key] = redactChanges(v);
    else out[key] = isRecord(v) || Array.isArray(v) ? yield* redactMentionsSteps(v, isGuest) : v;
  }
  return out;
}

/**
 * JSON.stringify of a parsed JSON document in steps: it yields after each item of a list.
 * Its result is JSON.stringify's text, character for character (the document holds only
 * what JSON.parse makes: no undefined, no functions, no toJSON).
 */
export function* stringifySteps(value: unknown): Generator<void, string, void> {
  // The pieces of the whole text, joined once at the end: joined level by level, a
  // megabytes-long answer was copied once per level, in one step each.
  const out: string[] = [];
  yield* writeSteps(value, out);
  return out.join('');
}

function* writeSteps(value: unknown, out: string[]): Generator<void, void, void> {
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      const v: unknown = value[i];
      if (Array.isArray(v)) yield* writeSteps(v, out);
      else out.push(JSON.stringify(v));
      yield;
    }
    out.push(']');
    return;
  }
  if (!isRecord(value)) {
    out.push(JSON.stringify(value));
    return;
  }
  out.push('{');
  let first = true;
  for (const [key, v] of Object.entries(value)) {
    out.push(`${first ? '' : ','}${JSON.stringify(key)}:`);
    first = false;
    yield* writeSteps(v, out);
  }
  out.push('}');
}

/**
 * A JSON document with everything about other guests taken out (an export holds only
 * its subject): list items and members that name another guest are dropped. Undefined
 * when the document as a whole is about another guest.
 */
export function onlyAbout(value: unknown, isGuest: GuestMatcher): unknown {
  if (Array.isArray(value)) return value.filter((v) => !(isRecord(v) && isGuest(v) === false)).map((v) => onlyAbout(v, isGuest));
  if (!isRecord(value)) return value;
  if (isGuest(value) === false) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (isRecord(v) && isGuest(v) === false) continue;
    out[key] = onlyAbout(v, isGuest);
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
