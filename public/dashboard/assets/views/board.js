// #/board: one tile per active guest, in natural room order. Re-rendered from the
// roster on every live change; tiles that just changed get a brief highlight. When the
// hotel keeps a room list (README.md: Rooms), every room of it is shown, grouped by floor:
// vacant ones plainly, those out of order with their reason, and a guest in a room not
// on the list marked so.

import { h, pageHeading, replaceChildren, syncChildren, sourceBadge, byRoom, hotelToday, daysBetween as days, stayDates, naturalCompare } from '../dom.js';
import { showError } from '../ui.js';
import { t, tk } from '../i18n.js';
import { formatList, guestName } from '../format.js';

// The day's views of the roster, each a filter of the board; "today" is the hotel's own day.
const FILTERS = [
  ['arriving', tk('Arrivals today')],
  ['departing', tk('Departures today')],
  ['all', tk('In house')],
  ['overdue', tk('Overdue')],
  // Only with a room list: rooms with no guest that are not out of order.
  ['vacant', tk('Vacant')],
];

const SOURCES = [
  ['', tk('All sources')],
  ['pms', tk('PMS')],
  ['receptionist', tk('Walk-in')],
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

/** A vacant or out-of-order room of the list that a search finds: by its number or type. */
function roomMatches(room, query) {
  if (!query) return true;
  return [room.roomNumber, room.type].some((v) => typeof v === 'string' && v.toLowerCase().includes(query));
}

/** "305" → "3", "1204" → "12": rooms numbered floor-then-room (3 or 4 digits). */
const floorOf = (room) => (/^\d{3,4}$/.test(room) ? String(Number(room.slice(0, -2))) : null);
/** Grouping by floor makes sense when every room is numbered that way and there is more than one floor. */
const floorsAllowed = (guests) =>
  guests.length > 0 && guests.every((g) => floorOf(g.roomNumber) !== null) && new Set(guests.map((g) => floorOf(g.roomNumber))).size > 1;

/**
 * The board's finding state (day filter, source, search) is kept for the browser tab, so
 * coming back from a guest's page shows the board as it was left; the search box and the
 * pressed filter show it, and an empty result names the filters that hide guests.
 */
const FIND_KEY = 'innsync.board.find';
function storedFind() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(FIND_KEY) ?? '{}');
    return {
      filter: FILTERS.some(([key]) => key === stored.filter) ? stored.filter : 'all',
      source: SOURCES.some(([key]) => key === stored.source) ? stored.source : '',
      query: typeof stored.query === 'string' ? stored.query : '',
    };
  } catch {
    return { filter: 'all', source: '', query: '' };
  }
}
let storedText = null;
function storeFind(view, query) {
  const text = JSON.stringify({ filter: view.filter, source: view.source, query });
  if (text === storedText) return; // written on change only: the board renders on every live event
  storedText = text;
  try {
    sessionStorage.setItem(FIND_KEY, text);
  } catch {
    // kept for this page only
  }
}

const GROUP_KEY = 'innsync.board.byFloor';
function storedGrouping() {
  try {
    return localStorage.getItem(GROUP_KEY) === '1';
  } catch {
    return false;
  }
}

/** The board's finding tools: the search box, the source filter and grouping by floor. */
function findTools(view, rerender) {
  const search = h('input', {
    type: 'search',
    class: 'board-search',
    'aria-label': t('Find a room or a guest'),
    placeholder: t('Room, name or PMS id (press /)'),
    'aria-keyshortcuts': '/',
    autocomplete: 'off',
  });
  search.addEventListener('input', rerender);
  const source = h(
    'select',
    { class: 'board-source', name: 'source', 'aria-label': t('Source') },
    SOURCES.map(([value, label]) => h('option', { value }, t(label))),
  );
  source.addEventListener('change', () => {
    view.source = source.value;
    rerender();
  });
  const grouping = h(
    'button',
    { type: 'button', class: 'btn btn-quiet board-grouping', 'aria-pressed': String(view.byFloor), hidden: true },
    t('Group by floor'),
  );
  grouping.addEventListener('click', () => {
    view.byFloor = !view.byFloor;
    grouping.setAttribute('aria-pressed', String(view.byFloor));
    try {
      localStorage.setItem(GROUP_KEY, view.byFloor ? '1' : '0');
    } catch {
      // the choice lasts for this page only
    }
    rerender();
  });
  return { node: h('div', { class: 'board-find' }, search, source, grouping), search, source, grouping };
}

