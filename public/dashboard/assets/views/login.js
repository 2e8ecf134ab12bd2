// #/login: email and password. A 401 here means wrong credentials, not "session gone".

import { api } from '../api.js';
import { h, pageHeading } from '../dom.js';
import { field, busy, clearFieldErrors, showFormErrors, showAlert, clearAlert } from '../ui.js';

export function loginView(ctx) {
  ctx.setTitle('Log in');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Log in');
  const form = h(
    'form',
    { class: 'form narrow', novalidate: true, 'aria-labelledby': 'login-title' },
    field({ name: 'email', label: 'Email', type: 'email', required: true, attrs: { autocomplete: 'username' } }),
    field({ name: 'password', label: 'Password', type: 'password', required: true, attrs: { autocomplete: 'current-password' } }),
    h('div', { class: 'form-actions' }, submit),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearFieldErrors(form);
    clearAlert();
    const email = form.elements.namedItem('email').value.trim();
    const password = form.elements.namedItem('password').value;
    await busy(submit, async () => {
      try {
        const session = await api.post('/login', { email, password }, { authRedirect: false });
        ctx.onLoggedIn(session);
      } catch (err) {
        if (err.status === 429) {
          const minutes = err.retryAfter ? Math.ceil(err.retryAfter / 60) : null;
          showAlert(`Too many failed logins. ${minutes ? `Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` : 'Try again later.'}`);
        } else if (err.code === 'LOGIN_FAILED') {
          showAlert(err.message || 'Email or password is not correct.');
          form.elements.namedItem('password').value = '';
          form.elements.namedItem('password').focus();
        } else {
          showFormErrors(form, err, { prefix: 'Could not log in' });
        }
      }
    });
  });
  const heading = pageHeading('Log in');
  heading.id = 'login-title';
  return {
    node: h('section', { class: 'view view-login card' }, heading, h('p', { class: 'lead' }, 'Staff dashboard'), form),
    focus: () => form.elements.namedItem('email').focus(),
  };
}
