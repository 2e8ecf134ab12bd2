// My account, "Passkeys" (docs/dashboard.md, "Passkeys"): add a passkey (the password
// entered again, then the browser's passkey dialog), name it, list and remove passkeys,
// and choose to sign in with passkeys only. The current password field serves every
// change; turning passkeys-only off needs a session signed in with a passkey instead.
// A sign-in that must enrol a second factor (docs/dashboard.md, "Second factors") gets
// the form only: the passkey it adds completes the enrolment, and the full session it
// gives goes on to the board.

import { api, enc } from '../api.js';
import { h, replaceChildren, timeEl } from '../dom.js';
import { act, field, showError } from '../ui.js';
import { t, tk } from '../i18n.js';
import { createPasskey } from '../webauthn.js';

/** The Passkeys section of My account: `{ node }`; it loads itself. */
export function passkeysSection(ctx) {
  const store = passkeyStore(ctx.signal);
  const enrolling = ctx.session.stage === 'enrol';
  const part = sectionParts(enrolling);
  const password = () => part.form.elements.namedItem('password').value;

  async function load() {
    try {
      const data = await store.load();
      replaceChildren(part.list, passkeyTable(data.passkeys, actions.remove));
      replaceChildren(part.only, passkeysOnlyPart(data, actions.setOnly));
    } catch (err) {
      showError(err, t('Could not load your passkeys'));
    }
  }

  // The new full session, as after the app's enrolment (a new CSRF token, the whole header), with the news.
  const enrolled = (added) => ctx.onLoggedIn(added.session, t('Passkey “{name}” added: your account has its second factor.', { name: added.passkey.name }));
  const actions = passkeyActions(store, part, { load, password, enrolled: enrolling ? enrolled : null });
  part.form.addEventListener('submit', (e) => {
    e.preventDefault();
    actions.add();
  });
  // An account that must enrol has no passkey yet, and the list is not open to its sign-in.
  if (!enrolling) load();
  return { node: part.node };
}

// ---------------------------------------------------------------------------
// Data

function passkeyStore(signal) {
  return {
    load: () => api.get('/account/passkeys', { signal }),
    async add(name, password) {
      const { options } = await api.post('/account/passkeys/options', { password });
      const credential = await createPasskey(options);
      return api.post('/account/passkeys', { name, credential });
    },
    remove: (p, password) => api.post(`/account/passkeys/${enc(p.id)}/remove`, { password }),
    setOnly: (on, password) => api.post('/account/passkeys-only', on ? { passkeysOnly: true, password } : { passkeysOnly: false }),
  };
}

// ---------------------------------------------------------------------------
// Actions

function passkeyActions(store, part, view) {
  const { form } = part;
  const clearPassword = () => {
    form.elements.namedItem('password').value = '';
  };
  return {
    add: () => {
      const name = form.elements.namedItem('name').value.trim();
      return act({
        button: part.submit,
        form,
        run: () => store.add(name, view.password()),
        done: view.enrolled ? null : (added) => t('Passkey “{name}” added. Your other sessions were signed out.', { name: added?.passkey?.name ?? name }),
        after:
          view.enrolled ??
          (async () => {
            clearPassword();
            form.elements.namedItem('name').value = t('Passkey');
            await view.load();
          }),
        failed: t('Could not add the passkey'),
      });
    },
    remove: (p, button) =>
      act({
        button,
        form,
        confirm: {
          title: t('Remove the passkey “{name}”?', { name: p.name }),
          message: t('It can no longer sign you in. Your other sessions are signed out.'),
          confirmLabel: t('Remove passkey'),
          danger: true,
        },
        run: () => store.remove(p, view.password()),
        done: t('Passkey “{name}” removed.', { name: p.name }),
        after: async () => {
          clearPassword();
          await view.load();
        },
        failed: t('Could not remove the passkey'),
      }),
    setOnly: (on, button) =>
      act({
        button,
        form,
        run: () => store.setOnly(on, view.password()),
        done: on ? t('You now sign in with passkeys only.') : t('You can sign in with your password again.'),
        after: async () => {
          clearPassword();
          await view.load();
        },
        failed: t('Could not change how you sign in'),
      }),
  };
}

