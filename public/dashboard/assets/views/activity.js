// #/activity: who did what, newest first. Filters go to the server; "Load more" pages
// back with `next`; a live change refetches the first page and puts new entries on top.

import { api, query } from '../api.js';
import { h, pageHeading, replaceChildren, timeEl, EMPTY } from '../dom.js';
import { field, showError } from '../ui.js';

const PAGE = 50;

export const ACTION_LABELS = {
  'guest.checked_in': 'Checked in',
  'guest.updated': 'Updated',
  'guest.room_moved': 'Room moved',
  'guest.checked_out': 'Checked out',
  'sync.completed': 'Sync completed',
  'guest.erased': 'Personal data erased',
};

export function activityView(ctx) {
  ctx.setTitle('Activity');
  let entries = [];
  let next = null;
  let fresh = new Set(); // ids to highlight (arrived live)
  let requestSeq = 0;

  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter activity' },
    field({
      name: 'actorType',
      label: 'Actor',
      options: [
        ['', 'All'],
        ['pms', 'PMS'],
        ['staff', 'Staff'],
        ['system', 'System'],
      ],
    }),
    field({ name: 'action', label: 'Action', options: [['', 'All'], ...Object.entries(ACTION_LABELS).map(([v, l]) => [v, `${l} (${v})`])] }),
    field({ name: 'guest', label: 'Guest', type: 'search', hint: 'Name, PMS guest id or guest id', attrs: { autocomplete: 'off' } }),
  );
  const list = h('ol', { class: 'activity-list', 'aria-label': 'Activity entries' });
  const more = h('button', { type: 'button', class: 'btn', hidden: true, 'data-action': 'load-more' }, 'Load more');
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' }, 'Loading…');
  const node = h('section', { class: 'view view-activity' }, pageHeading('Activity'), filters, summary, list, h('div', { class: 'list-footer' }, more));

  const params = () => {
    const v = (name) => filters.elements.namedItem(name).value.trim();
    return { actorType: v('actorType'), action: v('action'), guest: v('guest'), limit: PAGE };
  };

  /** First page; `live` merges new entries on top instead of starting over. */
  async function loadFirst({ live = false } = {}) {
    const seq = ++requestSeq;
    try {
      const data = await api.get(`/activity${query(params())}`, { signal: ctx.signal, background: live });
      if (seq !== requestSeq) return; // a newer filter or event superseded this answer
      const page = data.entries ?? [];
      const known = new Set(entries.map((e) => e.id));
      const overlaps = page.some((e) => known.has(e.id));
      if (live && overlaps) {
        const added = page.filter((e) => !known.has(e.id));
        fresh = new Set(added.map((e) => e.id));
        entries = [...added, ...entries];
      } else {
        fresh = live ? new Set(page.filter((e) => !known.has(e.id)).map((e) => e.id)) : new Set();
        entries = page;
        next = data.next ?? null;
      }
      render();
    } catch (err) {
      showError(err, 'Could not load the activity');
    }
  }

  async function loadMore() {
    if (!next) return;
    const seq = requestSeq;
    try {
      more.disabled = true;
      const data = await api.get(`/activity${query({ ...params(), before: next })}`, { signal: ctx.signal });
      if (seq !== requestSeq) return;
      const known = new Set(entries.map((e) => e.id));
      entries = [...entries, ...(data.entries ?? []).filter((e) => !known.has(e.id))];
      next = data.next ?? null;
      fresh = new Set();
      render();
    } catch (err) {
      showError(err, 'Could not load more activity');
    } finally {
      more.disabled = false;
    }
  }

  function render() {
    summary.textContent =
      entries.length === 0
        ? 'No activity matches these filters.'
        : `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} shown${next ? '; more available' : ''}`;
    replaceChildren(
      list,
      entries.map((e) => entryItem(e, fresh.has(e.id))),
    );
    more.hidden = !next;
  }

  let typingTimer = null;
  filters.addEventListener('change', () => loadFirst());
  filters.addEventListener('input', (e) => {
    // Text filter: wait for a pause in typing (selects fire "change" at once).
    if (e.target.name !== 'guest') return;
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => loadFirst(), 250);
  });
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(typingTimer);
    loadFirst();
  });
  more.addEventListener('click', loadMore);

  loadFirst();
  return {
    node,
    onLive: () => loadFirst({ live: true }),
    destroy: () => clearTimeout(typingTimer),
  };
}

/** "PMS · key key_1 · live", the staff email, or "System". */
export function actorText(e) {
  if (e.actorType === 'pms') return ['PMS', e.actor?.keyId ? `key ${e.actor.keyId}` : null, e.actor?.mode].filter(Boolean).join(' · ');
  if (e.actorType === 'staff') return e.actor?.email ?? 'Staff';
  return 'System';
}

const show = (v) => (v === null || v === undefined || v === '' ? EMPTY : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** One line per change: "field: from → to"; plain values (a sync summary) as "field: value". */
function changeLines(changes) {
  if (!changes || typeof changes !== 'object') return [];
  return Object.entries(changes).map(([fieldName, c]) =>
    c && typeof c === 'object' && c.anonymised
      ? `${fieldName}: changed (personal data removed)`
      : c && typeof c === 'object' && ('from' in c || 'to' in c)
        ? `${fieldName}: ${show(c.from)} → ${show(c.to)}`
        : `${fieldName}: ${show(c)}`,
  );
}

function entryItem(e, isFresh) {
  const lines = changeLines(e.changes);
  const guestText = e.guestAnonymised
    ? `Guest anonymised${e.pmsGuestId ? ` (PMS ${e.pmsGuestId})` : ''}`
    : e.guestName || e.pmsGuestId || (e.guestId ? 'guest' : null);
  const guest = guestText
    ? [
        e.guestId ? h('a', { href: `#/guest/${encodeURIComponent(e.guestId)}` }, guestText) : guestText,
        e.roomNumber ? h('span', { class: 'muted' }, ` · room ${e.roomNumber}`) : null,
      ]
    : null;
  return h(
    'li',
    { class: ['activity-entry', isFresh && 'entry-fresh'], dataset: { actorType: e.actorType, action: e.action, entryId: e.id } },
    h('div', { class: 'entry-head' }, h('span', { class: 'entry-time' }, timeEl(e.at)), h('span', { class: ['actor', `actor-${e.actorType}`] }, actorText(e))),
    h(
      'div',
      { class: 'entry-main' },
      h('span', { class: 'entry-action' }, ACTION_LABELS[e.action] ?? e.action),
      ' ',
      h('code', { class: 'entry-code' }, e.action),
      guest ? h('span', { class: 'entry-guest' }, ' — ', guest) : null,
    ),
    lines.length > 0
      ? h(
          'ul',
          { class: 'changes' },
          lines.map((l) => h('li', null, l)),
        )
      : null,
  );
}
