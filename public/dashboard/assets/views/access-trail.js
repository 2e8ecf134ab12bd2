// #/access-trail (admin): who saw which guest's personal data, and the security events of
// the hotel's staff accounts and keys (docs/dashboard.md, "Access trail"). Two lists, each
// with its filters (sent to the server) and "Load more" (pages back with `next`).

import { api, query } from '../api.js';
import { h, pageHeading, replaceChildren, timeEl } from '../dom.js';
import { field, showError } from '../ui.js';
import { t, tk } from '../i18n.js';
import { latestWins } from '../flow.js';
import { EMPTY, roleLabel } from '../format.js';

const PAGE = 50;

/** What a staff member did with a guest's data, in words. */
const ACCESS_LABELS = {
  'guest.viewed': tk('Opened the guest'),
  'roster.viewed': tk('Saw the in-house list'),
  'guest.searched': tk('Searched'),
  'guest.exported': tk('Exported the data'),
  'guest.erased': tk('Erased the data'),
  'request_log.viewed': tk('Read a request-log body'),
};

/** Every kind of security event (src/db/repositories/security.repository.ts SECURITY_EVENT_KINDS). */
const SECURITY_LABELS = {
  'login.failed': tk('Failed sign-in'),
  'csrf.refused': tk('Request refused (CSRF)'),
  'password.changed': tk('Password changed'),
  'factor.added': tk('Second factor added'),
  'factor.removed': tk('Second factor removed'),
  'factors.reset': tk('Second factors reset'),
  'passkeys_only.on': tk('Sign-in with passkeys only turned on'),
  'passkeys_only.off': tk('Sign-in with passkeys only turned off'),
  'recovery_code.used': tk('Recovery code used'),
  'mfa.required': tk('Second factor required'),
  'mfa.not_required': tk('Second factor no longer required'),
  'session.ended': tk('Session ended'),
  'sessions.ended': tk('All sessions ended'),
  'display.paired': tk('Front-desk display paired'),
  'display.unpaired': tk('Front-desk display unpaired'),
  'staff.added': tk('Staff member added'),
  'staff.deactivated': tk('Staff member deactivated'),
  'staff.role_changed': tk('Staff role changed'),
  'key.issued': tk('Key pair issued'),
  'key.revoked': tk('Key pair revoked'),
  'key.changed': tk('Key pair changed'),
};

const label = (labels, name) => (labels[name] ? t(labels[name]) : name);

export function accessTrailView(ctx) {
  ctx.setTitle(t('Access trail'));
  const access = accessSection();
  const security = securitySection();
  const lists = [
    pagedList(ctx.signal, access, { path: '/access-trail', items: 'entries', render: accessItem, failed: t('Could not load the access trail') }),
    pagedList(ctx.signal, security, { path: '/security-events', items: 'events', render: securityItem, failed: t('Could not load the security events') }),
  ];
  loadStaffOptions(
    ctx.signal,
    [access, security].map((section) => section.filters.elements.namedItem('staff')),
  );
  const node = h('section', { class: 'view view-access-trail' }, pageHeading(t('Access trail')), access.node, security.node);
  return { node, destroy: () => lists.forEach((l) => l.stop()) };
}

// ---------------------------------------------------------------------------
// Data and wiring: one list's pages for its filters; a newer question supersedes an answer
// still on its way (latestWins).

function pagedList(signal, section, { path, items, render, failed }) {
  const latest = latestWins();
  const state = { rows: [], next: null };
  const params = () => ({ ...readFilters(section.filters), limit: PAGE });

  async function load(more) {
    const isCurrent = more ? latest.askMore() : latest.ask();
    try {
      const data = await api.get(`${path}${query(more ? { ...params(), before: state.next } : params())}`, { signal });
      if (!isCurrent()) return;
      state.rows = more ? [...state.rows, ...(data[items] ?? [])] : (data[items] ?? []);
      state.next = data.next ?? null;
      renderList(section, state, render);
    } catch (err) {
      showError(err, failed);
    }
  }

  const stop = watchFilters(section.filters, () => load(false));
  section.more.addEventListener('click', () => load(true));
  load(false);
  return { stop };
}

/** The filter form's values, blanks left out by query(). */
function readFilters(form) {
  return Object.fromEntries([...new FormData(form)].map(([name, value]) => [name, String(value).trim()]));
}

/** Runs `reload` on a filter's change; a text filter after a pause in typing. Returns the stop. */
function watchFilters(form, reload) {
  let typingTimer = null;
  form.addEventListener('change', () => reload());
  form.addEventListener('input', (e) => {
    if (e.target.type !== 'search') return;
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => reload(), 250);
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(typingTimer);
    reload();
  });
  return () => clearTimeout(typingTimer);
}

