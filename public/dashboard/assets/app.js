// innsync staff dashboard: boot, session, hash router, header and live connection.
// Each page is a view module: render(ctx) → { node, onLive?(kind, data), destroy?(), focus?() }.

import { api, setCsrfRefresher, setCsrfToken, setUnauthorizedHandler } from './api.js';
import { h, replaceChildren, pageHeading } from './dom.js';
import { announce, clearAlert, clearStatus, showAlert, showError } from './ui.js';
import { createRoomList, createRoster, connectLive } from './live.js';
import { LANGUAGES, currentLanguage, preferredLanguage, setLanguage, t, tk } from './i18n.js';
import { loginView } from './views/login.js';
import { setupView } from './views/setup.js';
import { boardView } from './views/board.js';
import { listView } from './views/list.js';
import { guestView } from './views/guest.js';
import { walkinView } from './views/walkin.js';
import { activityView } from './views/activity.js';
import { keysView } from './views/keys.js';
import { requestsView } from './views/requests.js';
import { staffView } from './views/staff.js';
import { webhooksView } from './views/webhooks.js';
import { roomsView } from './views/rooms.js';
import { accessTrailView } from './views/access-trail.js';
import { accountView } from './views/account.js';

const ROUTES = [
  { pattern: /^\/login$/, view: loginView, public: true, login: true },
  { pattern: /^\/setup\/([^/]+)$/, view: setupView, public: true },
  { pattern: /^\/board$/, view: boardView, nav: '#/board' },
  { pattern: /^\/list$/, view: listView, nav: '#/list' },
  { pattern: /^\/guest\/([^/]+)$/, view: guestView },
  // A vacant room's tile opens the walk-in form for that room.
  { pattern: /^\/walk-in(?:\/([^/]+))?$/, view: walkinView, nav: '#/walk-in' },
  { pattern: /^\/activity$/, view: activityView, nav: '#/activity' },
  { pattern: /^\/keys$/, view: keysView, admin: true, nav: '#/keys' },
  { pattern: /^\/requests$/, view: requestsView, admin: true, nav: '#/requests' },
  // A request of the log, shown in it (a replay's link to its original).
  { pattern: /^\/requests\/([^/]+)$/, view: requestsView, admin: true, nav: '#/requests' },
  { pattern: /^\/staff$/, view: staffView, admin: true, nav: '#/staff' },
  { pattern: /^\/webhooks$/, view: webhooksView, admin: true, nav: '#/webhooks' },
  { pattern: /^\/rooms$/, view: roomsView, admin: true, nav: '#/rooms' },
  { pattern: /^\/access-trail$/, view: accessTrailView, admin: true, nav: '#/access-trail' },
  // The user's own account; a sign-in that must enrol a second factor sees only this page.
  { pattern: /^\/account$/, view: accountView, nav: '#/account' },
];

const NAV = [
  ['#/board', tk('Board')],
  ['#/list', tk('List')],
  ['#/walk-in', tk('Walk-in')],
  ['#/activity', tk('Activity')],
  ['#/keys', tk('Keys'), 'admin'],
  ['#/requests', tk('Requests'), 'admin'],
  ['#/staff', tk('Staff'), 'admin'],
  ['#/webhooks', tk('Webhooks'), 'admin'],
  ['#/rooms', tk('Rooms'), 'admin'],
  ['#/access-trail', tk('Access trail'), 'admin'],
];

const ROLES = { admin: tk('admin'), receptionist: tk('receptionist') };

const LIVE_TEXT = { connected: tk('Live'), connecting: tk('Connecting…'), reconnecting: tk('Reconnecting…'), offline: tk('Offline') };

