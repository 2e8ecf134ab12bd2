// #/login: email and password. A 401 here means wrong credentials, not "session gone".
// One e-mail may have accounts at several hotels (e-mails are unique per hotel): when the
// password opens more than one, the server answers 409 HOTEL_CHOICE_REQUIRED with those
// hotels, the form shows a choice, and the login is sent again with `hotel`.

import { api } from '../api.js';
import { h, pageHeading } from '../dom.js';
import { field, busy, clearFieldErrors, showFormErrors, showAlert, clearAlert, announce } from '../ui.js';
import { t } from '../i18n.js';

export function loginView(ctx) {
  ctx.setTitle(t('Log in'));
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
    actions,
  );

  /** The hotel choice, while one is shown: it belongs to the e-mail and password it was given for. */
  let choice = null;
  const dropChoice = () => {
    choice?.remove();
    choice = null;
  };
  const showChoice = (hotels) => {
    dropChoice();
    choice = field({
      name: 'hotel',
      label: t('Hotel'),
      required: true,
      hint: t('Your e-mail and password open accounts at several hotels: choose the one to log in to.'),
      options: hotels.map((hotel) => [hotel.slug, `${hotel.name} (${hotel.slug})`]),
    });
    form.insertBefore(choice, actions);
    const select = form.elements.namedItem('hotel');
    select.focus();
    announce(t('Choose the hotel to log in to, then log in again.'));
  };
  for (const name of ['email', 'password']) form.elements.namedItem(name).addEventListener('input', dropChoice);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearFieldErrors(form);
    clearAlert();
    const email = form.elements.namedItem('email').value.trim();
    const password = form.elements.namedItem('password').value;
    const hotel = choice ? form.elements.namedItem('hotel').value : undefined;
    const display = form.elements.namedItem('display').checked;
    await busy(submit, async () => {
      try {
        const body = { email, password, ...(hotel ? { hotel } : {}), ...(display ? { display } : {}) };
        const session = await api.post('/login', body, { authRedirect: false });
        ctx.onLoggedIn(session);
      } catch (err) {
        if (err.code === 'HOTEL_CHOICE_REQUIRED' && Array.isArray(err.body?.hotels) && err.body.hotels.length > 0) {
          showChoice(err.body.hotels);
        } else if (err.status === 429) {
          const minutes = err.retryAfter ? Math.ceil(err.retryAfter / 60) : null;
          showAlert(minutes ? t('Too many failed logins. Try again in {n} minutes.', { n: minutes }) : t('Too many failed logins. Try again later.'));
        } else if (err.code === 'LOGIN_FAILED') {
          dropChoice();
          showAlert(t('E-mail or password is wrong.'));
          form.elements.namedItem('password').value = '';
          form.elements.namedItem('password').focus();
        } else {
          showFormErrors(form, err, { prefix: t('Could not log in') });
        }
      }
    });
  });
  const heading = pageHeading(t('Log in'));
  heading.id = 'login-title';
  return {
    node: h('section', { class: 'view view-login card' }, heading, h('p', { class: 'lead' }, t('Staff dashboard')), form),
    focus: () => form.elements.namedItem('email').focus(),
  };
}
