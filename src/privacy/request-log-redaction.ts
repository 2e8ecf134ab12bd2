// A stored request-log body with one guest's personal values taken out and everything else
// as it was (README.md, Personal data): a full-roster sync shared by many rows keeps every
// other guest. Pure functions, no I/O.

import { PERSONAL_FIELDS, redactMentions, type GuestMatcher } from '../domain/personal-data.js';
import { splitCutMarker } from '../pms/request-log-body.js';
import { objectSpans, ownText } from '../pms/request-log-guests.js';

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
 * 64 KiB, or malformed as sent) is read as text (redactText below).
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
/** A string cut off at the end of the text (only the last run of a cut body can hold one). */
const CUT_STRING = '"(?:[^"\\\\]|\\\\.)*\\\\?$';
const MEMBER = new RegExp(`"([A-Za-z]+)"\\s*:\\s*(${STRING}|null)`, 'g');
/** A personal member's value, complete (or, in the text's last run, cut off at its end). */
const PERSONAL_MEMBER = new RegExp(`("(?:${PERSONAL_FIELDS.join('|')})"\\s*:\\s*)(${STRING})`, 'g');
const PERSONAL_MEMBER_AT_END = new RegExp(`("(?:${PERSONAL_FIELDS.join('|')})"\\s*:\\s*)(${STRING}|${CUT_STRING})`, 'g');
/** The values of a change `{from, to}` of a personal field. */
const CHANGE_VALUE = new RegExp(`("(?:from|to)"\\s*:\\s*)(${STRING})`, 'g');
const CHANGE_VALUE_AT_END = new RegExp(`("(?:from|to)"\\s*:\\s*)(${STRING}|${CUT_STRING})`, 'g');
const PERSONAL = new Set<string>(PERSONAL_FIELDS);
const ANY_STRING = new RegExp(STRING, 'g');

/**
 * A cut (or malformed) body without the guest's personal values. An object is about the
 * guest when its own members name it (ids, or a walk-in's last name and arrival date), or
 * when it names no one and stands in an object about the guest (the `changes` of a sync's
 * updated guest). Each such object loses the values of its own personal members, and a
 * change of a personal field its `from` and `to`; then the guest's e-mail and phone go
 * wherever they stand.
 */
function redactText(stored: string, guest: ErasedGuest): string {
  const { kept, marker } = splitCutMarker(stored);
  const spans = objectSpans(kept);
  const about: boolean[] = [];
  const edits: Array<[number, number, string]> = [];
  spans.forEach((span, i) => {
    const named = namesGuest(ownText(kept, span), guest.matcher);
    const parent = spans[span.parent];
    about[i] = named === true || (named === null && about[span.parent] === true);
    if (!about[i]) return;
    const isChange = span.key !== null && PERSONAL.has(span.key) && parent?.key === 'changes';
    for (const [a, b] of span.own) {
      const atEnd = b === kept.length;
      let run = kept.slice(a, b).replace(atEnd ? PERSONAL_MEMBER_AT_END : PERSONAL_MEMBER, '$1null');
      if (isChange) run = run.replace(atEnd ? CHANGE_VALUE_AT_END : CHANGE_VALUE, '$1null');
      if (run !== kept.slice(a, b)) edits.push([a, b, run]);
    }
  });
  let text = '';
  let at = 0;
  for (const [a, b, run] of edits.sort((x, y) => x[0] - y[0])) {
    text += kept.slice(at, a) + run;
    at = b;
  }
  text += kept.slice(at);
  if (guest.ownValues.size > 0) {
    text = text.replace(ANY_STRING, (literal) => {
      const v = decode(literal);
      return v !== null && guest.ownValues.has(v) ? 'null' : literal;
    });
  }
  return text + marker;
}

/** The members of an object's own text read as the matcher reads an object (ids and last name, arrival date). */
function namesGuest(own: string, matcher: GuestMatcher): boolean | null {
  const o: Record<string, unknown> = {};
  for (const m of own.matchAll(MEMBER)) {
    const key = m[1] ?? '';
    if (key in o) continue;
    o[key] = m[2] === 'null' ? null : decode(m[2] ?? '');
  }
  return matcher(o);
}

function decode(literal: string): string | null {
  try {
    const v: unknown = JSON.parse(literal);
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}
