// Which guests a stored request-log body names (README.md, Personal data): erasure and
// export find a guest's rows through the guest keys written with the body (each reference
// as a 64-bit key, `guestKey`: on PostgreSQL in the body's row, on SQLite in
// request_log_guest_keys), instead of searching every body. Pure functions, no I/O.
//
// A body names a guest by
// - `pmsGuestId` (kind `pms`): any object member of that name holding a string;
// - `guestId` (kind `guest`): any such member, and the `ids` of a stored GET /guests digest;
// - its last name and arrival date (kind `holder`): the `currentGuest` of a ROOM_OCCUPIED
//   answer about a guest staff checked in, which has no pmsGuestId. Kept as a SHA-256 of
//   the two, so the index itself holds no name.
// A body that is not complete JSON (cut at 64 KiB, or malformed as sent) is read for the
// same members as text, so a cut roster still names every guest it got to. A body cut at
// 64 KiB never ends inside an object that names no guest (pms/request-log-body.ts), so
// every personal value a cut body keeps stands in an object this index names.

import { createHash } from 'node:crypto';

export type GuestRefKind = 'pms' | 'guest' | 'holder';

export interface GuestRef {
  kind: GuestRefKind;
  ref: string;
}

/** Longer references (a client may send anything as a pmsGuestId) are indexed by their SHA-256. */
const MAX_REF_CHARS = 128;

/** The indexed form of an identifier: itself, or `sha256:<hex>` when long or holding a NUL. */
export function refKey(value: string): string {
  return value.length <= MAX_REF_CHARS && !value.includes('\u0000') ? value : `sha256:${createHash('sha256').update(value, 'utf8').digest('hex')}`;
}

/** The reference of a staff-checked-in guest named by its last name and arrival date. */
export function holderRef(lastName: string, checkInDate: string): string {
  return createHash('sha256').update(`${lastName}\n${checkInDate}`, 'utf8').digest('hex');
}

/**
 * The 64-bit key by which the guest index holds a reference of a hotel: the first 8 bytes
 * of SHA-256(hotel id, NUL, kind, NUL, reference) as a signed integer. The hotel is part of
 * it, so equal PMS ids of two hotels are two keys. Two references may share a key (about
 * 2^-64 for a pair): whoever reads a body found by a key confirms from its text that it
 * names the guest (`namesAnyOf`).
 */
export function guestKey(hotelId: string, ref: GuestRef): bigint {
  return createHash('sha256').update(`${hotelId}\u0000${ref.kind}\u0000${ref.ref}`, 'utf8').digest().readBigInt64BE(0);
}

/** The keys of these references of a hotel, each once. */
export function guestKeys(hotelId: string, refs: GuestRef[]): bigint[] {
  return [...new Set(refs.map((r) => guestKey(hotelId, r)))];
}

/** Says whether a stored text names any of these references (what a body found by its keys is confirmed by). */
export function namesAnyOf(text: string | null, refs: GuestRef[]): boolean {
  if (text === null || refs.length === 0) return false;
  const wanted = new Set(refs.map((r) => `${r.kind}\u0000${r.ref}`));
  return guestRefs([text]).some((r) => wanted.has(`${r.kind}\u0000${r.ref}`));
}

/** Every guest the stored texts name, each once. */
export function guestRefs(texts: Array<string | null>): GuestRef[] {
  const out = new Map<string, GuestRef>();
  const add = (kind: GuestRefKind, value: string) => {
    const ref = kind === 'holder' ? value : refKey(value);
    out.set(`${kind}\u0000${ref}`, { kind, ref });
  };
  for (const text of texts) {
    if (text === null || text === '') continue;
    let parsed: unknown;
    let complete = true;
    try {
      parsed = JSON.parse(text);
    } catch {
      complete = false;
    }
    if (complete) walk(parsed, add);
    else scan(text, add);
  }
  return [...out.values()];
}

