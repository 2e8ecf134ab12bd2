// #/activity: who did what, newest first. Filters go to the server; "Load more" pages
// back with `next`; a live change refetches the first page and puts new entries on top.

import { api, query } from '../api.js';
import { h, pageHeading, replaceChildren, timeEl } from '../dom.js';
import { field, showError } from '../ui.js';
import { fieldLabel } from '../guest-fields.js';
import { ACTIVITY_EVENTS, eventLabel } from '../event-names.js';
import { t, tk } from '../i18n.js';
import { latestWins } from '../flow.js';
import { EMPTY, formatList, formatTime } from '../format.js';

const PAGE = 50;

export function activityView(ctx) {
  ctx.setTitle(t('Activity'));
  const store = activityStore(ctx.signal);
  const page = activityPage();
  // Entries whose details the reader opened: a live change or a filter re-renders the list,
  // and must not close what someone is reading.
  const opened = rememberOpened(page.list);
  const params = () => ({ ...readFilters(page.filters), limit: PAGE });
  const render = () => renderActivity(page, store.state, opened);

  /** First page; `live` merges new entries on top instead of starting over. */
  async function loadFirst({ live = false } = {}) {
    try {
      if (await store.first(params(), { live })) render();
    } catch (err) {
      showError(err, t('Could not load the activity'));
    }
  }

  async function loadMore() {
    if (!store.state.next) return;
    try {
      page.more.disabled = true;
      if (await store.more(params())) render();
    } catch (err) {
      showError(err, t('Could not load more activity'));
    } finally {
      page.more.disabled = false;
    }
  }

  const stopFilters = watchFilters(page.filters, () => loadFirst());
  page.more.addEventListener('click', loadMore);

  loadFirst();
  return {
    node: page.node,
    onLive: () => loadFirst({ live: true }),
    destroy: stopFilters,
  };
}

// ---------------------------------------------------------------------------
// Data: the entries shown, the cursor of the next page, the ids that arrived live. A newer
// filter or live change supersedes an answer still on its way (latestWins).

function activityStore(signal) {
  const latest = latestWins();
  const state = { entries: [], next: null, fresh: new Set() };
  const knownIds = () => new Set(state.entries.map((e) => e.id));
  return {
    state,
    /** The first page; resolves false when a newer question superseded the answer. */
    async first(params, { live = false } = {}) {
      const isCurrent = latest.ask();
      const data = await api.get(`/activity${query(params)}`, { signal, background: live });
      if (!isCurrent()) return false;
      const page = data.entries ?? [];
      const known = knownIds();
      const added = page.filter((e) => !known.has(e.id));
      if (live && added.length < page.length) {
        state.fresh = new Set(added.map((e) => e.id));
        state.entries = [...added, ...state.entries];
      } else {
        state.fresh = live ? new Set(added.map((e) => e.id)) : new Set();
        state.entries = page;
        state.next = data.next ?? null;
      }
      return true;
    },
    /** The next page of the same question, appended. */
    async more(params) {
      const isCurrent = latest.askMore();
      const data = await api.get(`/activity${query({ ...params, before: state.next })}`, { signal });
      if (!isCurrent()) return false;
      const known = knownIds();
      state.entries = [...state.entries, ...(data.entries ?? []).filter((e) => !known.has(e.id))];
      state.next = data.next ?? null;
      state.fresh = new Set();
      return true;
    },
  };
}

function readFilters(filters) {
  const v = (name) => filters.elements.namedItem(name).value.trim();
  return { actorType: v('actorType'), action: v('action'), guest: v('guest') };
}

/** Runs `reload` on a filter's change; the text filter after a pause in typing. Returns the stop. */
function watchFilters(filters, reload) {
  let typingTimer = null;
  filters.addEventListener('change', () => reload());
  filters.addEventListener('input', (e) => {
    // Text filter: wait for a pause in typing (selects fire "change" at once).
    if (e.target.name !== 'guest') return;
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => reload(), 250);
  });
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(typingTimer);
    reload();
  });
  return () => clearTimeout(typingTimer);
}

/** The ids of the entries whose details are open in `list`, kept as the reader opens and closes them. */
function rememberOpened(list) {
  const opened = new Set();
  list.addEventListener(
    'toggle',
    (e) => {
      const id = e.target.closest?.('.activity-entry')?.dataset.entryId;
      if (!id) return;
      if (e.target.open) opened.add(id);
      else opened.delete(id);
    },
    true, // "toggle" does not bubble
  );
  return opened;
}

// ---------------------------------------------------------------------------
// Render: DOM from data.

/** The page and its parts: the filters, the summary, the list, the "Load more" button. */
function activityPage() {
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': t('Filter activity') },
    field({
      name: 'actorType',
      label: t('Who'),
      options: [
        ['', t('All')],
        ['pms', t('PMS')],
        ['staff', t('Staff')],
        ['system', t('System')],
      ],
    }),
    field({ name: 'action', label: t('What'), options: [['', t('All')], ...ACTIVITY_EVENTS.map((name) => [name, eventLabel(name)])] }),
    field({ name: 'guest', label: t('Guest'), type: 'search', hint: t('Name, PMS guest id or guest id'), attrs: { autocomplete: 'off' } }),
  );
  const list = h('ol', { class: 'activity-list', 'aria-label': t('Activity entries') });
  const more = h('button', { type: 'button', class: 'btn', hidden: true, 'data-action': 'load-more' }, t('Load more'));
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' }, t('Loading…'));
  const node = h('section', { class: 'view view-activity' }, pageHeading(t('Activity')), filters, summary, list, h('div', { class: 'list-footer' }, more));
  return { node, filters, list, more, summary };
}

