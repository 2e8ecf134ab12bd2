// Small DOM and formatting helpers. Everything the dashboard shows is built with
// createElement/textContent (never innerHTML), so guest data can never become markup.

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

/** "Smith, Ada" (or just "Smith"). */
export function guestName(g) {
  if (!g) return '';
  if (g.anonymisedAt) return 'Anonymised guest';
  return g.firstName ? `${g.lastName}, ${g.firstName}` : (g.lastName ?? '');
}

export const sourceLabel = (source) => (source === 'pms' ? 'PMS' : 'Walk-in');

export function sourceBadge(source) {
  return h('span', { class: ['badge', source === 'pms' ? 'badge-pms' : 'badge-walkin'] }, sourceLabel(source));
}

/** Placeholder for an absent value. */
export const EMPTY = '—';
export const orEmpty = (v) => (v === null || v === undefined || v === '' ? EMPTY : String(v));

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An ISO timestamp in the browser's local time, readable. */
export function formatDateTime(iso) {
  if (!iso) return EMPTY;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : dateTimeFormat.format(d);
}

/** <time datetime="…">local time</time> */
export function timeEl(iso) {
  return h('time', { datetime: iso ?? null }, formatDateTime(iso));
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
