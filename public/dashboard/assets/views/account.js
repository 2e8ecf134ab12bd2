// #/account: the signed-in user's own account. Each section is a module of its own.

import { h, pageHeading } from '../dom.js';
import { t } from '../i18n.js';
import { accountFactorsSection } from './account-factors.js';

export function accountView(ctx) {
  ctx.setTitle(t('My account'));
  return { node: h('section', { class: 'view view-account' }, pageHeading(t('My account')), accountFactorsSection(ctx)) };
}
