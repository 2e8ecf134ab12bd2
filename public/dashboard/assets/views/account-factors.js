// The My account page's second factors (docs/dashboard.md, "Second factors"): set up an
// authenticator app (the password again, then its secret as a QR code and as text, then a
// first code), see how many recovery codes are left, make new ones, remove the app. A
// sign-in that must enrol (the hotel requires a second factor) sees this section beside
// "Add a passkey", and its session becomes full once the first code is confirmed.

import { api } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { act, field, showError } from '../ui.js';
import { t } from '../i18n.js';

// ---------------------------------------------------------------------------
// Data

function factorsStore(signal) {
  return {
    load: () => api.get('/account/factors', { signal }),
    start: (password) => api.post('/account/totp/start', { password }),
    // A wrong code is a 401 that leaves the session as it is (not "session gone"); a session that did end reloads the page to the login.
    confirm: (code) =>
      api.post('/account/totp/confirm', { code }, { authRedirect: false }).catch((err) => {
        if (err.code === 'NOT_AUTHENTICATED') location.reload();
        throw err;
      }),
    regenerate: (password) => api.post('/account/recovery-codes', { password }),
    remove: (password) => api.post('/account/totp/remove', { password }),
  };
}

// ---------------------------------------------------------------------------
// Render

const passwordField = () =>
  field({ name: 'password', label: t('Your password'), type: 'password', required: true, attrs: { autocomplete: 'current-password' } });

/** A form with its fields and buttons ([label, action, class]); `onSubmit(action, form, button)`. */
function factorForm(label, fields, buttons, onSubmit) {
  const made = buttons.map(([text, action, cls]) => h('button', { type: 'submit', class: `btn ${cls ?? ''}`, value: action }, text));
  const form = h('form', { class: 'form narrow', novalidate: true, 'aria-label': label }, fields, h('div', { class: 'form-actions' }, made));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const button = e.submitter && made.includes(e.submitter) ? e.submitter : made[0];
    onSubmit(button.value, form, button);
  });
  return form;
}

function statusLine(factors) {
  if (!factors.totp) return h('p', { 'data-factor': 'off' }, t('No authenticator app is set up: signing in takes your password only.'));
  return h(
    'p',
    { 'data-factor': 'on' },
    t('An authenticator app is set up: signing in asks for its code. Recovery codes left: {n}.', { n: factors.recoveryCodesLeft }),
  );
}

/** The secret to add to the app (QR code and text) and the form for its first code. */
function setupStep(started, onSubmit) {
  return h(
    'div',
    { class: 'totp-setup' },
    h('p', null, t('Scan this QR code with your authenticator app, or type the key below into it; then enter the code it shows.')),
    h('img', { class: 'totp-qr', src: started.qr, alt: t('QR code for your authenticator app'), width: '200', height: '200' }),
    h('p', null, t('Key'), ': ', h('code', { class: 'totp-secret' }, started.secret)),
    factorForm(
      t('Confirm the authenticator app'),
      field({ name: 'code', label: t('Code from the app'), required: true, attrs: { autocomplete: 'one-time-code', inputmode: 'numeric' } }),
      [[t('Confirm'), 'confirm', 'btn-primary']],
      onSubmit,
    ),
  );
}

/** Recovery codes, shown this once. */
function recoveryCodesNote(codes) {
  return h(
    'div',
    { class: 'recovery-codes', role: 'group', 'aria-label': t('Recovery codes') },
    h('p', null, t('Your recovery codes: keep them somewhere safe. Each works once in place of a code, and they are not shown again.')),
    h(
      'ol',
      { class: 'code-list' },
      codes.map((code) => h('li', null, h('code', null, code))),
    ),
  );
}

// ---------------------------------------------------------------------------
// The section

/**
 * Mounts the second-factor section of the My account page. `ctx.session.stage === 'enrol'`:
 * the hotel requires a factor; `ctx.onSession(session)` takes the full session the
 * enrolment gives. `requiredNotice: false`: the page says itself that the hotel requires one.
 */
export function accountFactorsSection(ctx, { requiredNotice = true } = {}) {
  const store = factorsStore(ctx.signal);
  const body = h('div', null, h('p', { class: 'loading' }, t('Loading…')));
  const extra = h('div');
  const node = h('section', { class: 'panel', 'aria-labelledby': 'factors-title' }, h('h2', { id: 'factors-title' }, t('Second factor')), body, extra);

  async function load() {
    try {
      render(await store.load());
    } catch (err) {
      showError(err, t('Could not load your second factors'));
    }
  }

  function render(factors) {
    const required =
      requiredNotice && factors.required && !factors.totp
        ? h('p', { class: 'notice warning' }, t('Your hotel requires a second factor: set up an authenticator app to continue.'))
        : null;
    const form = factors.totp
      ? factorForm(
          t('Change the second factor'),
          passwordField(),
          [
            [t('New recovery codes'), 'regenerate'],
            [t('Remove the authenticator app'), 'remove', 'btn-danger'],
          ],
          onChange,
        )
      : factorForm(t('Set up an authenticator app'), passwordField(), [[t('Set up an authenticator app'), 'start', 'btn-primary']], onChange);
    replaceChildren(body, required, statusLine(factors), form);
  }

  function onChange(action, form, button) {
    const password = form.elements.namedItem('password').value;
    if (action === 'start')
      return act({
        button,
        form,
        run: () => store.start(password),
        after: (started) => replaceChildren(extra, setupStep(started, onConfirm)),
        failed: t('Could not start the set-up'),
      });
    if (action === 'regenerate')
      return act({
        button,
        form,
        run: () => store.regenerate(password),
        done: t('New recovery codes made; the earlier ones no longer work.'),
        after: async (r) => {
          replaceChildren(extra, recoveryCodesNote(r.recoveryCodes));
          await load();
        },
        failed: t('Could not make new recovery codes'),
      });
    return act({
      button,
      form,
      confirm: {
        title: t('Remove the authenticator app?'),
        message: t('Signing in will then take your password only, and your recovery codes stop working.'),
        confirmLabel: t('Remove'),
        danger: true,
      },
      run: () => store.remove(password),
      done: t('Authenticator app removed.'),
      after: async () => {
        replaceChildren(extra);
        await load();
      },
      failed: t('Could not remove the authenticator app'),
    });
  }

  function onConfirm(_action, form, button) {
    const code = form.elements.namedItem('code').value.trim();
    return act({
      button,
      form,
      run: () => store.confirm(code),
      done: t('Authenticator app set up.'),
      after: async (r) => {
        ctx.onSession(r.session);
        replaceChildren(extra, recoveryCodesNote(r.recoveryCodes), h('p', null, h('a', { href: '#/board' }, t('Continue to the board'))));
        await load();
      },
      failed: t('Could not confirm the authenticator app'),
    });
  }

  load();
  return node;
}
