// #/login: email and password. A 401 here means wrong credentials, not "session gone".
// One e-mail may have accounts at several hotels (e-mails are unique per hotel): when the
// password opens more than one, the server answers 409 HOTEL_CHOICE_REQUIRED with those
// hotels, the form shows a choice, and the login is sent again with `hotel`.
// "Sign in with a passkey" needs neither e-mail nor password: the passkey names its
// account and hotel (docs/dashboard.md, "Passkeys").
// An account with a second factor (docs/dashboard.md, "Second factors"): the password's
// answer is a session waiting for it (`stage: "second_factor"`), and the page asks for the
// code of the authenticator app or a recovery code, or a passkey when the account has one
// (the passkey button stays below and signs in on its own). A display's first sign-in on
// a screen an admin paired takes the pairing code.

import { api, setCsrfToken } from '../api.js';
import { h, pageHeading } from '../dom.js';
import { act, field, showAlert, announce } from '../ui.js';
import { t } from '../i18n.js';
import { getPasskey } from '../webauthn.js';

/** The login form: e-mail, password, the front-desk display choice, and the submit button. */
function loginForm() {
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Log in'));
  const actions = h('div', { class: 'form-actions' }, submit);
  const form = h(
    'form',
    { class: 'form narrow', novalidate: true, 'aria-labelledby': 'login-title' },
    field({ name: 'email', label: t('Email'), type: 'email', required: true, attrs: { autocomplete: 'username' } }),
    field({ name: 'password', label: t('Password'), type: 'password', required: true, attrs: { autocomplete: 'current-password' } }),
    h(
      'div',
      { class: 'field field-check' },
      h('input', { type: 'checkbox', id: 'login-display', name: 'display', 'aria-describedby': 'login-display-hint' }),
      h('label', { for: 'login-display' }, t('Front-desk display')),
      h(
        'p',
        { id: 'login-display-hint', class: 'hint' },
        t('For a shared screen: shows the board only, read-only, and stays signed in for the shift (12 hours).'),
      ),
    ),
    pairingField(),
    actions,
  );
  return { form, submit, actions };
}

/** A display's pairing code, shown while "Front-desk display" is ticked. */
function pairingField() {
  const node = field({
    name: 'pairingCode',
    label: t('Pairing code'),
    hint: t("Only on a screen's first sign-in: the code an admin's Pair a display showed. Later sign-ins on this screen need no code."),
    attrs: { autocomplete: 'off' },
  });
  node.hidden = true;
  return node;
}

/** The form asking for the second factor, after the password was right. */
function codeForm() {
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Continue'));
  const form = h(
    'form',
    { class: 'form narrow', novalidate: true, 'aria-labelledby': 'login-title', 'data-step': 'second-factor' },
    field({
      name: 'code',
      label: t('Code'),
      required: true,
      hint: t(
        'The six-digit code of your authenticator app, or one of your recovery codes. If your account has a passkey, you may sign in with it below instead.',
      ),
      attrs: { autocomplete: 'one-time-code' },
    }),
    h('div', { class: 'form-actions' }, submit),
  );
  return { form, submit };
}

/** The choice of hotel, when the e-mail and password open accounts at several. */
function hotelChoice(hotels) {
  return field({
    name: 'hotel',
    label: t('Hotel'),
    required: true,
    hint: t('Your e-mail and password open accounts at several hotels: choose the one to log in to.'),
    options: hotels.map((hotel) => [hotel.slug, `${hotel.name} (${hotel.slug})`]),
  });
}

/** The login's body from the form: the hotel only while a choice is shown, `display` only when ticked. */
function loginBody(form, withHotel) {
  const value = (name) => form.elements.namedItem(name).value;
  const hotel = withHotel ? value('hotel') : undefined;
  const display = form.elements.namedItem('display').checked;
  const pairingCode = display ? value('pairingCode').trim() : '';
  return {
    email: value('email').trim(),
    password: value('password'),
    ...(hotel ? { hotel } : {}),
    ...(display ? { display } : {}),
    ...(pairingCode ? { pairingCode } : {}),
  };
}

/** A refusal the login page words itself: a hotel to choose, too many tries, a wrong password; null for the rest. */
function loginRefusal(err) {
  if (err.code === 'HOTEL_CHOICE_REQUIRED' && Array.isArray(err.body?.hotels) && err.body.hotels.length > 0) return { kind: 'choice', hotels: err.body.hotels };
  if (err.status === 429) return { kind: 'throttled', minutes: err.retryAfter ? Math.ceil(err.retryAfter / 60) : null };
  if (err.code === 'LOGIN_FAILED' || err.code === 'SECOND_FACTOR_INVALID') return { kind: 'wrong', message: err.message };
  return null;
}

