// #/account: the signed-in user's own account ("My account", linked from the header; not
// for a front-desk display). Each section is its own module that loads itself.

import { h, pageHeading } from '../dom.js';
import { t } from '../i18n.js';
import { passkeysSection } from './account-passkeys.js';

export function accountView(ctx) {
  ctx.setTitle(t('My account'));
  const { user, hotel } = ctx.session;
  return {
    node: h(
      'section',
      { class: 'view view-account' },
      pageHeading(t('My account')),
      h('p', { class: 'lead' }, t('{email} at {hotel}', { email: user.email, hotel: hotel.name })),
      passkeysSection(ctx).node,
    ),
  };
}
