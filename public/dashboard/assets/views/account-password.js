// My account's password change (docs/dashboard.md, "My account"): the current password,
// the new one twice. The server checks the new one (length, not easy to guess) and ends
// the user's other sessions; its refusal shows next to the field, in the form's words.

import { api } from '../api.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { act, field, passwordLength, showFormErrors } from '../ui.js';

/** Mounts the section; `hooks.changed()` runs after a change. */
export function mountPasswordSection(ctx, hooks = {}) {
  const section = passwordSection();
  const { form } = section;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const value = (name) => form.elements.namedItem(name).value;
    // The repeat is the browser's own check; the server sees the new password once.
    if (value('newPassword') !== value('newPasswordConfirm')) {
      showFormErrors(form, { errors: [{ field: 'newPasswordConfirm', plain: true, message: t('The two passwords do not match.') }] });
      return;
    }
    act({
      button: section.submit,
      form,
      run: async () => {
        const answer = await api.post('/account/password', { currentPassword: value('currentPassword'), newPassword: value('newPassword') });
        form.reset();
        return answer;
      },
      done: t('Password changed. Your other sessions have ended.'),
      after: hooks.changed,
      failed: t('Could not change the password'),
    });
  });
  return { node: section.node };
}

function passwordSection() {
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Change password'));
  const newAttrs = { autocomplete: 'new-password', ...passwordLength };
  const form = h(
    'form',
    { class: 'form narrow', novalidate: true, 'aria-labelledby': 'account-password' },
    field({ name: 'currentPassword', label: t('Current password'), type: 'password', required: true, attrs: { autocomplete: 'current-password' } }),
    field({
      name: 'newPassword',
      label: t('New password'),
      type: 'password',
      required: true,
      hint: t("At least 10 characters, not a common password, not your e-mail or the hotel's name: three or four unrelated words make a strong one."),
      attrs: newAttrs,
    }),
    field({ name: 'newPasswordConfirm', label: t('New password again'), type: 'password', required: true, attrs: newAttrs }),
    h('div', { class: 'form-actions' }, submit),
  );
  const node = h('section', { class: 'panel', 'aria-labelledby': 'account-password' }, h('h2', { id: 'account-password' }, t('Change password')), form);
  return { node, form, submit };
}