/** The hotel choice, while one is shown before the form's buttons: it belongs to the e-mail and password it was given for. */
function choiceSlot(form, actions) {
  let choice = null;
  const drop = () => {
    choice?.remove();
    choice = null;
  };
  const show = (hotels) => {
    drop();
    choice = hotelChoice(hotels);
    form.insertBefore(choice, actions);
    form.elements.namedItem('hotel').focus();
    announce(t('Choose the hotel to log in to, then log in again.'));
  };
  return { show, drop, shown: () => choice !== null };
}

/** The passkey sign-in button: asks the server for a challenge, the browser for a passkey, and signs in with its answer. */
function passkeyButton(ctx, form) {
  const button = h('button', { type: 'button', class: 'btn', 'data-action': 'passkey-login' }, t('Sign in with a passkey'));
  button.addEventListener('click', () => {
    const display = form.elements.namedItem('display').checked;
    const open = { authRedirect: false };
    return act({
      button,
      failed: t('Could not sign in with a passkey'),
      run: async () => {
        const { options } = await api.post('/passkey-login/options', {}, open);
        const credential = await getPasskey(options);
        return api.post('/passkey-login', { credential, ...(display ? { display } : {}) }, open);
      },
      after: (session) => session && ctx.onLoggedIn(session),
    });
  });
  return h('div', { class: 'form-actions passkey-login' }, button);
}

export function loginView(ctx) {
  ctx.setTitle(t('Log in'));
  const { form, submit, actions } = loginForm();
  const password = () => form.elements.namedItem('password');

  const choice = choiceSlot(form, actions);
  const displayBox = form.elements.namedItem('display');
  displayBox.addEventListener('change', () => {
    form.querySelector('[data-field="pairingCode"]').hidden = !displayBox.checked;
  });
  const secondStep = secondFactorStep(ctx, {
    show: () => secondStep.form.parentNode || form.replaceWith(secondStep.form),
    // The waiting sign-in ended (15 minutes): the password again.
    back: () => {
      secondStep.form.replaceWith(form);
      password().value = '';
      showAlert(t('Your session has ended. Please log in again.'));
      password().focus();
    },
    refused,
  });

  for (const name of ['email', 'password']) form.elements.namedItem(name).addEventListener('input', choice.drop);

  /** Shows a refusal this page words itself; false for one the form shows (field errors, the server's words). */
  function refused(err) {
    const refusal = loginRefusal(err);
    if (refusal?.kind === 'choice') choice.show(refusal.hotels);
    else if (refusal?.kind === 'throttled')
      showAlert(
        refusal.minutes ? t('Too many failed logins. Try again in {n} minutes.', { n: refusal.minutes }) : t('Too many failed logins. Try again later.'),
      );
    else if (refusal?.kind === 'wrong') {
      choice.drop();
      showAlert(err.code === 'LOGIN_FAILED' ? t('E-mail or password is wrong.') : refusal.message);
      const retry = form.parentNode ? password() : secondStep.input();
      retry.value = '';
      retry.focus();
    }
    return refusal !== null;
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const body = loginBody(form, choice.shown());
    return act({
      button: submit,
      form,
      failed: t('Could not log in'),
      run: () =>
        api.post('/login', body, { authRedirect: false }).catch((err) => {
          if (refused(err)) return null;
          throw err;
        }),
      after: (session) => {
        if (session?.stage === 'second_factor') secondStep.show(session);
        else if (session) ctx.onLoggedIn(session);
      },
    });
  });
  const heading = pageHeading(t('Log in'));
  heading.id = 'login-title';
  const node = h('section', { class: 'view view-login card' }, heading, h('p', { class: 'lead' }, t('Staff dashboard')), form, passkeyButton(ctx, form));
  // A reload while the sign-in waits for its second factor: the code step again.
  if (ctx.pending) secondStep.show(ctx.pending);
  return { node, focus: () => (form.parentNode ? form.elements.namedItem('email') : secondStep.input()).focus() };
}

/**
 * The second step of a sign-in: `show(session)` puts the code form in the password form's
 * place (the pending session's token signs its request); a right code gives the full session,
 * an ended sign-in goes `back` to the password.
 */
function secondFactorStep(ctx, { show, back, refused }) {
  const { form, submit } = codeForm();
  const input = () => form.elements.namedItem('code');
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const code = input().value.trim();
    return act({
      button: submit,
      form,
      failed: t('Could not log in'),
      run: () =>
        api.post('/login/second-factor', { code }, { authRedirect: false }).catch((err) => {
          if (err.code === 'NOT_AUTHENTICATED') back();
          else if (!refused(err)) throw err;
          return null;
        }),
      after: (session) => session && ctx.onLoggedIn(session),
    });
  });
  return {
    form,
    input,
    show(session) {
      setCsrfToken(session.csrfToken);
      show();
      announce(t('Enter the code of your authenticator app or a recovery code, or sign in with your passkey below if your account has one.'));
      input().focus();
    },
  };
}
