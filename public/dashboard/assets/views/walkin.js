// #/walk-in: add a guest entered by staff (source "receptionist"). The server applies
// the same field rules and the same one-guest-per-room rule as for PMS guests, and
// answers every problem of the form at once.

import { api } from '../api.js';
import { h, pageHeading, guestName, hotelToday, addDays, replaceChildren, byRoom, uid } from '../dom.js';
import { busy, clearAlert, clearFieldErrors, showFormErrors } from '../ui.js';
import { guestFieldsets, readGuestForm, createPayload } from '../guest-fields.js';
import { t } from '../i18n.js';

/** A walk-in usually stays from today (the hotel's day) to tomorrow. */
function defaults(ctx, roomNumber) {
  const today = hotelToday(ctx.session?.hotel?.timeZone);
  return { checkInDate: today, checkOutDate: addDays(today, 1), ...(roomNumber ? { roomNumber } : {}) };
}

/** A room number as the server stores it (docs/identifiers.md): NFKC, trimmed. */
const roomKey = (value) => value.normalize('NFKC').trim();

/**
 * The room field's help from the hotel's room list (README.md: Rooms): a list that offers
 * the vacant rooms first (any room may still be typed), and a warning, not a refusal,
 * when the room typed is out of order or not on the list. Returns its update function.
 */
function roomHelp(fields, ctx) {
  const input = fields.querySelector('input[name="roomNumber"]');
  if (!input || !ctx.rooms) return () => {};
  const list = h('datalist', { id: uid('list-rooms') });
  const warning = h('p', { class: 'room-warning', role: 'status', 'aria-live': 'polite' });
  input.setAttribute('list', list.id);
  input.closest('.field')?.append(list, warning);
  const update = () => {
    const rooms = ctx.rooms.loaded ? ctx.rooms.rooms : [];
    const held = new Set(ctx.roster.guests.map((g) => g.roomNumber));
    const free = byRoom(rooms.filter((r) => !held.has(r.roomNumber)));
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
    if (typed && rooms.length > 0 && !room) text = t('Room {room} is not on the room list. You can still add the guest there.', { room: typed });
    else if (room?.outOfOrderReason)
      text = t('Room {room} is out of order: {reason}. You can still add the guest there.', { room: typed, reason: room.outOfOrderReason });
    warning.textContent = text;
    warning.hidden = text === '';
  };
  input.addEventListener('input', update);
  input.addEventListener('change', update);
  update();
  return update;
}

export function walkinView(ctx) {
  ctx.setTitle(t('Add walk-in'));
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Add guest'));
  // The confirmation stays on this page, next to the form it answers.
  const done = h('div', { class: 'form-success', role: 'status' });
  // #/walk-in/<room>: opened from a vacant room's tile, the room is filled in.
  const chosenRoom = ctx.params?.[0];
  const fields = h('div', null, guestFieldsets(defaults(ctx, chosenRoom)));
  let updateRooms = roomHelp(fields, ctx);
  const form = h(
    'form',
    { class: 'form', novalidate: true, 'aria-labelledby': 'walkin-title' },
    h('p', { class: 'hint' }, t('Fields marked * are required.')),
    fields,
    h('div', { class: 'form-actions' }, submit, h('a', { href: '#/board', class: 'btn' }, t('Cancel'))),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearFieldErrors(form);
    clearAlert();
    replaceChildren(done);
    const { values, errors } = readGuestForm(form);
    if (errors.length > 0) {
      showFormErrors(form, { errors }, { prefix: t('Could not add the guest') });
      return;
    }
    await busy(submit, async () => {
      try {
        const { guest } = await api.post('/guests', createPayload(values));
        ctx.roster.markChanged(guest.id);
        replaceChildren(fields, guestFieldsets(defaults(ctx)));
        updateRooms = roomHelp(fields, ctx);
        replaceChildren(
          done,
          h('p', null, t('{name} added to room {room}.', { name: guestName(guest), room: guest.roomNumber }), ' '),
          h(
            'p',
            null,
            h('a', { href: `#/guest/${encodeURIComponent(guest.id)}` }, t('Open the guest')),
            ' · ',
            h('a', { href: '#/board' }, t('Back to the board')),
          ),
        );
        form.querySelector('input')?.focus();
      } catch (err) {
        showFormErrors(form, err, { prefix: t('Could not add the guest') });
      }
    });
  });
  const heading = pageHeading(t('Add a walk-in guest'));
  heading.id = 'walkin-title';
  // The room list and the guests in house, fresh for this visit and kept so by the live stream.
  const unsubscribe = [ctx.rooms?.subscribe(() => updateRooms()), ctx.roster.subscribe(() => updateRooms())];
  ctx.rooms?.refresh().catch(() => {});
  if (!ctx.roster.loaded) ctx.roster.refresh().catch(() => {});
  return {
    node: h('section', { class: 'view view-walkin' }, heading, done, form),
    destroy: () => unsubscribe.forEach((fn) => fn?.()),
  };
}