/** "/" anywhere but in a text field jumps to the search box, as in most web apps; returns the undo. */
function slashJumpsTo(search) {
  const onKey = (e) => {
    if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey) return;
    const target = e.target;
    if (target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))) return;
    e.preventDefault();
    search.focus();
  };
  document.addEventListener('keydown', onKey);
  return () => document.removeEventListener('keydown', onKey);
}

/**
 * Tiles built once per version of a guest (its updatedAt and the hotel's day) and reused:
 * a live change to one guest rebuilds one tile, not the whole house.
 */
function tileCache(readOnly) {
  let cache = new Map();
  return {
    item(g, isChanged, today, room = { unlisted: false, outOfOrder: null }) {
      const key = `${g.updatedAt}|${today}|${room.unlisted}|${room.outOfOrder}`;
      const cached = cache.get(g.id);
      if (cached && cached.key === key && !isChanged) return cached.node;
      const node = h('li', null, tile(g, isChanged, today, readOnly, room));
      cache.set(g.id, { key, node });
      return node;
    },
    /** Forgets the tiles of guests no longer in house, once they outnumber those in house. */
    prune(guests) {
      if (cache.size <= guests.length * 2) return;
      const active = new Set(guests.map((g) => g.id));
      cache = new Map([...cache].filter(([id]) => active.has(id)));
    },
  };
}

/** Tiles of rooms without a guest, built once per version of the room (its number, type and reason). */
function roomTileCache(readOnly) {
  let cache = new Map();
  return {
    item(room) {
      const key = `${room.roomNumber}|${room.type}|${room.outOfOrderReason}`;
      const cached = cache.get(room.id);
      if (cached && cached.key === key) return cached.node;
      const node = h('li', null, roomTile(room, readOnly));
      cache.set(room.id, { key, node });
      return node;
    },
    prune(rooms) {
      if (cache.size <= rooms.length * 2) return;
      const listed = new Set(rooms.map((r) => r.id));
      cache = new Map([...cache].filter(([id]) => listed.has(id)));
    },
  };
}

/**
 * The board's entries with a room list: one per listed room (its guest, if any) and one
 * per guest in a room not on the list. `floor` is the room's floor, or for a guest off the
 * list the one its number says (3 or 4 digits), else '' (no floor).
 */
function rackEntries(guests, rooms) {
  const byNumber = new Map(guests.map((g) => [g.roomNumber, g]));
  const listed = new Set();
  const entries = rooms.map((room) => {
    listed.add(room.roomNumber);
    return { roomNumber: room.roomNumber, room, guest: byNumber.get(room.roomNumber) ?? null, floor: room.floor ?? '' };
  });
  for (const g of guests) if (!listed.has(g.roomNumber)) entries.push({ roomNumber: g.roomNumber, room: null, guest: g, floor: floorOf(g.roomNumber) ?? '' });
  return entries;
}

const isVacant = (e) => !e.guest && !e.room?.outOfOrderReason;

const filterLabel = (key) => t(FILTERS.find(([k]) => k === key)[1]);

/** How many guests arrive, depart, are overdue or in house today, and (with a room list) rooms vacant. */
function dayCounts(guests, today, entries) {
  const n = { all: guests.length, arriving: 0, departing: 0, overdue: 0, vacant: 0 };
  for (const g of guests) {
    const state = stayState(g, today);
    if (state in n) n[state]++;
  }
  if (entries) for (const e of entries) if (isVacant(e)) n.vacant++;
  return n;
}

/** The guests the day's filter, the source filter and the search (`q`, lower case) let through. */
function guestsShown(guests, view, today, q) {
  return guests.filter((g) => (view.filter === 'all' || stayState(g, today) === view.filter) && (!view.source || g.source === view.source) && matches(g, q));
}