const state = {
  session: null,
  live: null,
  liveState: 'offline',
  current: null, // the mounted view instance
  controller: null, // aborts the mounted view's requests when it is left
  returnTo: null, // where to go after logging in
  notice: null, // a message to show once the next page is mounted
  confirmation: null, // a status message for the next page (e.g. "Logged out." on the login page)
  mounted: false,
  pending: null, // a sign-in waiting for its second factor (the login page asks for the code)
  backTo: { hash: '#/board', label: 'Board' }, // the last list page shown: where a detail page's "←" leads
};

const roster = createRoster();
const roomList = createRoomList();

// ---------------------------------------------------------------------------
// Routing

function currentPath() {
  const path = location.hash.replace(/^#/, '');
  return path === '' || path === '/' ? '/board' : path;
}

function match(path) {
  for (const route of ROUTES) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    try {
      return { route, params: m.slice(1).map((p) => (p === undefined ? undefined : decodeURIComponent(p))) };
    } catch {
      return null; // malformed %-escape in a typed URL: treat as unknown
    }
  }
  return null;
}

/** Goes to a hash route; re-renders when it is already the current one. */
export function navigate(hash) {
  if (location.hash === hash) renderRoute();
  else location.hash = hash;
}

function renderRoute() {
  const path = currentPath();
  const found = match(path);
  if (!found) {
    location.replace('#/board');
    return;
  }
  const { route, params } = found;
  if (!route.public && !state.session) {
    state.returnTo = `#${path}`;
    navigate('#/login');
    return;
  }
  if (route.login && state.session) {
    navigate('#/board');
    return;
  }
  // A sign-in the hotel's rule sends to enrolment sees its account page only (docs/dashboard.md, "Second factors").
  if (state.session?.stage === 'enrol' && route.nav !== '#/account') {
    location.replace('#/account');
    return;
  }
  // A front-desk display shows the board and nothing else.
  if (state.session?.display && !state.session.stage && route.nav !== '#/board') {
    location.replace('#/board');
    return;
  }
  mount(route, params);
}

function mount(route, params) {
  unmount();
  clearAlert();
  clearStatus();
  const controller = new AbortController();
  state.controller = controller;
  const ctx = {
    session: state.session,
    isAdmin: state.session?.user?.role === 'admin' && !state.session?.display,
    readOnly: Boolean(state.session?.display),
    roster,
    rooms: roomList,
    params,
    signal: controller.signal,
    navigate,
    back: state.backTo,
    setTitle: (title) => {
      document.title = [title, state.session?.hotel?.name, 'innsync'].filter(Boolean).join(' · ');
    },
    onLoggedIn: loggedIn,
    pending: state.pending,
    // The enrolment made the session full: a new session (its CSRF token), the whole header.
    onSession: (session) => {
      startSession(session);
      renderHeader(route);
    },
  };
  ctx.setTitle('');
  const instance = route.admin && !ctx.isAdmin ? adminOnlyView(ctx) : route.view(ctx);
  state.current = instance;
  if (route.nav) state.backTo = { hash: route.nav, label: NAV.find(([hash]) => hash === route.nav)?.[1] ?? 'Board' };
  renderHeader(route);
  replaceChildren(document.getElementById('view'), instance.node);
  if (state.notice) {
    showAlert(state.notice);
    state.notice = null;
  }
  if (state.confirmation) {
    announce(state.confirmation);
    state.confirmation = null;
  }
  // Move focus to the new page (its heading, or the view's first input) so keyboard
  // and screen-reader users start there; on first load leave the browser's default.
  if (instance.focus) instance.focus();
  else if (state.mounted) instance.node.querySelector('h1')?.focus();
  if (state.mounted) window.scrollTo(0, 0);
  state.mounted = true;
}

function unmount() {
  state.controller?.abort();
  state.controller = null;
  try {
    state.current?.destroy?.();
  } finally {
    state.current = null;
  }
}

function adminOnlyView(ctx) {
  ctx.setTitle(t('Administrators only'));
  return {
    node: h(
      'section',
      { class: 'view' },
      pageHeading(t('Administrators only')),
      h('p', null, t('This page is for hotel administrators. Ask an administrator if you need something here.')),
      h('p', null, h('a', { href: '#/board' }, t('Back to the board'))),
    ),
  };
}

