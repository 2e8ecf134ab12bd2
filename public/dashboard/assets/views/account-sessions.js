// My account's sessions (docs/dashboard.md, "My account"): where the user is signed in,
// this session marked; any other ends with its button, or all others at once.

import { api, enc } from '../api.js';
import { h, replaceChildren, timeEl } from '../dom.js';
import { EMPTY } from '../format.js';
import { t, tk } from '../i18n.js';
import { act, showError } from '../ui.js';

/** Mounts the section; `reload()` reads the sessions again. */
export function mountSessionsSection(ctx) {
  const store = sessionsStore(ctx.signal);
  const section = sessionsSection();
  async function reload() {
    try {
      const sessions = await store.load();
      replaceChildren(section.list, sessionTable(sessions, actions.end));
      section.endOthers.hidden = !sessions.some((s) => !s.current);
    } catch (err) {
      showError(err, t('Could not load your sessions'));
    }
  }
  const actions = {
    end: (s, button) => act({ button, run: () => store.end(s.id), done: t('Session ended.'), after: reload, failed: t('Could not end the session') }),
    endOthers: () =>
      act({
        button: section.endOthers,
        run: () => store.endOthers(),
        done: t('Your other sessions have ended.'),
        after: reload,
        failed: t('Could not end the other sessions'),
      }),
  };
  section.endOthers.addEventListener('click', () => actions.endOthers());
  reload();
  return { node: section.node, reload };
}

// ---------------------------------------------------------------------------
// Data

function sessionsStore(signal) {
  return {
    load: async () => (await api.get('/account/sessions', { signal })).sessions ?? [],
    end: (id) => api.post(`/account/sessions/${enc(id)}/end`, {}),
    endOthers: () => api.post('/account/sessions/end-others', {}),
  };
}

// ---------------------------------------------------------------------------
// Render

function sessionsSection() {
  const list = h('div', null, h('p', { class: 'loading' }, t('Loading…')));
  const endOthers = h('button', { type: 'button', class: 'btn btn-danger', 'data-action': 'end-other-sessions', hidden: true }, t('End all other sessions'));
  const node = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'account-sessions' },
    h('h2', { id: 'account-sessions' }, t('Your sessions')),
    list,
    h('div', { class: 'form-actions' }, endOthers),
  );
  return { node, list, endOthers };
}

/** "Chrome 120 · Linux", or "Unknown device". */
function deviceText(s) {
  const parts = [s.browser, s.system].filter(Boolean);
  return parts.length > 0 ? parts.join(' · ') : t('Unknown device');
}

function sessionTable(sessions, onEnd) {
  const headings = [tk('Device'), tk('IP address'), tk('Started'), tk('Last seen'), tk('Actions')];
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table table-sessions' },
      h('caption', { class: 'visually-hidden' }, t('Your sessions')),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          headings.map((text) => h('th', { scope: 'col' }, t(text))),
        ),
      ),
      h(
        'tbody',
        null,
        sessions.map((s) => sessionRow(s, onEnd)),
      ),
    ),
  );
}

function sessionRow(s, onEnd) {
  let action = h('span', { class: 'status-pill status-active' }, t('This session'));
  if (!s.current) {
    action = h('button', { type: 'button', class: 'btn btn-danger btn-small', 'data-action': 'end-session' }, t('End this session'));
    action.addEventListener('click', () => onEnd(s, action));
  }
  return h(
    'tr',
    { dataset: { sessionId: s.id, current: String(s.current), display: String(s.display) } },
    h('td', null, deviceText(s), s.display ? [' ', h('span', { class: 'role-badge', dataset: { role: 'display' } }, t('Front-desk display'))] : null),
    h('td', null, s.ip ?? EMPTY),
    h('td', null, timeEl(s.createdAt)),
    h('td', null, timeEl(s.lastSeenAt)),
    h('td', null, action),
  );
}