/** The room list's entries shown: vacant rooms for "Vacant", rooms without a guest only unfiltered, guests as guestsShown. */
function entriesShown(entries, view, today, q) {
  return entries.filter((e) => {
    if (view.filter === 'vacant') return isVacant(e) && !view.source && roomMatches(e.room, q);
    if (!e.guest) return view.filter === 'all' && !view.source && roomMatches(e.room, q);
    return (view.filter === 'all' || stayState(e.guest, today) === view.filter) && (!view.source || e.guest.source === view.source) && matches(e.guest, q);
  });
}

function summaryText(view, count, query) {
  if (query) return t('{n} found for “{query}”', { n: count, query });
  if (view.filter === 'all') return t('{n} guests in house', { n: count });
  return `${filterLabel(view.filter)}: ${count}`;
}

/** The summary with a room list: vacant rooms counted too when nothing is filtered. */
function rackSummary(view, { shown, guests, entries, query }) {
  if (view.filter === 'vacant') return query ? t('{n} found for “{query}”', { n: shown.length, query }) : `${t('Vacant')}: ${shown.length}`;
  if (view.filter === 'all' && !query && !view.source)
    return `${t('{n} guests in house', { n: guests.length })} · ${t('{n} vacant rooms', { n: entries.filter(isVacant).length })}`;
  return summaryText(view, shown.filter((e) => e.guest).length, query);
}

/** The filters in use besides the search, by name ("Overdue", "Walk-in"). */
function filterNames(view) {
  const names = [];
  if (view.filter !== 'all') names.push(filterLabel(view.filter));
  if (view.source) names.push(t(SOURCES.find(([key]) => key === view.source)[1]));
  return names;
}

/**
 * Why nothing shows, truthfully: a search that matches guests the day's filter or the
 * source filter hides says so, names those filters and offers to clear them (`onClear`).
 */
function emptyContent(view, { guests, query, q, onClear }) {
  const hidden = query ? guests.filter((g) => matches(g, q)).length : guests.length;
  const names = filterNames(view);
  if (names.length > 0 && hidden > 0) {
    const clear = h('button', { type: 'button', class: 'btn btn-quiet board-clear-filters' }, t('Clear the filters'));
    clear.addEventListener('click', onClear);
    const text = query
      ? t('{n} guests match “{query}” but are hidden by the filters: {filters}.', { n: hidden, query, filters: formatList(names) })
      : t('No guest matches these filters: {filters}.', { filters: formatList(names) });
    return [text, ' ', clear];
  }
  if (query) return [t('No room, name or PMS id contains “{query}”.', { query })];
  if (names.length === 0) return [t('No guests in house. Walk-ins you add and PMS check-ins appear here.')];
  return [t('No guest matches these filters: {filters}.', { filters: formatList(names) })];
}

/** The day's filter buttons with their counts (`n`), the chosen one pressed; `onFilter(key)`. */
function renderCounts(counts, view, n, withVacant, onFilter) {
  replaceChildren(
    counts,
    FILTERS.filter(([key]) => key !== 'vacant' || withVacant).map(([key, label]) => {
      const b = h(
        'button',
        { type: 'button', class: ['day-filter', `day-filter-${key}`], 'aria-pressed': String(view.filter === key), dataset: { filter: key } },
        h('span', { class: 'day-count' }, String(n[key])),
        ' ',
        t(label),
      );
      b.addEventListener('click', () => onFilter(key));
      return b;
    }),
  );
}

