// #/list: every active guest in a table, sortable by column, filtered as you type.
// Sort and search live in this view; only the table body is rebuilt on live changes,
// so the search box keeps its text and focus.

import { h, pageHeading, replaceChildren, sourceBadge, naturalCompare, dateEl } from '../dom.js';
import { field, showError } from '../ui.js';
import { t, tk } from '../i18n.js';
import { guestName, languageName, orEmpty } from '../format.js';

const COLUMNS = [
  { key: 'roomNumber', label: tk('Room'), value: (g) => g.roomNumber, compare: naturalCompare },
  { key: 'name', label: tk('Name'), value: (g) => guestName(g), compare: naturalCompare },
  { key: 'checkInDate', label: tk('Check-in'), value: (g) => g.checkInDate },
  { key: 'checkOutDate', label: tk('Check-out'), value: (g) => g.checkOutDate },
  { key: 'source', label: tk('Source'), value: (g) => g.source },
  { key: 'adults', label: tk('Adults'), value: (g) => g.adults, numeric: true },
  { key: 'language', label: tk('Language'), value: (g) => (g.language ? languageName(g.language) : null) },
];

/** A guest whose name, room, PMS guest id or email contains `q` (lower case). */
function matches(g, q) {
  if (!q) return true;
  const hay = [g.firstName, g.lastName, `${g.firstName ?? ''} ${g.lastName ?? ''}`, guestName(g), g.roomNumber, g.pmsGuestId, g.email];
  return hay.some((v) => v && String(v).toLowerCase().includes(q));
}

const isBlank = (v) => v === null || v === undefined || v === '';

/** `rows` in the order `sort` ({ key, dir }) asks for; ties by room. */
function sorted(rows, sort) {
  const col = COLUMNS.find((c) => c.key === sort.key);
  const sign = sort.dir === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const va = col.value(a);
    const vb = col.value(b);
    // Empty values last whichever the direction: they carry no information.
    if (isBlank(va)) return isBlank(vb) ? 0 : 1;
    if (isBlank(vb)) return -1;
    const c = col.numeric ? va - vb : (col.compare ?? naturalCompare)(va, vb);
    return c * sign || naturalCompare(a.roomNumber, b.roomNumber);
  });
}

/** The page's frame: search field, count, and the table whose head and body are filled in later. */
function listPage() {
  const searchField = field({
    name: 'search',
    label: t('Search'),
    type: 'search',
    hint: t('Name, room, PMS guest id or email'),
    attrs: { autocomplete: 'off' },
  });
  const search = searchField.querySelector('input');
  const count = h('p', { class: 'summary', 'aria-live': 'polite' });
  const headRow = h('tr');
  const tbody = h('tbody');
  const table = h(
    'table',
    { class: 'table table-guests' },
    h('caption', { class: 'visually-hidden' }, t('Guests in house; column headers sort')),
    h('thead', null, headRow),
    tbody,
  );
  const node = h(
    'section',
    { class: 'view view-list' },
    h('div', { class: 'view-head' }, pageHeading(t('Guests')), h('a', { href: '#/walk-in', class: 'btn btn-primary' }, t('Add walk-in'))),
    h('div', { class: 'toolbar' }, searchField),
    count,
    h('div', { class: 'table-wrap' }, table),
  );
  return { node, search, count, headRow, tbody };
}

/** The column headers, each a button sorting by it (`onSort(key)`); the sorted one marked. */
function renderHead(headRow, sort, onSort) {
  replaceChildren(
    headRow,
    COLUMNS.map((col) => {
      const active = sort.key === col.key;
      const button = h(
        'button',
        { type: 'button', class: 'sort-button', dataset: { sort: col.key } },
        t(col.label),
        h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, active ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''),
      );
      button.addEventListener('click', () => onSort(col.key));
      return h('th', { scope: 'col', 'aria-sort': active ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none' }, button);
    }),
  );
}

/** The count and the rows shown (`query` as typed), keeping focus on the same guest's row. */
function renderBody(page, { rows, total, query, loaded, changed, onOpen }) {
  const { count, tbody } = page;
  count.textContent = query ? t('{shown} of {n} guests match', { shown: rows.length, n: total }) : t('{n} guests in house', { n: total });
  if (!loaded) count.textContent = t('Loading…');
  if (rows.length === 0) {
    const text = query ? t('No guest matches “{query}”.', { query }) : t('No guests in house.');
    replaceChildren(tbody, h('tr', { class: 'empty' }, h('td', { colspan: String(COLUMNS.length) }, text)));
    return;
  }
  const focusedId = tbody.contains(document.activeElement) ? document.activeElement.closest('tr')?.dataset.guestId : null;
  replaceChildren(
    tbody,
    rows.map((g) => guestRow(g, changed.has(g.id), onOpen)),
  );
  if (focusedId) tbody.querySelector(`tr[data-guest-id="${CSS.escape(focusedId)}"] a`)?.focus();
}

function guestRow(g, isChanged, onOpen) {
  const href = `#/guest/${encodeURIComponent(g.id)}`;
  const tr = h(
    'tr',
    { class: ['row-link', isChanged && 'row-changed'], dataset: { guestId: g.id, room: g.roomNumber } },
    h('td', { class: 'cell-room' }, g.roomNumber),
    h('td', null, h('a', { href }, guestName(g))),
    h('td', null, dateEl(g.checkInDate)),
    h('td', null, dateEl(g.checkOutDate)),
    h('td', null, sourceBadge(g.source)),
    h('td', { class: 'num' }, orEmpty(g.adults)),
    h('td', null, orEmpty(g.language && languageName(g.language))),
  );
  // The name link is the keyboard path; a click anywhere on the row is a mouse shortcut.
  tr.addEventListener('click', (e) => {
    if (e.target.closest('a, button')) return;
    onOpen(href);
  });
  return tr;
}

export function listView(ctx) {
  ctx.setTitle(t('Guest list'));
  const sort = { key: 'roomNumber', dir: 'asc' };
  // The latest roster answer, and the guests its last change concerned (highlighted once).
  let guests = ctx.roster.guests;
  let changed = new Set();
  const page = listPage();

  function showBody() {
    const query = page.search.value.trim();
    const rows = sorted(
      guests.filter((g) => matches(g, query.toLowerCase())),
      sort,
    );
    renderBody(page, { rows, total: guests.length, query, loaded: ctx.roster.loaded, changed, onOpen: ctx.navigate });
  }

  function sortBy(key) {
    if (sort.key === key) sort.dir = sort.dir === 'asc' ? 'desc' : 'asc';
    else Object.assign(sort, { key, dir: 'asc' });
    renderHead(page.headRow, sort, sortBy);
    showBody();
    page.headRow.querySelector(`[data-sort="${key}"]`)?.focus();
  }

  page.search.addEventListener('input', showBody);
  renderHead(page.headRow, sort, sortBy);
  showBody();
  const unsubscribe = ctx.roster.subscribe((next, changedIds) => {
    guests = next;
    changed = changedIds;
    showBody();
    changed = new Set();
  });
  ctx.roster.refresh().catch((err) => showError(err, t('Could not load the guests')));
  return { node: page.node, destroy: unsubscribe };
}
