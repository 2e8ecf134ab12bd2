// #/requests (admin): the PMS request log. Filters go to the server; a row opens the
// stored request and response in a modal panel. An answer replayed from the idempotency
// store is marked "replay" and links to its original request: #/requests/<id> shows the
// log with that request's row picked out (or, when the list does not hold it, its panel).

import { api, enc, query } from '../api.js';
import { h, pageHeading, replaceChildren, timeEl, localInputToIso, uid } from '../dom.js';
import { field, openPanel, showError, announce, busy } from '../ui.js';
import { currentLanguage, t, tk } from '../i18n.js';
import { formatDateTime, orEmpty, prettyJson } from '../format.js';
import { latestWins } from '../flow.js';

const PAGE = 50;

/** The log keeps seconds: requests a second apart are told apart. */
const SECONDS = { seconds: true };

const MODE_LABELS = { live: tk('live'), test: tk('test') };
const modeLabel = (mode) => (MODE_LABELS[mode] ? t(MODE_LABELS[mode]) : mode);

/** status-2xx … status-5xx; 429 gets its own class (rate limited, not a client bug). */
function statusClass(code) {
  if (code === 429) return 'status-429';
  if (code >= 500) return 'status-5xx';
  if (code >= 400) return 'status-4xx';
  if (code >= 300) return 'status-3xx';
  return 'status-2xx';
}

export function requestsView(ctx) {
  ctx.setTitle(t('Requests'));
  /** The request to pick out once the list is loaded (#/requests/<id>). */
  let target = ctx.params?.[0] ?? null;
  const store = requestStore(ctx.signal);
  const page = requestsPage();
  const { filters, refresh, more } = page;

  /** Loads the first page (or, `append`, the next one); true when the answer was shown. */
  async function load({ append = false } = {}) {
    try {
      if (!(await store.load({ ...readFilters(filters), limit: PAGE }, { append }))) return; // filters changed meanwhile
      renderRequests(page, store.state, openDetail);
      if (target) showTarget();
      return true;
    } catch (err) {
      showError(err, t('Could not load the request log'));
      return false;
    }
  }

  /** Picks out the target request's row, or opens its panel when the list does not hold it. */
  function showTarget() {
    const id = target;
    target = null;
    if (!pickOutRow(page.tbody, id)) openDetail({ id });
  }

  async function openDetail(r) {
    try {
      const request = await store.detail(r.id);
      openPanel({ title: `${request.method} ${request.path}`, content: detailContent(request), className: 'request-detail' });
    } catch (err) {
      showError(err, t('Could not load the request'));
    }
  }

  filters.addEventListener('change', () => load());
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    load();
  });
  refresh.addEventListener('click', () =>
    busy(refresh, async () => {
      if (await load()) announce(t('Request log refreshed.'));
    }),
  );
  more.addEventListener('click', () => busy(more, () => load({ append: true })));

  load();
  return { node: page.node };
}

// ---------------------------------------------------------------------------
// Data: the rows shown and the cursor of the next page. New filters supersede an answer
// still on its way (latestWins); "Load more" continues the same question.

function requestStore(signal) {
  const latest = latestWins();
  const state = { rows: [], next: null };
  return {
    state,
    /** Resolves false when newer filters superseded the answer. */
    async load(params, { append = false } = {}) {
      const isCurrent = append ? latest.askMore() : latest.ask();
      const data = await api.get(`/requests${query({ ...params, before: append ? state.next : null })}`, { signal });
      if (!isCurrent()) return false;
      const page = data.requests ?? [];
      state.rows = append ? [...state.rows, ...page] : page;
      state.next = data.next ?? null;
      return true;
    },
    /** One stored request, with its bodies. */
    detail: async (id) => (await api.get(`/requests/${enc(id)}`, { signal })).request,
  };
}

function readFilters(filters) {
  const v = (name) => filters.elements.namedItem(name).value;
  return {
    sender: v('sender'),
    status: v('status'),
    endpoint: v('endpoint'),
    mode: v('mode'),
    since: localInputToIso(v('since')),
    until: localInputToIso(v('until')),
  };
}

// ---------------------------------------------------------------------------
// Render: DOM from data; handlers come in as arguments.

/** The page and its parts: the filters, the Refresh button, the summary, the table's body, "Load more". */
function requestsPage() {
  const filters = requestFilters();
  const refresh = h('button', { type: 'button', class: 'btn', 'data-action': 'refresh' }, t('Refresh'));
  const tbody = h('tbody');
  const more = h('button', { type: 'button', class: 'btn', hidden: true, 'data-action': 'load-more' }, t('Load more'));
  const summary = h('p', { class: 'summary', 'aria-live': 'polite' }, t('Loading…'));
  const head = [tk('Time'), tk('Method'), tk('Path'), tk('Status'), tk('Mode'), tk('Duration (ms)'), tk('Idempotency key')].map((text) =>
    h('th', { scope: 'col' }, t(text)),
  );
  const node = h(
    'section',
    { class: 'view view-requests' },
    h('div', { class: 'view-head' }, pageHeading(t('Requests')), refresh),
    filters,
    summary,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'table table-requests' },
        h('caption', { class: 'visually-hidden' }, t('PMS API requests, newest first; open a row for its payload')),
        h('thead', null, h('tr', null, head)),
        tbody,
      ),
    ),
    h('div', { class: 'list-footer' }, more),
  );
  return { node, filters, refresh, tbody, more, summary };
}