/** Shows `entries` in the page's list: `fresh` ids highlighted, `opened` ids with their details open. */
function renderActivity({ summary, list, more }, { entries, next, fresh }, opened) {
  summary.textContent =
    entries.length === 0
      ? t('No activity matches these filters.')
      : next
        ? t('{n} entries shown; more available', { n: entries.length })
        : t('{n} entries shown', { n: entries.length });
  replaceChildren(
    list,
    entries.map((e) => entryItem(e, fresh.has(e.id), opened.has(e.id))),
  );
  more.hidden = !next;
}

const MODES = { live: tk('live'), test: tk('test') };

/** "PMS · key key_1 · live", the staff email, or "System". */
function actorText(e) {
  if (e.actorType === 'pms')
    return [t('PMS'), e.actor?.keyId ? t('key {id}', { id: e.actor.keyId }) : null, e.actor?.mode && t(MODES[e.actor.mode] ?? e.actor.mode)]
      .filter(Boolean)
      .join(' · ');
  if (e.actorType === 'staff') return e.actor?.email ?? t('Staff');
  return t('System');
}

/** Who, in a word: "PMS", the staff member's e-mail, "System". */
const actorShort = (e) => (e.actorType === 'pms' ? t('PMS') : e.actorType === 'staff' ? (e.actor?.email ?? t('Staff')) : t('System'));

const show = (v) => (v === null || v === undefined || v === '' ? EMPTY : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** One line per change: "Room: 305 → 401"; plain values (a sync summary) as "created: 3". */
function changeLines(changes) {
  if (!changes || typeof changes !== 'object') return [];
  return Object.entries(changes).map(([name, c]) => {
    const label = fieldLabel(name);
    if (c && typeof c === 'object' && c.anonymised) return t('{field}: changed (personal data removed)', { field: label });
    if (c && typeof c === 'object' && ('from' in c || 'to' in c)) return `${label}: ${show(c.from)} → ${show(c.to)}`;
    return `${label}: ${show(c)}`;
  });
}

function guestText(e) {
  if (e.guestAnonymised) return e.pmsGuestId ? t('Guest anonymised (PMS {id})', { id: e.pmsGuestId }) : t('Guest anonymised');
  return e.guestName || e.pmsGuestId || (e.guestId ? t('guest') : null);
}

/** "Ada Lovelace moved 305 → 401": what happened, as one short sentence. */
function headline(e, name) {
  const room = e.changes?.roomNumber;
  const changed = Object.keys(e.changes ?? {}).map(fieldLabel);
  switch (e.action) {
    case 'guest.checked_in':
      return t('{name} checked in to {room}', { name, room: e.roomNumber ?? room?.to ?? '?' });
    case 'guest.room_moved':
      return t('{name} moved {from} → {to}', { name, from: room?.from ?? '?', to: room?.to ?? '?' });
    case 'guest.checked_out':
      return t('{name} checked out of {room}', { name, room: room?.from ?? e.roomNumber ?? '?' });
    case 'guest.updated':
      return t('{name} updated: {fields}', { name, fields: formatList(changed) });
    case 'guest.erased':
      return t('Personal data erased: {name}', { name });
    case 'sync.completed':
      return t('Sync: {checkedIn} checked in, {updated} updated, {checkedOut} checked out', { checkedIn: 0, updated: 0, checkedOut: 0, ...e.changes });
    default:
      return e.action;
  }
}

function entryItem(e, isFresh, isOpen) {
  const who = guestText(e);
  const name = who && e.guestId ? h('a', { href: `#/guest/${encodeURIComponent(e.guestId)}`, class: 'entry-guest' }, who) : who;
  const text = headline(e, '\u0000');
  const [before, after] = text.includes('\u0000') ? text.split('\u0000') : [text, null];
  const lines = changeLines(e.changes);
  const when = sameDay(e.at) ? h('time', { datetime: e.at }, formatTime(e.at)) : timeEl(e.at);
  return h(
    'li',
    { class: ['activity-entry', isFresh && 'entry-fresh'], dataset: { actorType: e.actorType, action: e.action, entryId: e.id } },
    h(
      'p',
      { class: 'entry-line' },
      h('span', { class: 'entry-action' }, before, after === null ? null : [name, after]),
      h('span', { class: 'muted' }, ' · ', h('span', { class: ['actor', `actor-${e.actorType}`] }, actorShort(e)), ' · ', when),
    ),
    h(
      'details',
      { class: 'entry-details', open: isOpen },
      h('summary', null, t('Details')),
      h(
        'ul',
        { class: 'changes' },
        h('li', null, actorText(e)),
        h(
          'li',
          null,
          timeEl(e.at, { seconds: true }),
          ' · ',
          h('code', { class: 'entry-code' }, e.action),
          e.roomNumber ? ` · ${t('room {room}', { room: e.roomNumber })}` : null,
        ),
        lines.map((l) => h('li', null, l)),
      ),
    ),
  );
}

function sameDay(iso) {
  const d = new Date(iso);
  return d.toDateString() === new Date().toDateString();
}