// ---------------------------------------------------------------------------
// Header

function renderHeader(route) {
  const header = document.getElementById('app-header');
  const skip = document.querySelector('.skip-link');
  if (skip) skip.textContent = t('Skip to content');
  const session = state.session;
  const brand = h(
    'div',
    { class: 'brand' },
    h('span', { class: 'app-name' }, 'innsync'),
    session ? h('span', { class: 'hotel-name', 'data-hotel': session.hotel?.slug }, session.hotel?.name ?? '') : null,
  );
  if (!session) {
    replaceChildren(header, h('div', { class: 'header-inner' }, brand, h('div', { class: 'user-box' }, languagePicker())));
    return;
  }
  const isAdmin = session.user?.role === 'admin';
  const shown = session.stage ? [] : session.display ? NAV.filter(([href]) => href === '#/board') : NAV.filter(([, , who]) => who !== 'admin' || isAdmin);
  const links = shown.map(([href, text]) => h('li', null, h('a', { href, 'aria-current': route.nav === href ? 'page' : null }, t(text))));
  const logout = h('button', { type: 'button', class: 'btn btn-quiet', 'data-action': 'logout' }, t('Log out'));
  logout.addEventListener('click', logOut);
  replaceChildren(
    header,
    h(
      'div',
      { class: 'header-inner' },
      brand,
      h('nav', { 'aria-label': t('Main') }, h('ul', { class: 'nav-list' }, links)),
      h(
        'div',
        { class: 'user-box' },
        session.stage ? null : liveIndicator(),
        languagePicker(),
        session.display
          ? null
          : h('a', { href: '#/account', class: 'account-link', 'aria-current': route.nav === '#/account' ? 'page' : null }, t('My account')),
        h(
          'span',
          { class: 'user' },
          session.display
            ? h('span', { class: 'role-badge', 'data-role': 'display' }, t('Front-desk display'))
            : [
                h('span', { class: 'user-email' }, session.user?.email ?? ''),
                ' ',
                h(
                  'span',
                  { class: 'role-badge', 'data-role': session.user?.role, title: session.user?.email },
                  t(ROLES[session.user?.role] ?? session.user?.role ?? ''),
                ),
              ],
        ),
        logout,
      ),
    ),
  );
}

/** The language switcher: the choice is kept in this browser and the page is drawn again in it. */
function languagePicker() {
  const select = h(
    'select',
    { id: 'language-picker', class: 'language-picker', 'aria-label': t('Language'), value: currentLanguage() },
    LANGUAGES.map(([code, name]) => h('option', { value: code, lang: code }, name)),
  );
  select.addEventListener('change', async () => {
    try {
      await setLanguage(select.value, { remember: true });
    } catch (err) {
      showError(err);
      return;
    }
    renderRoute();
    document.getElementById('language-picker')?.focus();
  });
  return select;
}

function liveIndicator() {
  return h(
    'span',
    { id: 'live-indicator', class: 'live', dataset: { live: state.liveState }, title: t('Live updates: {state}', { state: t(LIVE_TEXT[state.liveState]) }) },
    h('span', { class: 'live-dot', 'aria-hidden': 'true' }),
    h('span', { class: 'live-text' }, t(LIVE_TEXT[state.liveState])),
  );
}

function setLiveState(next) {
  state.liveState = next;
  const el = document.getElementById('live-indicator');
  if (el) el.replaceWith(liveIndicator());
}

// ---------------------------------------------------------------------------
// Session and live connection

function startSession(session) {
  state.session = session;
  state.pending = null;
  setCsrfToken(session.csrfToken);
  // A session still enrolling its second factor has no live board (the server refuses it).
  if (session.stage) {
    state.live?.close();
    state.live = null;
  } else startLive();
}