// ---------------------------------------------------------------------------
// Render

/** The section's parts; `enrolling`: the form only, its password for adding a passkey. */
function sectionParts(enrolling) {
  const list = enrolling ? null : h('div', null, h('p', { class: 'loading' }, t('Loading…')));
  const only = enrolling ? null : h('div', { class: 'passkeys-only' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', 'data-action': 'add-passkey' }, t('Add a passkey'));
  const form = h(
    'form',
    { class: 'form form-inline', novalidate: true, 'aria-labelledby': 'passkeys-title' },
    h(
      'div',
      { class: 'field-grid' },
      field({
        name: 'password',
        label: t('Current password'),
        type: 'password',
        hint: enrolling ? t('Needed to add a passkey.') : t('Needed to add or remove a passkey, and to sign in with passkeys only.'),
        attrs: { autocomplete: 'current-password', maxlength: '200' },
      }),
      field({ name: 'name', label: t('Name of the new passkey'), value: t('Passkey'), required: true, attrs: { maxlength: '60' } }),
    ),
    h('div', { class: 'form-actions' }, submit),
  );
  const node = h(
    'section',
    { class: 'panel account-passkeys', 'aria-labelledby': 'passkeys-title' },
    h('h2', { id: 'passkeys-title' }, t('Passkeys')),
    h('p', { class: 'hint' }, t("A passkey signs you in with this device's screen lock, fingerprint or face, without your e-mail and password.")),
    list,
    form,
    only,
  );
  return { node, list, only, form, submit };
}

/** The passkeys' table, or a line saying there is none; `onRemove(passkey, button)`. */
function passkeyTable(passkeys, onRemove) {
  if (passkeys.length === 0) return h('p', { class: 'muted' }, t('You have no passkey yet.'));
  const row = (p) => {
    const remove = h('button', { type: 'button', class: 'btn btn-danger btn-small', 'data-action': 'remove-passkey' }, t('Remove'));
    remove.addEventListener('click', () => onRemove(p, remove));
    return h(
      'tr',
      { dataset: { passkeyId: p.id } },
      h('td', null, p.name),
      h('td', null, timeEl(p.createdAt)),
      h('td', null, p.lastUsedAt ? timeEl(p.lastUsedAt) : h('span', { class: 'muted' }, t('never'))),
      h('td', null, remove),
    );
  };
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table table-passkeys' },
      h('caption', { class: 'visually-hidden' }, t('Your passkeys')),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          [tk('Name'), tk('Added'), tk('Last used'), tk('Actions')].map((text) => h('th', { scope: 'col' }, t(text))),
        ),
      ),
      h('tbody', null, passkeys.map(row)),
    ),
  );
}

/** "Sign in with passkeys only": its state and the one button that changes it, when it can. */
function passkeysOnlyPart(data, onSet) {
  const button = (on, label) => {
    const b = h('button', { type: 'button', class: 'btn', 'data-action': on ? 'passkeys-only-on' : 'passkeys-only-off' }, label);
    b.addEventListener('click', () => onSet(on, b));
    return b;
  };
  if (data.passkeysOnly)
    return [
      h('p', { 'data-passkeys-only': 'on' }, t('You sign in with passkeys only: your password does not sign you in.')),
      data.signedInWithPasskey
        ? button(false, t('Allow signing in with the password again'))
        : h('p', { class: 'hint' }, t('To allow the password again, sign in with a passkey first.')),
    ];
  return [
    h('p', { 'data-passkeys-only': 'off' }, t('You can sign in with your password or a passkey.')),
    data.passkeys.length > 0 ? button(true, t('Sign in with passkeys only')) : null,
  ];
}