function requestFilters() {
  const all = ['', t('All')];
  const same = (value) => [value, value];
  return h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': t('Filter requests') },
    // Requests no valid key sent are listed apart: their path and headers are anyone's text.
    field({
      name: 'sender',
      label: t('Sent with'),
      options: [
        ['key', t('A key of this hotel')],
        ['none', t('No valid key')],
      ],
    }),
    field({ name: 'status', label: t('Status'), options: [all, ...['2xx', '4xx', '429', '5xx'].map(same)] }),
    field({ name: 'endpoint', label: t('Endpoint'), options: [all, ...['checkin', 'update', 'checkout', 'list', 'sync'].map(same)] }),
    field({
      name: 'mode',
      label: t('Mode'),
      options: [all, ['live', modeLabel('live')], ['test', modeLabel('test')]],
    }),
    field({ name: 'since', label: t('Since'), type: 'datetime-local', attrs: { step: '1' } }),
    field({ name: 'until', label: t('Until'), type: 'datetime-local', attrs: { step: '1' } }),
  );
}

/** Shows the rows, the summary and "Load more"; `onOpen(r)` opens a row's detail. */
function renderRequests({ summary, tbody, more }, { rows, next }, onOpen) {
  const n = rows.length;
  summary.textContent =
    n === 0 ? t('No requests match these filters.') : next ? t('{n} requests shown; more available', { n }) : t('{n} requests shown', { n });
  replaceChildren(
    tbody,
    rows.map((r) => requestRow(r, onOpen)),
  );
  more.hidden = !next;
}

/** Picks out the row of request `id` (marked, scrolled to, focused); false when the list does not hold it. */
function pickOutRow(tbody, id) {
  const tr = [...tbody.rows].find((el) => el.dataset.requestId === id);
  if (!tr) return false;
  tr.classList.add('row-target');
  tr.setAttribute('aria-current', 'true');
  tr.scrollIntoView({ block: 'center' });
  tr.querySelector('[data-action="open-request"]')?.focus();
  return true;
}

function requestRow(r, onOpen) {
  const open = h('button', { type: 'button', class: 'link-button', 'data-action': 'open-request' }, formatDateTime(r.at, SECONDS));
  open.addEventListener('click', () => onOpen(r));
  const tr = h(
    'tr',
    {
      class: ['row-link', statusClass(r.statusCode), r.authenticated ? null : 'unauthenticated'],
      dataset: { status: r.statusCode, requestId: r.id, mode: r.mode, authenticated: String(r.authenticated), replayOf: r.replayOf },
    },
    h('td', null, open),
    h('td', null, r.method),
    h('td', { class: 'cell-path' }, r.path),
    h('td', null, h('span', { class: ['status-code', statusClass(r.statusCode)] }, String(r.statusCode)), replayMark(r)),
    h('td', null, r.mode ? h('span', { class: ['mode', `mode-${r.mode}`] }, modeLabel(r.mode)) : notAuthenticated(r)),
    h('td', { class: 'num' }, orEmpty(r.durationMs)),
    h('td', { class: 'cell-key' }, orEmpty(r.idempotencyKey)),
  );
  // The time button is the keyboard path; anywhere on the row works for the mouse.
  tr.addEventListener('click', (e) => {
    if (!e.target.closest('button, a')) onOpen(r);
  });
  return tr;
}

/** A replayed answer: the mark, and the link to the original request's row. */
function replayMark(r) {
  if (!r.replayOf) return null;
  return [
    ' ',
    h(
      'span',
      { class: 'replay-mark', title: t('Answered from the idempotency store: the stored answer of an earlier request with the same Idempotency-Key.') },
      t('replay'),
    ),
    ' ',
    h('a', { class: 'replay-of', href: `#/requests/${enc(r.replayOf)}`, dataset: { replayOf: r.replayOf } }, t('original request')),
  ];
}

/** The Mode cell of a request no valid key sent: says so, rather than leaving it empty. */
function notAuthenticated(r) {
  return r.authenticated ? orEmpty(null) : h('span', { class: ['mode', 'mode-none'] }, t('no valid key'));
}

/** A field the log keeps cut (path, user agent, idempotency key): its beginning and its full size. */
function cutField(value, bytes) {
  if (bytes === null || bytes === undefined) return orEmpty(value);
  return [value, ' ', h('span', { class: 'hint', dataset: { cut: String(bytes) } }, t('(cut: {size} in all)', { size: formatBytes(bytes) }))];
}