function endSession() {
  state.live?.close();
  state.live = null;
  state.session = null;
  state.pending = null;
  setCsrfToken(null);
  roster.reset();
  roomList.reset();
  state.liveState = 'offline';
}

function startLive() {
  state.live?.close();
  state.live = connectLive({
    onEvent(kind, data) {
      const ids = Array.isArray(data?.changes) ? data.changes.map((c) => c.guestId) : [];
      roster.refresh(ids, { live: true }).catch((err) => showError(err, t('Could not refresh the guest list')));
      // A reconnect, or "re-read" (sent after a change to the room list too): the room list again, once a view has used it.
      if (roomList.loaded && (kind === 'ready' || ids.length === 0))
        roomList.refresh({ live: true }).catch((err) => showError(err, t('Could not load the room list')));
      state.current?.onLive?.(kind, data);
    },
    onState: setLiveState,
    // The stream was refused: find out whether the session is still there (a 401
    // from this call sends the user to the login page through the handler).
    async onClosed() {
      if (!state.session) return false;
      try {
        await api.get('/session');
        return true;
      } catch (err) {
        return err.status !== 401;
      }
    },
  });
}

/**
 * After login or setup, or an enrolment completed by a passkey: start the session and go
 * where the user was heading; `confirmation` is announced on that page.
 */
function loggedIn(session, confirmation = null) {
  startSession(session);
  const wanted = state.returnTo && !/^#\/(login|setup)/.test(state.returnTo) ? state.returnTo : '#/board';
  const target = session.stage === 'enrol' ? '#/account' : wanted;
  state.returnTo = null;
  if (confirmation) state.confirmation = confirmation;
  navigate(target);
}

async function logOut() {
  try {
    await api.post('/logout', {});
  } catch (err) {
    // Already logged out on the server (401) is fine; anything else is worth saying,
    // but the browser side is logged out regardless.
    if (err.status !== 401) state.notice = t('The server did not confirm the logout: {message}', { message: err.message });
  }
  endSession();
  state.confirmation = t('Logged out.');
  navigate('#/login');
}

setUnauthorizedHandler(() => {
  if (!state.session) return;
  const here = location.hash;
  endSession();
  state.returnTo = here;
  state.notice = t('Your session has ended. Please log in again.');
  navigate('#/login');
});

// Another tab logged in again (new cookie, new token): take the new token if it is
// still the same user of the same hotel, otherwise start over with the new session.
setCsrfRefresher(async () => {
  if (!state.session) return null;
  try {
    const fresh = await api.get('/session');
    if (fresh.user?.id !== state.session.user?.id || fresh.hotel?.slug !== state.session.hotel?.slug) {
      location.reload();
      return null;
    }
    state.session.csrfToken = fresh.csrfToken;
    setCsrfToken(fresh.csrfToken);
    return fresh.csrfToken;
  } catch {
    return null;
  }
});

// ---------------------------------------------------------------------------
// Boot

async function boot() {
  try {
    await setLanguage(preferredLanguage());
  } catch {
    await setLanguage('en').catch(() => {}); // the texts' English keys still read well
  }
  // The skip link cannot use href="#main": that would be a route change.
  document.querySelector('.skip-link')?.addEventListener('click', (e) => {
    e.preventDefault();
    document.getElementById('main')?.focus();
  });
  window.addEventListener('hashchange', renderRoute);

  const found = match(currentPath());
  if (!found?.route.public || found.route.login) {
    try {
      const session = await api.get('/session', { authRedirect: false });
      // A sign-in still waiting for its second factor: the login page asks for the code.
      if (session.stage === 'second_factor') {
        state.pending = session;
        setCsrfToken(session.csrfToken);
      } else startSession(session);
    } catch (err) {
      if (err.status !== 401) state.notice = t('Could not check the session: {message}', { message: err.message });
    }
  }
  renderRoute();
}

boot();