/** Each staff filter offers the hotel's staff members by e-mail. */
async function loadStaffOptions(signal, selects) {
  try {
    const { users } = await api.get('/users', { signal });
    for (const select of selects) select.append(...users.map((u) => h('option', { value: u.id }, u.email)));
  } catch (err) {
    showError(err, t('Could not load the staff list'));
  }
}

// ---------------------------------------------------------------------------
// Render: DOM from data.

function listSection({ heading, className, filters, listLabel }) {
  const titleId = `${className}-title`;
  const list = h('ol', { class: ['trail-list', className], 'aria-label': listLabel });
  const more = h('button', { type: 'button', class: 'btn', hidden: true, 'data-action': 'load-more' }, t('Load more'));
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' }, t('Loading…'));
  const node = h(
    'section',
    { class: 'trail-section', 'aria-labelledby': titleId },
    h('h2', { id: titleId }, heading),
    filters,
    summary,
    list,
    h('div', { class: 'list-footer' }, more),
  );
  return { node, filters, list, more, summary };
}

function accessSection() {
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': t('Filter the access trail') },
    field({ name: 'staff', label: t('Staff member'), options: [['', t('All')]] }),
    field({ name: 'guest', label: t('Guest'), type: 'search', hint: t('Guest id'), attrs: { autocomplete: 'off' } }),
    field({ name: 'day', label: t('Day'), type: 'date', hint: t("The hotel's day") }),
  );
  return listSection({ heading: t('Access to guest data'), className: 'access-list', filters, listLabel: t('Access entries') });
}

function securitySection() {
  const kinds = Object.keys(SECURITY_LABELS).map((kind) => [kind, label(SECURITY_LABELS, kind)]);
  const filters = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': t('Filter the security events') },
    field({ name: 'kind', label: t('Kind'), options: [['', t('All')], ...kinds] }),
    field({ name: 'staff', label: t('Staff member'), hint: t('The account concerned'), options: [['', t('All')]] }),
  );
  return listSection({ heading: t('Security events'), className: 'security-list', filters, listLabel: t('Security events') });
}

function renderList({ summary, list, more }, { rows, next }, render) {
  summary.textContent =
    rows.length === 0
      ? t('Nothing matches these filters.')
      : next
        ? t('{n} entries shown; more available', { n: rows.length })
        : t('{n} entries shown', { n: rows.length });
  replaceChildren(list, rows.map(render));
  more.hidden = !next;
}

/** What was seen: the guest's name as a link to its page, the search's text, or the whole roster. */
function accessWhat(e) {
  if (e.search !== null) return h('q', { class: 'trail-search' }, e.search);
  if (e.action === 'roster.viewed') return t('every guest in the house');
  if (!e.guestId) return EMPTY;
  return h('a', { href: `#/guest/${encodeURIComponent(e.guestId)}`, class: 'entry-guest' }, e.guestName ?? t('Anonymised guest'));
}

function accessItem(e) {
  return h(
    'li',
    { class: 'trail-entry', dataset: { entryId: e.id, action: e.action, staffId: e.staff.userId } },
    h('span', { class: 'trail-who' }, e.staff.email ?? e.staff.userId),
    ' · ',
    timeEl(e.at, { seconds: true }),
    ' · ',
    h('span', { class: 'trail-ip' }, e.clientIp ?? EMPTY),
    ' · ',
    h('span', { class: 'trail-action' }, label(ACCESS_LABELS, e.action)),
    ': ',
    accessWhat(e),
  );
}

const ACTORS = { operator: tk('Command line'), anonymous: tk('Unknown sender') };

/** What a role change changed: "Receptionist → Admin"; other kinds show no detail. */
function securityDetail(e) {
  if (e.kind !== 'staff.role_changed' || !e.detail) return null;
  return [' (', h('span', { class: 'trail-detail' }, `${roleLabel(e.detail.from)} → ${roleLabel(e.detail.to)}`), ')'];
}

function securityItem(e) {
  const subject = e.subject ? (e.subject.email ?? e.subject.userId) : e.keyPairId ? t('key {id}', { id: e.keyPairId }) : null;
  const actor = e.actor ? (e.actor.email ?? e.actor.userId) : t(ACTORS[e.actorType] ?? e.actorType);
  return h(
    'li',
    { class: 'trail-entry', dataset: { entryId: e.id, kind: e.kind } },
    h('span', { class: 'trail-action' }, label(SECURITY_LABELS, e.kind)),
    subject ? [': ', h('span', { class: 'trail-subject' }, subject)] : null,
    securityDetail(e),
    ' · ',
    timeEl(e.at, { seconds: true }),
    ' · ',
    h('span', { class: 'trail-who' }, t('by {actor}', { actor })),
    ' · ',
    h('span', { class: 'trail-ip' }, e.clientIp ?? EMPTY),
  );
}