function walk(value: unknown, add: (kind: GuestRefKind, value: string) => void): void {
  if (Array.isArray(value)) {
    for (const v of value) walk(v, add);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const o = value as Record<string, unknown>;
  if (typeof o.pmsGuestId === 'string') add('pms', o.pmsGuestId);
  if (typeof o.guestId === 'string') add('guest', o.guestId);
  if (o.pmsGuestId === null && typeof o.lastName === 'string' && typeof o.checkInDate === 'string') add('holder', holderRef(o.lastName, o.checkInDate));
  if (typeof o.count === 'number' && Array.isArray(o.ids)) for (const id of o.ids) if (typeof id === 'string') add('guest', id);
  for (const v of Object.values(o)) walk(v, add);
}

const STRING = '"(?:[^"\\\\]|\\\\.)*"';
const MEMBER = new RegExp(`"(pmsGuestId|guestId)"\\s*:\\s*(${STRING})`, 'g');
const HOLDER = new RegExp(`"pmsGuestId"\\s*:\\s*null\\s*,\\s*"lastName"\\s*:\\s*(${STRING})\\s*,\\s*"checkInDate"\\s*:\\s*(${STRING})`, 'g');
const ANY_STRING = new RegExp(STRING, 'g');

/** The same members read from text that does not parse (a cut body): every complete one. */
function scan(text: string, add: (kind: GuestRefKind, value: string) => void): void {
  for (const m of text.matchAll(MEMBER)) {
    const v = decode(m[2] ?? '');
    if (v !== null) add(m[1] === 'pmsGuestId' ? 'pms' : 'guest', v);
  }
  for (const m of text.matchAll(HOLDER)) {
    const lastName = decode(m[1] ?? '');
    const checkInDate = decode(m[2] ?? '');
    if (lastName !== null && checkInDate !== null) add('holder', holderRef(lastName, checkInDate));
  }
  // A cut GET /guests digest: every complete string after `"ids":[` is a guestId.
  const digest = /^\{"count":\d+,"ids":\[/.exec(text);
  if (digest) {
    for (const m of text.slice(digest[0].length).matchAll(ANY_STRING)) {
      const v = decode(m[0]);
      if (v !== null) add('guest', v);
    }
  }
}

function decode(literal: string): string | null {
  try {
    const v: unknown = JSON.parse(literal);
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

/** Says whether a text names a guest as the index reads it (a complete `pmsGuestId` or `guestId`, or a walk-in's last name and arrival date). */
export function namesAGuest(text: string): boolean {
  let found = false;
  scan(text, () => {
    found = true;
  });
  return found;
}

// ---------------------------------------------------------------- objects of a JSON text
//
// A cut body does not parse, so the cut (pms/request-log-body.ts) and erasure
// (privacy/request-log-redaction.ts) read its objects from the text: where each starts and
// ends, which object holds it under which member name, and the text of its own members.

/** An object of a JSON text, complete or cut off at the end of the text. */
export interface ObjectSpan {
  /** Index of its `{`. */
  start: number;
  /** Index after its `}`; the text's length when it is cut off. */
  end: number;
  /** The innermost object holding it (its index in the list), -1 for none. */
  parent: number;
  /** The member name it is the value of; null for an array item or the outermost value. */
  key: string | null;
  /** [start, end) of the text of its own members, nested objects and arrays left out. */
  own: Array<[number, number]>;
  /** The text ends among its own members: the cut fell directly inside it. */
  tail: boolean;
}

/** Every object of a JSON text (complete or cut off at the end), in the order they open. */
export function objectSpans(text: string): ObjectSpan[] {
  const spans: ObjectSpan[] = [];
  // `from`: where the open object's current run of own members began; `object`: the innermost object at or above.
  const stack: Array<{ kind: '{' | '['; span: number; from: number; object: number }> = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      const top = stack[stack.length - 1];
      let key: string | null = null;
      if (top?.kind === '{') {
        spans[top.span]?.own.push([top.from, i]);
        key = memberName(text.slice(top.from, i));
      }
      const object = top?.object ?? -1;
      if (c === '{') {
        spans.push({ start: i, end: text.length, parent: object, key, own: [], tail: false });
        stack.push({ kind: '{', span: spans.length - 1, from: i, object: spans.length - 1 });
      } else stack.push({ kind: '[', span: -1, from: i + 1, object });
    } else if (c === '}' || c === ']') {
      const closed = stack.pop();
      const span = closed?.kind === '{' ? spans[closed.span] : undefined;
      if (closed && span) {
        span.own.push([closed.from, i + 1]);
        span.end = i + 1;
      }
      const top = stack[stack.length - 1];
      if (top) top.from = i + 1;
    }
  }
  // Cut off: only the innermost open container runs on to the end of the text.
  const last = stack[stack.length - 1];
  const tail = last?.kind === '{' ? spans[last.span] : undefined;
  if (last && tail) {
    tail.own.push([last.from, text.length]);
    tail.tail = true;
  }
  return spans;
}

/** The text of an object's own members, each nested object or array written as `0`. */
export function ownText(text: string, span: ObjectSpan): string {
  return span.own.map(([a, b]) => text.slice(a, b)).join('0');
}

/** The member name a text of members ends with (`…,"name":`), if it does. */
function memberName(members: string): string | null {
  const m = /"((?:[^"\\]|\\.)*)"\s*:\s*$/.exec(members);
  return m ? decode(`"${m[1] ?? ''}"`) : null;
}
