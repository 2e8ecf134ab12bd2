// The Staff page's second factors (docs/dashboard.md, "Second factors"), for admins: the
// hotel's rule that every sign-in needs one, a reset of a user's factors (a lost phone),
// and the front-desk displays (staff-displays.js).

import { api, enc } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { act, showError } from '../ui.js';
import { t } from '../i18n.js';
import { staffDisplaysPart } from './staff-displays.js';

// ---------------------------------------------------------------------------
// Data

function factorsStore(signal) {
  return {
    async load() {
      const [rule, users] = await Promise.all([api.get('/hotel/second-factor', { signal }), api.get('/users', { signal })]);
      const enrolled = new Set(rule.usersWithFactor);
      return { required: rule.required, users: (users.users ?? []).filter((u) => enrolled.has(u.id) && !u.deactivatedAt) };
    },
    setRequired: (required) => api.post('/hotel/second-factor', { required }),
    reset: (u) => api.post(`/users/${enc(u.id)}/reset-factors`, {}),
  };
}

// ---------------------------------------------------------------------------
// Render

function ruleForm(required, onSave) {
  const save = h('button', { type: 'submit', class: 'btn' }, t('Save'));
  const form = h(
    'form',
    { class: 'form', novalidate: true, 'aria-label': t('Second factor rule') },
    h(
      'div',
      { class: 'field field-check' },
      h('input', { type: 'checkbox', id: 'require-second-factor', name: 'required', checked: required || null, 'aria-describedby': 'require-hint' }),
      h('label', { for: 'require-second-factor' }, t('Require a second factor for every sign-in')),
      h('p', { id: 'require-hint', class: 'hint' }, t('A user without one sets up an authenticator app at their next sign-in before anything else.')),
    ),
    h('div', { class: 'form-actions' }, save),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    onSave(form.elements.namedItem('required').checked, save);
  });
  return form;
}

function enrolledList(users, onReset) {
  if (users.length === 0) return h('p', { class: 'muted' }, t('No user has a second factor yet.'));
  return h(
    'ul',
    { class: 'factor-users' },
    users.map((u) => {
      const reset = h('button', { type: 'button', class: 'btn btn-small btn-danger', 'data-action': 'reset-factors' }, t('Reset second factor'));
      reset.addEventListener('click', () => onReset(u, reset));
      return h('li', { dataset: { email: u.email } }, u.email, ' ', reset);
    }),
  );
}

// ---------------------------------------------------------------------------
// The section

export function staffFactorsSection(ctx) {
  const store = factorsStore(ctx.signal);
  const body = h('div', null, h('p', { class: 'loading' }, t('Loading…')));
  const node = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'second-factors' },
    h('h2', { id: 'second-factors' }, t('Second factors')),
    body,
    staffDisplaysPart(ctx),
  );

  async function load() {
    try {
      const data = await store.load();
      replaceChildren(body, ruleForm(data.required, saveRule), enrolledList(data.users, reset));
    } catch (err) {
      showError(err, t('Could not load the second factors'));
    }
  }

  const saveRule = (required, button) =>
    act({
      button,
      run: () => store.setRequired(required),
      done: required ? t('A second factor is now required at sign-in.') : t('A second factor is no longer required at sign-in.'),
      failed: t('Could not save the rule'),
    });

  const reset = (u, button) =>
    act({
      button,
      confirm: {
        title: t('Reset the second factor of {email}?', { email: u.email }),
        message: t('Their authenticator app and recovery codes stop working and they are logged out.'),
        confirmLabel: t('Reset second factor'),
        danger: true,
      },
      run: () => store.reset(u),
      done: t('Second factor of {email} reset.', { email: u.email }),
      after: load,
      failed: t('Could not reset the second factor'),
    });

  load();
  return node;
}
