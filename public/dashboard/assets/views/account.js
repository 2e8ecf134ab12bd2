// #/account: My account, for every signed-in person (a front-desk display has none): their
// own sessions and their password (docs/dashboard.md, "My account"). Each section is a
// module of its own, mounted here.

import { h, pageHeading } from '../dom.js';
import { t } from '../i18n.js';
import { mountPasswordSection } from './account-password.js';
import { mountSessionsSection } from './account-sessions.js';

export function accountView(ctx) {
  ctx.setTitle(t('My account'));
  const sessions = mountSessionsSection(ctx);
  // A new password ends the other sessions: the list shows it.
  const password = mountPasswordSection(ctx, { changed: () => sessions.reload() });
  return { node: h('section', { class: 'view view-account' }, pageHeading(t('My account')), sessions.node, password.node) };
}