/** The page's frame: heading, the day's filters, the finding tools, the summary and the rooms. */
function boardPage({ readOnly, isAdmin, tools }) {
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  const counts = h('div', { class: 'day-filters', role: 'group', 'aria-label': t('Today at a glance') });
  // Without a room list, the board shows guests only; an admin is pointed to the Rooms page.
  const noList = isAdmin
    ? h(
        'p',
        { class: 'hint board-no-room-list', hidden: true },
        t('Vacant rooms show here once the hotel has a room list:'),
        ' ',
        h('a', { href: '#/rooms' }, t('set it up on the Rooms page')),
        '.',
      )
    : null;
  const rooms = h('div', { class: 'board-rooms' });
  const node = h(
    'section',
    { class: 'view view-board' },
    h('div', { class: 'view-head' }, pageHeading(t('Room board')), readOnly ? null : h('a', { href: '#/walk-in', class: 'btn btn-primary' }, t('Add walk-in'))),
    h('div', { class: 'board-tools' }, counts, tools.node),
    summary,
    noList,
    rooms,
  );
  // The one list of all rooms, and a section per floor: kept across renders like the tiles.
  const allRooms = h('ul', { class: 'board', 'aria-label': t('Rooms') });
  return { node, summary, counts, noList, rooms, allRooms, floorSections: new Map() };
}

/** Nothing to show: the list says why (`content`). */
function renderEmpty(page, content) {
  syncChildren(page.allRooms, [h('li', { class: 'empty' }, content)]);
  syncChildren(page.rooms, [page.allRooms]);
}

/** The board without a room list: the guests' tiles, grouped by floor when chosen and possible. */
function renderGuests(page, view, { guests, changed, today, query, tiles, grouping, onFilter, onClear }) {
  const { rooms } = page;
  renderCounts(page.counts, view, dayCounts(guests, today, null), false, onFilter);
  // Re-rendering replaces the tiles; keep keyboard focus on the same guest's tile.
  const focusedId = rooms.contains(document.activeElement) ? document.activeElement.dataset.guestId : null;
  const q = query.toLowerCase();
  const sorted = byRoom(guestsShown(guests, view, today, q));
  page.summary.textContent = summaryText(view, sorted.length, query);
  const allowFloors = floorsAllowed(guests);
  grouping.hidden = !allowFloors;
  if (sorted.length === 0) return renderEmpty(page, emptyContent(view, { guests, query, q, onClear }));
  const items = (list) => list.map((g) => tiles.item(g, changed.has(g.id), today));
  tiles.prune(guests);
  if (allowFloors && view.byFloor)
    syncChildren(
      rooms,
      floorGroups(sorted, items, page.floorSections, (g) => floorOf(g.roomNumber), false),
    );
  else syncChildren(rooms, [syncChildren(page.allRooms, items(sorted))]);
  if (focusedId) rooms.querySelector(`[data-guest-id="${CSS.escape(focusedId)}"]`)?.focus();
}

/** The board with a room list: every room by floor, vacant and out-of-order ones too. */
function renderRack(page, view, { guests, changed, today, listed, query, tiles, roomTiles, grouping, onFilter, onClear }) {
  const { rooms } = page;
  const entries = rackEntries(guests, listed);
  renderCounts(page.counts, view, dayCounts(guests, today, entries), true, onFilter);
  const focusedRoom = rooms.contains(document.activeElement) ? document.activeElement.dataset.room : null;
  const q = query.toLowerCase();
  grouping.hidden = true;
  const shown = entriesShown(entries, view, today, q);
  page.summary.textContent = rackSummary(view, { shown, guests, entries, query });
  if (shown.length === 0) return renderEmpty(page, view.filter === 'vacant' ? [t('No room is vacant.')] : emptyContent(view, { guests, query, q, onClear }));
  tiles.prune(guests);
  roomTiles.prune(listed);
  const items = (list) =>
    list.map((e) =>
      e.guest
        ? tiles.item(e.guest, changed.has(e.guest.id), today, { unlisted: !e.room, outOfOrder: e.room?.outOfOrderReason ?? null })
        : roomTiles.item(e.room),
    );
  syncChildren(
    rooms,
    floorGroups(byRoom(shown), items, page.floorSections, (e) => e.floor, true),
  );
  if (focusedRoom) rooms.querySelector(`.tile[data-room="${CSS.escape(focusedRoom)}"]`)?.focus();
}