function detailContent(r) {
  const facts = [
    [t('Request id'), r.id],
    ...(r.replayOf ? [[t('Replay of'), r.replayOf]] : []),
    [t('Time'), timeEl(r.at, SECONDS)],
    [t('Status'), h('span', { class: ['status-code', statusClass(r.statusCode)] }, String(r.statusCode))],
    [t('Mode'), r.mode ? modeLabel(r.mode) : orEmpty(null)],
    [t('Key id'), orEmpty(r.keyId)],
    [t('Duration'), r.durationMs === null || r.durationMs === undefined ? orEmpty(null) : t('{ms} ms', { ms: r.durationMs })],
    [t('Idempotency key'), cutField(r.idempotencyKey, r.idempotencyKeyBytes)],
    [t('Client IP'), orEmpty(r.clientIp)],
    [t('User agent'), cutField(r.userAgent, r.userAgentBytes)],
  ];
  if (r.pathBytes !== null && r.pathBytes !== undefined) facts.push([t('Path'), cutField(r.path, r.pathBytes)]);
  return h(
    'div',
    { class: 'request-detail-body', dataset: { requestId: r.id, status: r.statusCode, authenticated: String(r.authenticated) } },
    r.authenticated
      ? null
      : h(
          'p',
          { class: 'hint payload-note', role: 'note', dataset: { note: 'unauthenticated' } },
          t("No valid key sent this request: its path, user agent and idempotency key are the sender's own text, not your PMS's."),
        ),
    h(
      'dl',
      { class: 'details' },
      facts.map(([label, value]) => h('div', { class: 'detail' }, h('dt', null, label), h('dd', null, value))),
    ),
    payload(t('Request body'), 'requestBody', r.requestBody, requestNote(r)),
    payload(t('Response body'), 'responseBody', r.responseBody, responseNote(r)),
  );
}

/** A stored body under its heading, with the note (if any) saying what of it was kept. */
function payload(title, name, body, note) {
  const noteId = note ? uid('payload-note') : null;
  return [
    h('h3', null, title),
    note ? h('p', { id: noteId, class: 'hint payload-note', role: 'note', dataset: { note: name } }, note) : null,
    h('pre', { class: 'payload', dataset: { field: name }, tabindex: '0', 'aria-describedby': noteId }, prettyJson(body)),
  ];
}

const CAP = 64 * 1024;

/** 812 bytes, 64 KiB, 7.4 MiB. */
function formatBytes(n) {
  if (n < 1024) return t('{n} bytes', { n });
  const number = (v, digits) => v.toLocaleString(currentLanguage(), { minimumFractionDigits: digits, maximumFractionDigits: digits });
  if (n < 1024 * 1024) return t('{size} KiB', { size: number(n / 1024, n % 1024 === 0 ? 0 : 1) });
  return t('{size} MiB', { size: number(n / (1024 * 1024), 1) });
}

/** Bodies of a request no key of the hotel was given for are not kept, only their sizes. */
function withheldNote(r, bytes) {
  if (r.bodyWithheld !== 'unattributed' || bytes === null || bytes === undefined) return null;
  return t('No body stored: the request was not attributed to a hotel ({size}).', { size: formatBytes(bytes) });
}

function cutNote(bytes, sha256) {
  return t('Cut: the first {shown} of {size} are shown; SHA-256 of the whole: {sha256}.', { shown: formatBytes(CAP), size: formatBytes(bytes), sha256 });
}

function requestNote(r) {
  const withheld = withheldNote(r, r.requestBytes);
  if (withheld) return withheld;
  if (r.requestCut) return cutNote(r.requestBytes, r.requestSha256);
  return null;
}

function responseNote(r) {
  const withheld = withheldNote(r, r.responseBytes);
  if (withheld) return withheld;
  if (r.responseDigest === 'count-and-ids') {
    return rosterDigestNote(r);
  }
  if (r.responseCut) return cutNote(r.responseBytes, r.responseSha256);
  return null;
}

/** A GET /guests answer is kept as its count and guest ids: says so, with its size and any cut. */
function rosterDigestNote(r) {
  const known = r.responseBytes !== null && r.responseBytes !== undefined;
  const params = { size: known ? formatBytes(r.responseBytes) : '', shown: formatBytes(CAP), sha256: r.responseSha256 };
  if (r.responseCut) {
    return known
      ? t(
          'Roster not stored: its count and guest ids (the answer was {size}); the list of ids is cut after the first {shown}, SHA-256 of the whole list: {sha256}.',
          params,
        )
      : t('Roster not stored: its count and guest ids; the list of ids is cut after the first {shown}, SHA-256 of the whole list: {sha256}.', params);
  }
  return known ? t('Roster not stored: its count and guest ids (the answer was {size}).', params) : t('Roster not stored: its count and guest ids.');
}
