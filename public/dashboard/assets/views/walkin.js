// #/walk-in: add a guest entered by staff (source "receptionist"). The server applies
// the same field rules and the same one-guest-per-room rule as for PMS guests, and
// answers every problem of the form at once.

import { api } from '../api.js';
import { h, pageHeading, hotelToday, addDays, replaceChildren } from '../dom.js';
import { act, clearAlert, clearFieldErrors, showFormErrors } from '../ui.js';
import { guestFieldsets, readGuestForm, createPayload } from '../guest-fields.js';
import { t } from '../i18n.js';
import { roomHelp } from '../room-help.js';
import { guestName } from '../format.js';

/** A walk-in usually stays from today (the hotel's day) to tomorrow. */
function defaults(ctx, roomNumber) {
  const today = hotelToday(ctx.session?.hotel?.timeZone);
  return { checkInDate: today, checkOutDate: addDays(today, 1), ...(roomNumber ? { roomNumber } : {}) };
}

/** The form around `fields` (the guest's fieldsets), with its submit button and Cancel. */
function walkinForm(fields, submit) {
  return h(
    'form',
    { class: 'form', novalidate: true, 'aria-labelledby': 'walkin-title' },
    h('p', { class: 'hint' }, t('Fields marked * are required.')),
    fields,
    h('div', { class: 'form-actions' }, submit, h('a', { href: '#/board', class: 'btn' }, t('Cancel'))),
  );
}

/** The confirmation of a guest added: who, which room, and where to go next. */
function addedNote(guest) {
  return [
    h('p', null, t('{name} added to room {room}.', { name: guestName(guest), room: guest.roomNumber }), ' '),
    h('p', null, h('a', { href: `#/guest/${encodeURIComponent(guest.id)}` }, t('Open the guest')), ' · ', h('a', { href: '#/board' }, t('Back to the board'))),
  ];
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
  const form = walkinForm(fields, submit);

  /** A fresh form for the next guest, and the confirmation of the one just added. */
  function added({ guest }) {
    ctx.roster.markChanged(guest.id);
    replaceChildren(fields, guestFieldsets(defaults(ctx)));
    updateRooms = roomHelp(fields, ctx);
    replaceChildren(done, ...addedNote(guest));
    form.querySelector('input')?.focus();
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearFieldErrors(form);
    clearAlert();
    replaceChildren(done);
    const { values, errors } = readGuestForm(form);
    if (errors.length > 0) return showFormErrors(form, { errors }, { prefix: t('Could not add the guest') });
    return act({ button: submit, form, failed: t('Could not add the guest'), run: () => api.post('/guests', createPayload(values)), after: added });
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