/** What each render gets besides the guests: the tile caches, the grouping button, the filters' handlers. */
function renderKit(view, tools, readOnly, rerender) {
  return {
    tiles: tileCache(readOnly),
    roomTiles: roomTileCache(readOnly),
    grouping: tools.grouping,
    onFilter: (key) => {
      view.filter = view.filter === key ? 'all' : key;
      rerender();
    },
    onClear: () => {
      view.filter = 'all';
      view.source = '';
      tools.source.value = '';
      rerender();
    },
  };
}

export function boardView(ctx) {
  ctx.setTitle(t('Board'));
  const timeZone = ctx.session?.hotel?.timeZone ?? 'UTC';
  const readOnly = Boolean(ctx.readOnly);
  const roomList = ctx.rooms;
  // What the board finds (kept for the tab) and the latest roster answer it shows.
  const found = storedFind();
  const view = { filter: found.filter, source: found.source, byFloor: storedGrouping() };
  let last = { guests: [], changed: new Set() };
  const rerender = () => render(last.guests, last.changed);
  const tools = findTools(view, rerender);
  tools.search.value = found.query;
  tools.source.value = view.source;
  const page = boardPage({ readOnly, isAdmin: ctx.isAdmin, tools });
  const shared = renderKit(view, tools, readOnly, rerender);
  const stopSlash = slashJumpsTo(tools.search);

  function render(guests, changed = new Set()) {
    last = { guests, changed };
    const today = hotelToday(timeZone);
    const listed = roomList?.loaded ? roomList.rooms : [];
    if (page.noList) page.noList.hidden = !roomList?.loaded || listed.length > 0;
    const query = tools.search.value.trim();
    if (listed.length === 0 && view.filter === 'vacant') view.filter = 'all';
    storeFind(view, tools.search.value);
    if (listed.length > 0) renderRack(page, view, { ...shared, guests, changed, today, listed, query });
    else renderGuests(page, view, { ...shared, guests, changed, today, query });
  }

  // A new room list redraws the board once the guests are known (until then it says "Loading…").
  const rerenderLast = () => {
    if (ctx.roster.loaded) render(ctx.roster.guests, new Set());
  };
  if (ctx.roster.loaded) render(ctx.roster.guests);
  else page.summary.textContent = t('Loading…');
  const unsubscribe = ctx.roster.subscribe(render);
  const unsubscribeRooms = roomList?.subscribe(rerenderLast);
  // Fresh data on every visit; the live stream keeps it fresh afterwards.
  ctx.roster.refresh().catch((err) => showError(err, t('Could not load the guests')));
  roomList?.refresh().catch((err) => showError(err, t('Could not load the room list')));

  return {
    node: page.node,
    destroy: () => {
      unsubscribe();
      unsubscribeRooms?.();
      stopSlash();
    },
  };
}

/**
 * One section per floor: a heading and that floor's tiles, in room order (sections kept in
 * `sections`). `rack`: entries of the room list, floors in natural order ('' — no floor —
 * last), each counting its guests and vacant rooms.
 */
function floorGroups(sorted, tiles, sections, floorKey, rack) {
  const floors = new Map();
  for (const item of sorted) {
    const floor = floorKey(item);
    if (!floors.has(floor)) floors.set(floor, []);
    floors.get(floor).push(item);
  }
  const order = rack ? [...floors.keys()].sort((a, b) => (a === '' ? 1 : b === '' ? -1 : naturalCompare(a, b))) : [...floors.keys()];
  return order.map((floor) => {
    const items = floors.get(floor);
    const key = `${rack ? 'rack' : 'guests'}|${floor}`;
    if (!sections.has(key)) {
      const title = floor === '' ? t('No floor') : t('Floor {floor}', { floor });
      const count = h('span', { class: 'muted' });
      const list = h('ul', { class: 'board', 'aria-label': title });
      const node = h('section', { class: 'floor', dataset: { floor } }, h('h2', { class: 'floor-title' }, title, ' ', count), list);
      sections.set(key, { node, count, list });
    }
    const section = sections.get(key);
    const guests = rack ? items.filter((e) => e.guest).length : items.length;
    const text = rack
      ? `(${t('{n} guests', { n: guests })}, ${t('{n} vacant rooms', { n: items.filter(isVacant).length })})`
      : `(${t('{n} guests', { n: guests })})`;
    // Unchanged text is left alone: rewriting it would re-lay out the heading on every render.
    if (section.count.textContent !== text) section.count.textContent = text;
    syncChildren(section.list, tiles(items));
    return section.node;
  });
}

