// Small DOM helpers and calendar arithmetic (values are formatted by format.js). Everything the dashboard shows is built with
// createElement/textContent (never innerHTML), so guest data can never become markup.

import { EMPTY, formatDate, formatDateTime } from './format.js';
import { t } from './i18n.js';

/**
 * h('a', { href: '#/board', class: 'tile', dataset: { room: '101' }, onclick: fn }, 'text', child)
 * Attributes are set with setAttribute; `class`, `dataset`, `on<event>` and `value` are special.
 * null, undefined and false attribute values and children are skipped.
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  let value;
  for (const [key, v] of Object.entries(props ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (key === 'class') el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : v;
    else if (key === 'dataset') {
      for (const [dk, dv] of Object.entries(v)) if (dv !== null && dv !== undefined) el.dataset[dk] = String(dv);
    } else if (key === 'value') value = v;
    else if (key.startsWith('on') && typeof v === 'function') el.addEventListener(key.slice(2), v);
    else el.setAttribute(key, v === true ? '' : String(v));
  }
  append(el, children);
  // After the children, so a <select> already has the option to select.
  if (value !== undefined) el.value = String(value);
  return el;
}

/** Appends strings (as text), nodes and nested arrays; skips null/undefined/false. */
export function append(parent, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else parent.append(c instanceof Node ? c : String(c));
  }
  return parent;
}

/**
 * Makes `nodes` the children of `parent`, in order, moving only what is out of place:
 * nodes already there in the right order are left alone (no re-layout of a whole board
 * for one changed tile).
 */
export function syncChildren(parent, nodes) {
  // Those that go first: a node left in place would make every later one look misplaced.
  const wanted = new Set(nodes);
  for (const child of [...parent.childNodes]) if (!wanted.has(child)) child.remove();
  let cursor = parent.firstChild;
  for (const node of nodes) {
    if (cursor === node) cursor = cursor.nextSibling;
    else parent.insertBefore(node, cursor);
  }
  return parent;
}

/** Replaces every child of `el`. */
export function replaceChildren(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

let idCounter = 0;
/** A document-unique id for label/aria wiring. */
export function uid(prefix = 'id') {
  idCounter += 1;
  return `${prefix}-${idCounter}`;
}

// Natural order for room numbers: "2" < "10", "101" < "102" < "1001", "12A" after "12".
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
export const naturalCompare = (a, b) => collator.compare(String(a ?? ''), String(b ?? ''));

/** Sorts by room number in natural order; plain numbers (most rooms) compare as numbers, without the collator. */
export function byRoom(guests) {
  const keyed = guests.map((g) => ({ g, n: /^\d{1,9}$/.test(g.roomNumber) ? Number(g.roomNumber) : NaN }));
  keyed.sort((a, b) => (Number.isNaN(a.n) || Number.isNaN(b.n) ? naturalCompare(a.g.roomNumber, b.g.roomNumber) : a.n - b.n));
  return keyed.map((k) => k.g);
}

const sourceLabel = (source) => (source === 'pms' ? t('PMS') : t('Walk-in'));

export function sourceBadge(source) {
  return h('span', { class: ['badge', source === 'pms' ? 'badge-pms' : 'badge-walkin'] }, sourceLabel(source));
}

/** <time datetime="…">local time</time> */
export function timeEl(iso, options) {
  return h('time', { datetime: iso ?? null }, formatDateTime(iso, options));
}

/** <time datetime="2026-11-23">Mon 23 Nov</time> for a calendar date. */
export function dateEl(isoDate) {
  return isoDate ? h('time', { datetime: isoDate, class: 'nowrap' }, formatDate(isoDate)) : EMPTY;
}

/** "Mon 23 Nov → Thu 26 Nov" */
export function stayDates(g) {
  return h('span', { class: 'stay-dates' }, dateEl(g.checkInDate), ' → ', dateEl(g.checkOutDate));
}

/** A "YYYY-MM-DDTHH:mm" datetime-local value (local time) as ISO 8601 UTC, or null. */
export function localInputToIso(value) {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

/** Heading that receives focus after navigation (tabindex -1: focusable, not in tab order). */
export function pageHeading(text) {
  return h('h1', { tabindex: '-1', class: 'page-title' }, text);
}

const dayFormats = new Map();
/** YYYY-MM-DD in the hotel's time zone. */
export function hotelToday(timeZone, now = new Date()) {
  const zone = timeZone || 'UTC';
  if (!dayFormats.has(zone)) dayFormats.set(zone, new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }));
  return dayFormats.get(zone).format(now);
}

/** Whole days from one calendar date to another. */
export const daysBetween = (from, to) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);

/** The calendar date `n` days after a YYYY-MM-DD date. */
export function addDays(isoDate, n) {
  const d = new Date(`${isoDate}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}
