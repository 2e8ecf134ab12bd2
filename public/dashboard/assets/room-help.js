// The room field's help from the hotel's room list (README.md: Rooms), for the walk-in
// form and for a move on the guest page: the vacant rooms offered first (any room may
// still be typed), and a warning, not a refusal, when the room typed is out of order or
// not on the list.

import { h, replaceChildren, byRoom, uid } from './dom.js';
import { t } from './i18n.js';

/** A room number as the server stores it (docs/identifiers.md): NFKC, trimmed. */
const roomKey = (value) => value.normalize('NFKC').trim();

const WARNINGS = {
  add: {
    unlisted: (room) => t('Room {room} is not on the room list. You can still add the guest there.', { room }),
    outOfOrder: (room, reason) => t('Room {room} is out of order: {reason}. You can still add the guest there.', { room, reason }),
  },
  move: {
    unlisted: (room) => t('Room {room} is not on the room list. You can still move the guest there.', { room }),
    outOfOrder: (room, reason) => t('Room {room} is out of order: {reason}. You can still move the guest there.', { room, reason }),
  },
};

/**
 * Wires the `roomNumber` input inside `fields`; returns its update function (call it when
 * the room list or the roster changes). `action`: 'add' (walk-in) or 'move' (the guest
 * page, where `current` is the guest's room: it is not offered, and not warned about).
 */
export function roomHelp(fields, ctx, { action = 'add', current = null } = {}) {
  const input = fields.querySelector('input[name="roomNumber"]');
  if (!input || !ctx.rooms) return () => {};
  const list = h('datalist', { id: uid('list-rooms') });
  const warning = h('p', { class: 'room-warning', role: 'status', 'aria-live': 'polite' });
  input.setAttribute('list', list.id);
  input.closest('.field')?.append(list, warning);
  const words = WARNINGS[action];
  const update = () => {
    const rooms = ctx.rooms.loaded ? ctx.rooms.rooms : [];
    const held = new Set(ctx.roster.guests.map((g) => g.roomNumber));
    const free = byRoom(rooms.filter((r) => !held.has(r.roomNumber) && r.roomNumber !== current));
    const label = (r) =>
      [r.floor ? t('Floor {floor}', { floor: r.floor }) : null, r.type, r.outOfOrderReason ? t('Out of order') : t('Vacant')].filter(Boolean).join(' · ');
    // Vacant rooms in order first, then the vacant ones out of order.
    const offered = [...free.filter((r) => !r.outOfOrderReason), ...free.filter((r) => r.outOfOrderReason)];
    replaceChildren(
      list,
      offered.map((r) => h('option', { value: r.roomNumber, label: label(r) })),
    );
    const typed = roomKey(input.value);
    const room = rooms.find((r) => r.roomNumber === typed);
    let text = '';
    if (typed && typed !== current) {
      if (rooms.length > 0 && !room) text = words.unlisted(typed);
      else if (room?.outOfOrderReason) text = words.outOfOrder(typed, room.outOfOrderReason);
    }
    warning.textContent = text;
    warning.hidden = text === '';
  };
  input.addEventListener('input', update);
  input.addEventListener('change', update);
  update();
  return update;
}
