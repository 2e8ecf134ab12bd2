// #/board: one tile per active guest, in natural room order. Re-rendered from the
// roster on every live change; tiles that just changed get a brief highlight.

import { h, pageHeading, replaceChildren, guestName, sourceBadge, naturalCompare, hotelToday, daysBetween as days } from '../dom.js';
import { showError } from '../ui.js';

// The day's views of the roster, each a filter of the board; "today" is the hotel's own day.
const FILTERS = [
  ['arriving', 'Arrivals today'],
  ['departing', 'Departures today'],
  ['all', 'In house'],
  ['overdue', 'Overdue'],
];

/** Where a guest's stay stands today: arriving, departing, overdue, or simply staying. */
function stayState(g, today) {
  if (g.checkOutDate < today) return 'overdue';
  if (g.checkOutDate === today) return 'departing';
  if (g.checkInDate === today) return 'arriving';
  return 'staying';
}

/** A room number, a name or a PMS id that contains the query (any case). */
function matches(g, query) {
  if (!query) return true;
  return [g.roomNumber, g.firstName, g.lastName, g.pmsGuestId].some((v) => typeof v === 'string' && v.toLowerCase().includes(query));
}

export function boardView(ctx) {
  ctx.setTitle('Board');
  const timeZone = ctx.session?.hotel?.timeZone ?? 'UTC';
  let filter = 'all';
  let last = { guests: [], changed: new Set() };
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  const search = h('input', {
    type: 'search',
    class: 'board-search',
    'aria-label': 'Find a room or a guest',
    placeholder: 'Find a room, name or PMS id (press /)',
    autocomplete: 'off',
  });
  search.addEventListener('input', () => render(last.guests, last.changed));
  const counts = h('div', { class: 'day-filters', role: 'group', 'aria-label': 'Today at a glance' });
  const grid = h('ul', { class: 'board', 'aria-label': 'Rooms' });
  const node = h(
    'section',
    { class: 'view view-board' },
    h('div', { class: 'view-head' }, pageHeading('Room board'), h('a', { href: '#/walk-in', class: 'btn btn-primary' }, 'Add walk-in')),
    h('div', { class: 'board-tools' }, counts, search),
    summary,
    grid,
  );
  // "/" anywhere but in a text field jumps to the search box, as in most web apps.
  const onKey = (e) => {
    if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t instanceof HTMLElement && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
    e.preventDefault();
    search.focus();
  };
  document.addEventListener('keydown', onKey);

  function renderCounts(guests, today) {
    const n = { all: guests.length, arriving: 0, departing: 0, overdue: 0 };
    for (const g of guests) {
      const state = stayState(g, today);
      if (state in n) n[state]++;
    }
    replaceChildren(
      counts,
      FILTERS.map(([key, label]) => {
        const b = h(
          'button',
          { type: 'button', class: ['day-filter', `day-filter-${key}`], 'aria-pressed': String(filter === key), dataset: { filter: key } },
          h('span', { class: 'day-count' }, String(n[key])),
          ' ',
          label,
        );
        b.addEventListener('click', () => {
          filter = filter === key ? 'all' : key;
          render(last.guests, last.changed);
        });
        return b;
      }),
    );
  }

  function render(guests, changed = new Set()) {
    last = { guests, changed };
    const today = hotelToday(timeZone);
    renderCounts(guests, today);
    // Re-rendering replaces the tiles; keep keyboard focus on the same guest's tile.
    const focusedId = grid.contains(document.activeElement) ? document.activeElement.dataset.guestId : null;
    const query = search.value.trim().toLowerCase();
    const shown = guests.filter((g) => (filter === 'all' || stayState(g, today) === filter) && matches(g, query));
    const sorted = [...shown].sort((a, b) => naturalCompare(a.roomNumber, b.roomNumber));
    const label = FILTERS.find(([key]) => key === filter)?.[1] ?? 'In house';
    const inHouse = sorted.length === 1 ? '1 guest in house' : `${sorted.length} guests in house`;
    summary.textContent = query ? `${sorted.length} found for "${search.value.trim()}"` : filter === 'all' ? inHouse : `${label}: ${sorted.length}`;
    if (sorted.length === 0) {
      replaceChildren(
        grid,
        h(
          'li',
          { class: 'empty' },
          query
            ? `No room, name or PMS id contains "${search.value.trim()}".`
            : filter === 'all'
              ? 'No guests in house. Walk-ins you add and PMS check-ins appear here.'
              : `None: ${label.toLowerCase()}.`,
        ),
      );
      return;
    }
    replaceChildren(
      grid,
      sorted.map((g) => h('li', null, tile(g, changed.has(g.id), today))),
    );
    if (focusedId) grid.querySelector(`[data-guest-id="${CSS.escape(focusedId)}"]`)?.focus();
  }

  if (ctx.roster.loaded) render(ctx.roster.guests);
  else summary.textContent = 'Loading…';
  const unsubscribe = ctx.roster.subscribe(render);
  // Fresh data on every visit; the live stream keeps it fresh afterwards.
  ctx.roster.refresh().catch((err) => showError(err, 'Could not load the guests'));

  return {
    node,
    destroy: () => {
      unsubscribe();
      document.removeEventListener('keydown', onKey);
    },
  };
}

const STATE_TEXT = { arriving: 'Arriving today', departing: 'Departing today', overdue: 'Overdue' };

/** "3 nights, 1 left"; "1 night, 0 left". */
function nightsText(g, today) {
  const nights = Math.max(0, days(g.checkInDate, g.checkOutDate));
  const left = Math.min(nights, Math.max(0, days(today < g.checkInDate ? g.checkInDate : today, g.checkOutDate)));
  return `${nights} ${nights === 1 ? 'night' : 'nights'}, ${left} left`;
}

/** "2 adults, 1 child", or nothing when the party is unknown. */
function partyText(g) {
  const parts = [];
  if (g.adults !== null && g.adults !== undefined) parts.push(`${g.adults} ${g.adults === 1 ? 'adult' : 'adults'}`);
  if (g.children) parts.push(`${g.children} ${g.children === 1 ? 'child' : 'children'}`);
  return parts.join(', ');
}

function tile(g, changed, today) {
  const state = stayState(g, today);
  // The tile's accessible name is its visible text (room, name, dates, the day's mark).
  return h(
    'a',
    {
      href: `#/guest/${encodeURIComponent(g.id)}`,
      class: ['tile', g.source === 'pms' ? 'tile-pms' : 'tile-walkin', changed && 'tile-changed', `tile-${state}`],
      dataset: { room: g.roomNumber, guestId: g.id, source: g.source, state },
    },
    h('span', { class: 'tile-room' }, h('span', { class: 'visually-hidden' }, 'Room '), g.roomNumber),
    h('span', { class: 'tile-name' }, guestName(g)),
    // Each date stays on one line; the arrow may wrap on a narrow tile.
    h('span', { class: 'tile-dates' }, h('span', { class: 'nowrap' }, g.checkInDate ?? '?'), ' → ', h('span', { class: 'nowrap' }, g.checkOutDate ?? '?')),
    h('span', { class: 'tile-stay' }, [nightsText(g, today), partyText(g)].filter(Boolean).join(' · ')),
    STATE_TEXT[state] ? h('span', { class: ['tile-mark', `tile-mark-${state}`] }, STATE_TEXT[state]) : null,
    sourceBadge(g.source),
  );
}
