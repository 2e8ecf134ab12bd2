// #/walk-in: add a guest entered by staff (source "receptionist"). The server applies
// the same field rules and the same one-guest-per-room rule as for PMS guests.

import { api } from '../api.js';
import { h, pageHeading, guestName } from '../dom.js';
import { announce, busy, clearAlert, clearFieldErrors, showFormErrors } from '../ui.js';
import { guestFieldsets, readGuestForm, checkRequired, createPayload } from '../guest-fields.js';

export function walkinView(ctx) {
  ctx.setTitle('Add walk-in');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Add guest');
  const form = h(
    'form',
    { class: 'form', novalidate: true, 'aria-labelledby': 'walkin-title' },
    h('p', { class: 'hint' }, 'Fields marked * are required.'),
    guestFieldsets(),
    h('div', { class: 'form-actions' }, submit, h('a', { href: '#/board', class: 'btn' }, 'Cancel')),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearFieldErrors(form);
    clearAlert();
    const values = readGuestForm(form);
    if (!checkRequired(form, values)) return;
    await busy(submit, async () => {
      try {
        const { guest } = await api.post('/guests', createPayload(values));
        ctx.roster.markChanged(guest.id);
        announce(`${guestName(guest)} added to room ${guest.roomNumber}.`);
        ctx.navigate('#/board');
      } catch (err) {
        showFormErrors(form, err, { prefix: 'Could not add the guest' });
      }
    });
  });
  const heading = pageHeading('Add a walk-in guest');
  heading.id = 'walkin-title';
  return { node: h('section', { class: 'view view-walkin' }, heading, form) };
}
