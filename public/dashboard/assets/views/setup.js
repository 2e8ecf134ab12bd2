// #/setup/<token>: first run. Creates the hotel and its administrator, then logs in.

import { api, enc } from '../api.js';
import { h, pageHeading, replaceChildren } from '../dom.js';
import { timeZoneField } from '../time-zones.js';
import { act, field, passwordLength, showError } from '../ui.js';
import { t } from '../i18n.js';

export function setupView(ctx) {
  ctx.setTitle(t('Set up innsync'));
  const [token] = ctx.params;
  const body = h('div', null, h('p', { class: 'loading' }, t('Checking the setup link…')));
  const node = h('section', { class: 'view view-setup card' }, pageHeading(t('Set up your hotel')), body);

  api
    .get(`/setup/${enc(token)}`, { signal: ctx.signal, authRedirect: false })
    .then(() => {
      const form = setupForm(ctx, token);
      replaceChildren(body, h('p', { class: 'lead' }, t('Create the hotel and its first administrator account.')), form);
      form.elements.namedItem('hotelSlug').focus();
    })
    .catch((err) => {
      if (err.name === 'AbortError') return;
      if (err.status === 404) {
        replaceChildren(
          body,
          h('p', { class: 'warning' }, err.message || t('This setup link does not work.')),
          h('p', null, h('a', { href: '#/login' }, t('Go to the login page'))),
        );
      } else {
        replaceChildren(body);
        showError(err, t('Could not check the setup link'));
      }
    });
  return { node };
}

function setupForm(ctx, token) {
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Create hotel'));
  const form = h(
    'form',
    { class: 'form narrow', novalidate: true },
    field({
      name: 'hotelSlug',
      label: t('Hotel slug'),
      required: true,
      hint: t('Short id used in the PMS API path, e.g. grand-hotel'),
      attrs: { autocomplete: 'off', spellcheck: 'false' },
    }),
    field({ name: 'hotelName', label: t('Hotel name'), required: true, attrs: { autocomplete: 'organization' } }),
    timeZoneField(),
    field({ name: 'email', label: t('Admin email'), type: 'email', required: true, attrs: { autocomplete: 'username' } }),
    field({ name: 'password', label: t('Password'), type: 'password', required: true, attrs: { autocomplete: 'new-password', ...passwordLength } }),
    field({
      name: 'passwordConfirm',
      label: t('Password again'),
      type: 'password',
      required: true,
      attrs: { autocomplete: 'new-password', ...passwordLength },
    }),
    h('div', { class: 'form-actions' }, submit),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const value = (name) => form.elements.namedItem(name).value;
    // The server checks the second entry with every other rule, so all problems show at once.
    const body = {
      token,
      hotelSlug: value('hotelSlug').trim(),
      hotelName: value('hotelName').trim(),
      email: value('email').trim(),
      password: value('password'),
      passwordConfirm: value('passwordConfirm'),
      timeZone: value('timeZone'),
    };
    void act({
      button: submit,
      form,
      run: () => api.post('/setup', body, { authRedirect: false }),
      after: (session) => ctx.onLoggedIn(session),
      failed: t('Could not create the hotel'),
    });
  });
  return form;
}
