// #/account: My account, for every signed-in person (a front-desk display has none): their
// own sessions, password and sign-in factors (docs/dashboard.md, "My account"). Each
// section is a module of its own that loads itself, mounted here. A sign-in that must enrol
// a second factor first sees only its two ways to one: the authenticator app's set-up and
// "Add a passkey" (a display, which holds no passkeys: the app only).

import { h, pageHeading } from '../dom.js';
import { t } from '../i18n.js';
import { accountFactorsSection } from './account-factors.js';
import { passkeysSection } from './account-passkeys.js';
import { mountPasswordSection } from './account-password.js';
import { mountSessionsSection } from './account-sessions.js';

export function accountView(ctx) {
  ctx.setTitle(t('My account'));
  const { user, hotel } = ctx.session;
  const heading = [pageHeading(t('My account')), h('p', { class: 'lead' }, t('{email} at {hotel}', { email: user.email, hotel: hotel.name }))];
  if (ctx.session.stage === 'enrol') return { node: h('section', { class: 'view view-account' }, ...heading, ...enrolment(ctx)) };
  const sessions = mountSessionsSection(ctx);
  // A new password ends the other sessions: the list shows it.
  const password = mountPasswordSection(ctx, { changed: () => sessions.reload() });
  return {
    node: h('section', { class: 'view view-account' }, ...heading, accountFactorsSection(ctx), passkeysSection(ctx).node, sessions.node, password.node),
  };
}

/** What a sign-in that must enrol sees: either way to a second factor, and that one is enough. */
function enrolment(ctx) {
  if (ctx.session.display) return [accountFactorsSection(ctx)];
  return [
    h(
      'p',
      { class: 'notice warning' },
      t('Your hotel requires a second factor: set up an authenticator app or add a passkey to continue. Either one is enough.'),
    ),
    accountFactorsSection(ctx, { requiredNotice: false }),
    passkeysSection(ctx).node,
  ];
}
