// #/board: one tile per active guest, in natural room order. Re-rendered from the
// roster on every live change; tiles that just changed get a brief highlight.

import { h, pageHeading, replaceChildren, guestName, sourceBadge, sourceLabel, naturalCompare } from '../dom.js';
import { showError } from '../ui.js';

export function boardView(ctx) {
  ctx.setTitle('Board');
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' });
  const grid = h('ul', { class: 'board', 'aria-label': 'Rooms' });
  const node = h(
    'section',
    { class: 'view view-board' },
    h('div', { class: 'view-head' }, pageHeading('Room board'), h('a', { href: '#/walk-in', class: 'btn btn-primary' }, 'Add walk-in')),
    summary,
    grid,
  );

  function render(guests, changed = new Set()) {
    // Re-rendering replaces the tiles; keep keyboard focus on the same guest's tile.
    const focusedId = grid.contains(document.activeElement) ? document.activeElement.dataset.guestId : null;
    const sorted = [...guests].sort((a, b) => naturalCompare(a.roomNumber, b.roomNumber));
    summary.textContent = sorted.length === 1 ? '1 guest in house' : `${sorted.length} guests in house`;
    if (sorted.length === 0) {
      replaceChildren(grid, h('li', { class: 'empty' }, 'No guests in house. Walk-ins you add and PMS check-ins appear here.'));
      return;
    }
    replaceChildren(
      grid,
      sorted.map((g) => h('li', null, tile(g, changed.has(g.id)))),
    );
    if (focusedId) grid.querySelector(`[data-guest-id="${CSS.escape(focusedId)}"]`)?.focus();
  }

  if (ctx.roster.loaded) render(ctx.roster.guests);
  else summary.textContent = 'Loading…';
  const unsubscribe = ctx.roster.subscribe(render);
  // Fresh data on every visit; the live stream keeps it fresh afterwards.
  ctx.roster.refresh().catch((err) => showError(err, 'Could not load the guests'));

  return { node, destroy: unsubscribe };
}

function tile(g, changed) {
  return h(
    'a',
    {
      href: `#/guest/${encodeURIComponent(g.id)}`,
      class: ['tile', g.source === 'pms' ? 'tile-pms' : 'tile-walkin', changed && 'tile-changed'],
      dataset: { room: g.roomNumber, guestId: g.id, source: g.source },
      'aria-label': `Room ${g.roomNumber}: ${guestName(g)}, ${g.checkInDate} to ${g.checkOutDate}, ${sourceLabel(g.source)}`,
    },
    h('span', { class: 'tile-room' }, g.roomNumber),
    h('span', { class: 'tile-name' }, guestName(g)),
    // Each date stays on one line; the arrow may wrap on a narrow tile.
    h('span', { class: 'tile-dates' }, h('span', { class: 'nowrap' }, g.checkInDate ?? '?'), ' → ', h('span', { class: 'nowrap' }, g.checkOutDate ?? '?')),
    sourceBadge(g.source),
  );
}
