// #/staff (admin): the hotel's dashboard users. Deactivating ends the user's sessions;
// a role change takes effect at the user's next request (docs/dashboard.md, "Changing a
// role"). The server refuses both for the current user, and this page offers neither.

import { api, enc } from '../api.js';
import { timeZoneField } from '../time-zones.js';
import { h, pageHeading, replaceChildren, timeEl } from '../dom.js';
import { act, field, passwordLength, showError } from '../ui.js';
import { t, tk } from '../i18n.js';
import { roleLabel } from '../format.js';
import { staffFactorsSection } from './staff-factors.js';

export function staffView(ctx) {
  ctx.setTitle(t('Staff'));
  const me = ctx.session.user;
  const store = staffStore(ctx.signal);
  const page = staffPage(ctx.session.hotel.timeZone);

  async function load() {
    try {
      replaceChildren(page.table, userTable(await store.load(), me, actions));
    } catch (err) {
      showError(err, t('Could not load the staff list'));
    }
  }

  const actions = staffActions(store, page, {
    load,
    focusHeading: () => page.node.querySelector('h1')?.focus(),
    zoneSaved: (zone) => {
      ctx.session.hotel.timeZone = zone;
    },
  });
  page.form.addEventListener('submit', (e) => {
    e.preventDefault();
    actions.add();
  });
  page.hotelForm.addEventListener('submit', (e) => {
    e.preventDefault();
    actions.saveTimeZone();
  });

  page.node.append(staffFactorsSection(ctx));
  load();
  return { node: page.node };
}

// ---------------------------------------------------------------------------
// Data: the users (active first, by e-mail) and the actions.

function staffStore(signal) {
  const byStatusThenEmail = (a, b) => Number(Boolean(a.deactivatedAt)) - Number(Boolean(b.deactivatedAt)) || a.email.localeCompare(b.email);
  return {
    async load() {
      const data = await api.get('/users', { signal });
      return [...(data.users ?? [])].sort(byStatusThenEmail);
    },
    add: async (values) => (await api.post('/users', values)).user,
    deactivate: (u) => api.post(`/users/${enc(u.id)}/deactivate`, {}),
    setRole: async (u, role) => (await api.patch(`/users/${enc(u.id)}`, { role })).user,
    endSessions: async (u) => (await api.post(`/users/${enc(u.id)}/end-sessions`, {})).ended,
    setTimeZone: async (timeZone) => (await api.patch('/hotel', { timeZone })).hotel,
  };
}

/**
 * What the buttons and forms do: send, announce, show the new state. `view`: load() the
 * users again, focusHeading(), zoneSaved(zone) (the session's hotel follows).
 */
function staffActions(store, page, view) {
  const { form, hotelForm } = page;
  return {
    add() {
      const values = readUserForm(form);
      return act({
        button: page.submit,
        form,
        run: async () => {
          const user = await store.add(values);
          form.reset();
          return user;
        },
        done: (user) => t('{email} added as {role}.', { email: user?.email ?? values.email, role: roleLabel(user?.role ?? values.role) }),
        after: view.load,
        failed: t('Could not add the user'),
      });
    },
    deactivate: (u, button) =>
      act({
        button,
        confirm: deactivateConfirm(u),
        run: () => store.deactivate(u),
        done: t('{email} deactivated.', { email: u.email }),
        after: async () => {
          await view.load();
          view.focusHeading();
        },
        failed: t('Could not deactivate the user'),
      }),
    // The other role: admin <-> receptionist, from the user's next request on.
    changeRole: (u, button) => {
      const role = otherRole(u);
      return act({
        button,
        confirm: roleConfirm(u, role),
        run: () => store.setRole(u, role),
        done: (user) => (user.role === 'admin' ? t('{email} is now an admin.', { email: u.email }) : t('{email} is now a receptionist.', { email: u.email })),
        after: view.load,
        failed: t('Could not change the role'),
      });
    },
    // Every session of the user ends: they must log in again (docs/dashboard.md, "Ending sessions").
    endSessions: (u, button) =>
      act({
        button,
        run: () => store.endSessions(u),
        done: t('{email} is logged out everywhere.', { email: u.email }),
        failed: t('Could not end the sessions'),
      }),
    saveTimeZone: () =>
      act({
        button: page.saveZone,
        form: hotelForm,
        run: async () => {
          const hotel = await store.setTimeZone(hotelForm.elements.namedItem('timeZone').value);
          view.zoneSaved(hotel.timeZone);
          return hotel;
        },
        done: (hotel) => t('Time zone set to {zone}.', { zone: hotel.timeZone }),
        failed: t('Could not set the time zone'),
      }),
  };
}