const STATE_TEXT = { arriving: tk('Arriving today'), departing: tk('Departing today'), overdue: tk('Overdue') };

/** "3 nights, 1 left"; "1 night, 0 left". */
function nightsText(g, today) {
  const nights = Math.max(0, days(g.checkInDate, g.checkOutDate));
  const left = Math.min(nights, Math.max(0, days(today < g.checkInDate ? g.checkInDate : today, g.checkOutDate)));
  return `${t('{n} nights', { n: nights })}, ${t('{n} left', { n: left })}`;
}

/** "2 adults, 1 child", or nothing when the party is unknown. */
function partyText(g) {
  const parts = [];
  if (g.adults !== null && g.adults !== undefined) parts.push(t('{n} adults', { n: g.adults }));
  if (g.children) parts.push(t('{n} children', { n: g.children }));
  return parts.join(', ');
}

function tile(g, changed, today, readOnly, room = { unlisted: false, outOfOrder: null }) {
  const state = stayState(g, today);
  // The tile's accessible name is its visible text (room, name, dates, the day's mark).
  // On a read-only display the tile is not a link: there is nothing to open.
  return h(
    readOnly ? 'div' : 'a',
    {
      href: readOnly ? null : `#/guest/${encodeURIComponent(g.id)}`,
      class: ['tile', g.source === 'pms' ? 'tile-pms' : 'tile-walkin', changed && 'tile-changed', `tile-${state}`],
      dataset: { room: g.roomNumber, guestId: g.id, source: g.source, state },
    },
    h('span', { class: 'tile-room' }, h('span', { class: 'visually-hidden' }, `${t('Room')} `), g.roomNumber),
    h('span', { class: 'tile-name' }, guestName(g)),
    // Each date stays on one line; the arrow may wrap on a narrow tile.
    h('span', { class: 'tile-dates' }, stayDates(g)),
    h('span', { class: 'tile-stay' }, [nightsText(g, today), partyText(g)].filter(Boolean).join(' · ')),
    STATE_TEXT[state] ? h('span', { class: ['tile-mark', `tile-mark-${state}`] }, t(STATE_TEXT[state])) : null,
    room.unlisted ? h('span', { class: ['tile-mark', 'tile-mark-unlisted'] }, t('Not on the room list')) : null,
    room.outOfOrder ? h('span', { class: ['tile-mark', 'tile-mark-out-of-order'] }, t('Out of order: {reason}', { reason: room.outOfOrder })) : null,
    sourceBadge(g.source),
  );
}

/**
 * A room of the list with no guest: vacant, or out of order with its reason. A vacant
 * room's tile opens the walk-in form for it (not on a read-only display); an out-of-order
 * one is not a link (the walk-in form still takes it, with a warning).
 */
function roomTile(room, readOnly) {
  const outOfOrder = Boolean(room.outOfOrderReason);
  const state = outOfOrder ? 'out-of-order' : 'vacant';
  const link = !outOfOrder && !readOnly;
  return h(
    link ? 'a' : 'div',
    {
      href: link ? `#/walk-in/${encodeURIComponent(room.roomNumber)}` : null,
      class: ['tile', 'tile-room-only', `tile-${state}`],
      dataset: { room: room.roomNumber, state },
    },
    h('span', { class: 'tile-room' }, h('span', { class: 'visually-hidden' }, `${t('Room')} `), room.roomNumber),
    room.type ? h('span', { class: 'tile-type' }, room.type) : null,
    h('span', { class: ['tile-mark', `tile-mark-${state}`] }, outOfOrder ? t('Out of order') : t('Vacant')),
    outOfOrder ? h('span', { class: 'tile-reason' }, room.outOfOrderReason) : null,
    link ? h('span', { class: 'visually-hidden' }, ` ${t('Add a walk-in guest here')}`) : null,
  );
}
