// How each kind of value reads on the dashboard, one formatter per kind: calendar dates,
// moments, times, languages, countries, lists, guests' names, staff roles, JSON, an absent value. Dates,
// languages and countries are named by the browser's Intl in the chosen language.

import { intl, t, tk } from './i18n.js';

/** Placeholder for an absent value. */
export const EMPTY = '—';
export const orEmpty = (v) => (v === null || v === undefined || v === '' ? EMPTY : String(v));

/** "Smith, Ada" (or just "Smith"). */
export function guestName(g) {
  if (!g) return '';
  if (g.anonymisedAt) return t('Anonymised guest');
  return g.firstName ? `${g.lastName}, ${g.firstName}` : (g.lastName ?? '');
}

const ROLE_LABELS = { receptionist: tk('Receptionist'), admin: tk('Admin') };

/** A staff member's role in words ("Admin", "Receptionist"). */
export const roleLabel = (role) => (ROLE_LABELS[role] ? t(ROLE_LABELS[role]) : role);

const dateOptions = { weekday: 'short', day: 'numeric', month: 'short' };

/** A calendar date (YYYY-MM-DD) as "Mon 23 Nov" (with the year when it is not this year). */
export function formatDate(isoDate) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate ?? '');
  if (!m) return isoDate ?? '';
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  const sameYear = Number(m[1]) === new Date().getFullYear();
  const f = intl(
    sameYear ? 'date' : 'date-year',
    (loc) => new Intl.DateTimeFormat(loc, { ...dateOptions, ...(sameYear ? {} : { year: 'numeric' }), timeZone: 'UTC' }),
  );
  return f.format(d);
}

/** A moment (ISO timestamp) in the browser's time: "Mon 23 Nov, 14:02" (with seconds when asked); EMPTY when absent. */
export function formatDateTime(iso, { seconds = false } = {}) {
  if (!iso) return EMPTY;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const sameYear = d.getFullYear() === new Date().getFullYear();
  const kind = `datetime-${sameYear}-${seconds}`;
  const f = intl(
    kind,
    (loc) =>
      new Intl.DateTimeFormat(loc, {
        ...dateOptions,
        ...(sameYear ? {} : { year: 'numeric' }),
        hour: '2-digit',
        minute: '2-digit',
        ...(seconds ? { second: '2-digit' } : {}),
        hourCycle: 'h23',
      }),
  );
  return f.format(d);
}

/** "14:02" in the browser's time. */
export function formatTime(iso) {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return iso ?? '';
  return intl('time', (loc) => new Intl.DateTimeFormat(loc, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' })).format(d);
}

function displayName(type, code) {
  if (!code) return '';
  try {
    return intl(`names-${type}`, (loc) => new Intl.DisplayNames([loc], { type, fallback: 'code' })).of(code) ?? code;
  } catch {
    return code; // not a well-formed code: show it as stored
  }
}

const englishNames = new Map();
/** A language's or country's name in English ("region", "DE" → "Germany"), whatever the current language. */
export function englishName(type, code) {
  if (!englishNames.has(type)) englishNames.set(type, new Intl.DisplayNames(['en'], { type, fallback: 'code' }));
  return englishNames.get(type).of(code) ?? code;
}

/** "de" → "German" (in the current language). */
export const languageName = (code) => displayName('language', code);
/** "DE" → "Germany" (in the current language). */
export const countryName = (code) => displayName('region', code);

/** Joins a list the way the language does: "a, b and c". */
export function formatList(items) {
  return intl('list', (loc) => new Intl.ListFormat(loc, { style: 'long', type: 'conjunction' })).format(items);
}

/** Pretty-prints JSON text when it parses; otherwise returns it unchanged. */
export function prettyJson(text) {
  if (text === null || text === undefined) return EMPTY;
  if (typeof text !== 'string') return JSON.stringify(text, null, 2);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