function readUserForm(form) {
  const value = (name) => form.elements.namedItem(name).value;
  return { email: value('email').trim(), role: value('role'), password: value('password') };
}

// ---------------------------------------------------------------------------
// Render: DOM from data; handlers come in as arguments.

/** The page and its parts: the users' slot, the add-user form, the hotel's time zone form. */
function staffPage(timeZone) {
  const table = h('div', null, h('p', { class: 'loading' }, t('Loading…')));
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Add user'));
  const form = h(
    'form',
    { class: 'form form-inline', novalidate: true, 'aria-labelledby': 'add-user' },
    h('div', { class: 'field-grid' }, userFields()),
    h('div', { class: 'form-actions' }, submit),
  );
  const saveZone = h('button', { type: 'submit', class: 'btn' }, t('Save time zone'));
  const hotelForm = h(
    'form',
    { class: 'form form-inline', novalidate: true, 'aria-labelledby': 'hotel-settings' },
    timeZoneField(timeZone),
    h('div', { class: 'form-actions' }, saveZone),
  );
  const node = h(
    'section',
    { class: 'view view-staff' },
    pageHeading(t('Staff')),
    table,
    h('section', { class: 'panel', 'aria-labelledby': 'add-user' }, h('h2', { id: 'add-user' }, t('Add a user')), form),
    h('section', { class: 'panel', 'aria-labelledby': 'hotel-settings' }, h('h2', { id: 'hotel-settings' }, t('Hotel')), hotelForm),
  );
  return { node, table, form, submit, hotelForm, saveZone };
}

function userFields() {
  return [
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
  ];
}

function deactivateConfirm(u) {
  return {
    title: t('Deactivate {email}?', { email: u.email }),
    message: t('The user is logged out at once and can no longer log in. Their past actions stay in the activity log.'),
    confirmLabel: t('Deactivate user'),
    danger: true,
  };
}

const otherRole = (u) => (u.role === 'admin' ? 'receptionist' : 'admin');

function roleConfirm(u, role) {
  return role === 'admin'
    ? {
        title: t('Make {email} an admin?', { email: u.email }),
        message: t('From their next request, they can manage staff, keys, webhooks and the room list, and read the request log and the access trail.'),
        confirmLabel: t('Make admin'),
      }
    : {
        title: t('Make {email} a receptionist?', { email: u.email }),
        message: t('From their next request, the admin pages are closed to them; the board and the guests stay open.'),
        confirmLabel: t('Make receptionist'),
      };
}

/** The users' table; `me` gets no button; `on.changeRole(u, button)`, `on.deactivate(u, button)`, `on.endSessions(u, button)`. */
function userTable(users, me, on) {
  return h(
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
      h(
        'tbody',
        null,
        users.map((u) => userRow(u, u.id === me.id, on)),
      ),
    ),
  );
}

/** A button of a user's row that calls `handler(u, button)`. */
function rowButton(label, name, handler, u, kind = 'btn-danger') {
  const button = h('button', { type: 'button', class: ['btn', kind, 'btn-small'], 'data-action': name }, label);
  button.addEventListener('click', () => handler(u, button));
  return button;
}

function userRow(u, self, on) {
  const active = !u.deactivatedAt;
  let action = null;
  if (active && !self) {
    const roleButton = rowButton(u.role === 'admin' ? t('Make receptionist') : t('Make admin'), 'change-role', on.changeRole, u, null);
    action = [
      roleButton,
      ' ',
      rowButton(t('End sessions'), 'end-sessions', on.endSessions, u),
      ' ',
      rowButton(t('Deactivate'), 'deactivate', on.deactivate, u),
    ];
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
