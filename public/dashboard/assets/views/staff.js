// #/staff (admin): the hotel's dashboard users. Deactivating ends the user's sessions;
// the server refuses to deactivate the current user (and so does this page).

import { api, enc } from '../api.js';
import { timeZoneField } from '../time-zones.js';
import { h, pageHeading, replaceChildren, timeEl } from '../dom.js';
import { field, passwordLength, announce, busy, clearAlert, clearFieldErrors, confirmDialog, showError, showFormErrors } from '../ui.js';
import { t, tk } from '../i18n.js';

const ROLE_LABELS = { receptionist: tk('Receptionist'), admin: tk('Admin') };
const roleLabel = (role) => (ROLE_LABELS[role] ? t(ROLE_LABELS[role]) : role);

export function staffView(ctx) {
  ctx.setTitle(t('Staff'));
  const me = ctx.session.user;
  const tableSlot = h('div', null, h('p', { class: 'loading' }, t('Loading…')));

  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Add user'));
  const form = h(
    'form',
    { class: 'form form-inline', novalidate: true, 'aria-labelledby': 'add-user' },
    h(
      'div',
      { class: 'field-grid' },
      field({ name: 'email', label: t('Email'), type: 'email', required: true, attrs: { autocomplete: 'off' } }),
      field({
        name: 'role',
        label: t('Role'),
        options: [
          ['receptionist', roleLabel('receptionist')],
          ['admin', roleLabel('admin')],
        ],
        value: 'receptionist',
      }),
      field({ name: 'password', label: t('Password'), type: 'password', required: true, attrs: { autocomplete: 'new-password', ...passwordLength } }),
    ),
    h('div', { class: 'form-actions' }, submit),
  );

  const saveZone = h('button', { type: 'submit', class: 'btn' }, t('Save time zone'));
  const hotelForm = h(
    'form',
    { class: 'form form-inline', novalidate: true, 'aria-labelledby': 'hotel-settings' },
    timeZoneField(ctx.session.hotel.timeZone),
    h('div', { class: 'form-actions' }, saveZone),
  );
  hotelForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearFieldErrors(hotelForm);
    await busy(saveZone, async () => {
      try {
        const { hotel } = await api.patch('/hotel', { timeZone: hotelForm.elements.namedItem('timeZone').value });
        ctx.session.hotel.timeZone = hotel.timeZone;
        announce(t('Time zone set to {zone}.', { zone: hotel.timeZone }));
      } catch (err) {
        showFormErrors(hotelForm, err, { prefix: t('Could not set the time zone') });
      }
    });
  });

  const node = h(
    'section',
    { class: 'view view-staff' },
    pageHeading(t('Staff')),
    tableSlot,
    h('section', { class: 'panel', 'aria-labelledby': 'add-user' }, h('h2', { id: 'add-user' }, t('Add a user')), form),
    h('section', { class: 'panel', 'aria-labelledby': 'hotel-settings' }, h('h2', { id: 'hotel-settings' }, t('Hotel')), hotelForm),
  );

  async function loadUsers() {
    try {
      const data = await api.get('/users', { signal: ctx.signal });
      renderTable(data.users ?? []);
    } catch (err) {
      showError(err, t('Could not load the staff list'));
    }
  }

  function renderTable(users) {
    const sorted = [...users].sort((a, b) => Number(Boolean(a.deactivatedAt)) - Number(Boolean(b.deactivatedAt)) || a.email.localeCompare(b.email));
    replaceChildren(
      tableSlot,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table table-users' },
          h('caption', { class: 'visually-hidden' }, t('Staff users')),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              [tk('Email'), tk('Role'), tk('Created'), tk('Status'), tk('Actions')].map((text) => h('th', { scope: 'col' }, t(text))),
            ),
          ),
          h('tbody', null, sorted.map(userRow)),
        ),
      ),
    );
  }

  function userRow(u) {
    const active = !u.deactivatedAt;
    const self = u.id === me.id;
    let action = null;
    if (active && !self) {
      action = h('button', { type: 'button', class: 'btn btn-danger btn-small', 'data-action': 'deactivate' }, t('Deactivate'));
      action.addEventListener('click', () => deactivate(u, action));
    } else if (self) {
      action = h('span', { class: 'muted' }, t('you'));
    }
    return h(
      'tr',
      { dataset: { userId: u.id, email: u.email, status: active ? 'active' : 'deactivated' } },
      h('td', null, u.email),
      h('td', null, h('span', { class: 'role-badge', dataset: { role: u.role } }, roleLabel(u.role))),
      h('td', null, timeEl(u.createdAt)),
      h(
        'td',
        null,
        active
          ? h('span', { class: 'status-pill status-active' }, t('active'))
          : [h('span', { class: 'status-pill status-revoked' }, t('deactivated')), ' ', h('span', { class: 'muted' }, timeEl(u.deactivatedAt))],
      ),
      h('td', null, action),
    );
  }

  async function deactivate(u, button) {
    clearAlert();
    const ok = await confirmDialog({
      title: t('Deactivate {email}?', { email: u.email }),
      message: t('The user is logged out at once and can no longer log in. Their past actions stay in the activity log.'),
      confirmLabel: t('Deactivate user'),
      danger: true,
    });
    if (!ok) return;
    await busy(button, async () => {
      try {
        await api.post(`/users/${enc(u.id)}/deactivate`, {});
        announce(t('{email} deactivated.', { email: u.email }));
        await loadUsers();
        node.querySelector('h1')?.focus();
      } catch (err) {
        showError(err, t('Could not deactivate the user'));
      }
    });
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearFieldErrors(form);
    clearAlert();
    const email = form.elements.namedItem('email').value.trim();
    const role = form.elements.namedItem('role').value;
    const password = form.elements.namedItem('password').value;
    await busy(submit, async () => {
      try {
        const { user } = await api.post('/users', { email, role, password });
        form.reset();
        announce(t('{email} added as {role}.', { email: user?.email ?? email, role: roleLabel(user?.role ?? role) }));
        await loadUsers();
      } catch (err) {
        showFormErrors(form, err, { prefix: t('Could not add the user') });
      }
    });
  });

  loadUsers();
  return { node };
}
