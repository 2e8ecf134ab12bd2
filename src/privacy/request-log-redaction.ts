// A stored request-log body with one guest's personal values taken out and everything else
// as it was (README.md, Personal data): a full-roster sync shared by many rows keeps every
// other guest. Pure functions, no I/O.

import { PERSONAL_FIELDS, redactMentions, type GuestMatcher } from '../domain/personal-data.js';
import { splitCutMarker } from '../pms/request-log-body.js';

/** Who is erased: the matcher of its ids, and the texts that are its personal values (e-mail, phone). */
export interface ErasedGuest {
  matcher: GuestMatcher;
  /** Values found only in this guest's data (its e-mail addresses and phone numbers): removed wherever they stand. */
  ownValues: Set<string>;
}

/**
 * The body without the guest's personal values. A JSON body: every object about the guest
 * loses them (domain/personal-data.ts redactMentions), written back as JSON; the text stays
 * byte for byte when nothing was about it. A body that is not complete JSON (cut at
 * 64 KiB, or malformed as sent): each innermost object that names the guest loses the
 * values of its personal members, and the guest's e-mail and phone go wherever they are.
 */
export function redactStoredBody(text: string, guest: ErasedGuest): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return redactText(text, guest);
  }
  const redacted = redactMentions(parsed, guest.matcher);
  const out = JSON.stringify(redacted);
  return out === JSON.stringify(parsed) ? text : out;
}

const STRING = '"(?:[^"\\\\]|\\\\.)*"';
const MEMBER = new RegExp(`"([A-Za-z]+)"\\s*:\\s*(${STRING}|null)`, 'g');
/** A personal member's value, complete or cut off at the end of the text. */
const PERSONAL_MEMBER = new RegExp(`("(?:${PERSONAL_FIELDS.join('|')})"\\s*:\\s*)(${STRING}|"(?:[^"\\\\]|\\\\.)*\\\\?$)`, 'g');
const ANY_STRING = new RegExp(STRING, 'g');

function redactText(stored: string, guest: ErasedGuest): string {
  const { kept, marker } = splitCutMarker(stored);
  let text = kept;
  // Innermost objects, last first so earlier positions stay valid.
  for (const [start, end] of innermostObjects(text).reverse()) {
    const span = text.slice(start, end);
    if (!namesGuest(span, guest.matcher)) continue;
    text = text.slice(0, start) + span.replace(PERSONAL_MEMBER, '$1null') + text.slice(end);
  }
  if (guest.ownValues.size > 0) {
    text = text.replace(ANY_STRING, (literal) => {
      const v = decode(literal);
      return v !== null && guest.ownValues.has(v) ? 'null' : literal;
    });
  }
  return text + marker;
}

/** The members of an object's text read as the matcher reads an object (ids and last name, arrival date). */
function namesGuest(span: string, matcher: GuestMatcher): boolean {
  const o: Record<string, unknown> = {};
  for (const m of span.matchAll(MEMBER)) {
    const key = m[1] ?? '';
    if (key in o) continue;
    o[key] = m[2] === 'null' ? null : decode(m[2] ?? '');
  }
  return matcher(o) === true;
}

/** [start, end) of every object holding no other object; one cut off at the end runs to the end. */
function innermostObjects(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const stack: Array<{ start: number; parent: boolean }> = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      const top = stack[stack.length - 1];
      if (top) top.parent = true;
      stack.push({ start: i, parent: false });
    } else if (c === '}') {
      const o = stack.pop();
      if (o && !o.parent) spans.push([o.start, i + 1]);
    }
  }
  const open = stack[stack.length - 1];
  if (open && !open.parent) spans.push([open.start, text.length]);
  return spans.sort((a, b) => a[0] - b[0]);
}

function decode(literal: string): string | null {
  try {
    const v: unknown = JSON.parse(literal);
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}
