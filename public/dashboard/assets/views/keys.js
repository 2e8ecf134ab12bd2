// #/keys (admin): issue, list, change and revoke PMS API key pairs (with the networks they
// may be used from, their last day and read-only), and each active pair's go-live
// checklist. A new pair's plain keys exist only in this view's memory: they are shown once
// and gone when the page is left.

import { api, enc } from '../api.js';
import { addDays, dateEl, h, pageHeading, replaceChildren, timeEl, uid } from '../dom.js';
import { act, field, showError } from '../ui.js';
import { t, tk } from '../i18n.js';
import { formatDate } from '../format.js';

/** Days before a pair's last day from which the page warns. */
const EXPIRY_WARNING_DAYS = 14;

/** The go-live checklist's items (the server's order), each with its definition. */
const CHECKLIST = {
  checkin: [tk('Check-in'), tk('A check-in answered 2xx.')],
  update: [tk('Update'), tk('An update answered 2xx.')],
  room_move: [tk('Room move'), tk('An update answered 2xx that moved the guest (with the test key: an update that carried a roomNumber).')],
  checkout: [tk('Check-out'), tk('A checkout answered 2xx.')],
  sync: [tk('Sync'), tk('A sync answered 2xx.')],
  idempotent_replay: [
    tk('Idempotent retry'),
    tk('A request sent again with its Idempotency-Key was answered from the idempotency store (Idempotent-Replayed: true).'),
  ],
  conflict_handled: [
    tk('Handling a 409'),
    tk(
      'After a 409 ROOM_OCCUPIED or GUEST_ALREADY_CHECKED_IN, the next request to that endpoint carried another body and was answered 2xx. With the test key, room number innsync-test-409 answers ROOM_OCCUPIED and pmsGuestId innsync-test-409 GUEST_ALREADY_CHECKED_IN.',
    ),
  ],
  retry_after_honoured: [tk('Honouring Retry-After'), tk('After a 429, the next request to that endpoint came no earlier than its Retry-After allowed.')],
};

export function keysView(ctx) {
  ctx.setTitle(t('API keys'));
  const store = keyStore(ctx.signal);
  const page = keysPage(ctx.session.hotel.slug);
  const { issueForm, fresh, editor } = page;

  async function load() {
    try {
      const keys = await store.load();
      replaceChildren(page.warnings, expiryWarnings(keys));
      replaceChildren(page.table, keyTable(keys, { revoke: actions.revoke, change: showEditor }));
      replaceChildren(page.checklists, (await store.checklists()).map(checklistPanel));
    } catch (err) {
      showError(err, t('Could not load the key pairs'));
    }
  }

  const dismiss = () => replaceChildren(fresh);
  const closeEditor = () => replaceChildren(editor);
  const actions = keyActions(store, {
    load,
    focusHeading: () => page.node.querySelector('h1')?.focus(),
    showPair(pair) {
      replaceChildren(fresh, newKeysPanel(pair, dismiss));
      fresh.querySelector('h2')?.focus();
    },
    closeEditor,
  });
  function showEditor(k) {
    replaceChildren(editor, changeForm(k, actions.change, closeEditor));
    editor.querySelector('h2')?.focus();
  }
  issueForm.addEventListener('submit', (e) => {
    e.preventDefault();
    actions.issue(issueForm);
  });

  load();
  // Leaving the page drops the panel (and the only copy of the plain keys) with the view.
  return { node: page.node, destroy: dismiss };
}

// ---------------------------------------------------------------------------
// Data: the key pairs (newest first) as last loaded, their checklists, the actions.

function keyStore(signal) {
  let keys = [];
  return {
    async load() {
      const data = await api.get('/keys', { signal });
      keys = [...(data.keys ?? [])].sort((a, b) => String(b.createdAt).localeCompare(String(a.createdAt)));
      return keys;
    },
    /** The checklist of each active pair of the last answer. */
    checklists: () => Promise.all(keys.filter((k) => !k.revokedAt).map((k) => api.get(`/keys/${enc(k.keyId)}/checklist`, { signal }))),
    issue: (restrictions) => api.post('/keys', restrictions),
    change: (k, restrictions) => api.patch(`/keys/${enc(k.keyId)}`, restrictions),
    revoke: (k) => api.post(`/keys/${enc(k.keyId)}/revoke`, {}),
  };
}

/** A restrictions form's values as the API takes them: networks split at commas, no date as null. */
function restrictionsOf(form) {
  const networks = form.elements.networks.value
    .split(/[\s,]+/)
    .map((n) => n.trim())
    .filter(Boolean);
  return { networks, expiresOn: form.elements.expiresOn.value || null, readOnly: form.elements.readOnly.checked };
}

/** Issue, change and revoke. `view`: load() the pairs again, focusHeading(), showPair(pair) (its plain keys, once), closeEditor(). */
function keyActions(store, view) {
  return {
    issue: (form) =>
      act({
        button: form.querySelector('[data-action="issue-key"]'),
        form,
        run: () => store.issue(restrictionsOf(form)),
        done: (pair) => t('Key pair {keyId} issued. Copy both keys now.', { keyId: pair.keyId }),
        after: (pair) => {
          form.reset();
          view.showPair(pair);
          view.load();
        },
        failed: t('Could not issue a key pair'),
      }),
    change: (k, form) =>
      act({
        button: form.querySelector('[type="submit"]'),
        form,
        run: () => store.change(k, restrictionsOf(form)),
        done: t('Key pair {keyId} changed.', { keyId: k.keyId }),
        after: async () => {
          view.closeEditor();
          await view.load();
        },
        failed: t('Could not change the key pair'),
      }),
    revoke: (k, button) =>
      act({
        button,
        confirm: revokeConfirm(k),
        run: () => store.revoke(k),
        done: t('Key pair {keyId} revoked.', { keyId: k.keyId }),
        after: async () => {
          await view.load();
          view.focusHeading();
        },
        failed: t('Could not revoke the key pair'),
      }),
  };
}

// ---------------------------------------------------------------------------
// Render: DOM from data; handlers come in as arguments.

/** The page and its slots: the issue form, the new pair's panel, expiry warnings, the change form, the table, the checklists. */
function keysPage(slug) {
  const issueForm = issueFormOf();
  const fresh = h('div', { class: 'new-keys-slot' });
  const warnings = h('div', { class: 'expiry-warnings' });
  const editor = h('div', { class: 'key-editor-slot' });
  const table = h('div', null, h('p', { class: 'loading' }, t('Loading…')));
  const checklists = h('div', { class: 'checklists' });
  const node = h(
    'section',
    { class: 'view view-keys' },
    h('div', { class: 'view-head' }, pageHeading(t('API keys'))),
    h(
      'p',
      { class: 'lead' },
      t('The PMS authenticates with a key pair: the live key changes the roster, the test key validates the same way and stores nothing.'),
    ),
    issueForm,
    fresh,
    warnings,
    connectPanel(slug),
    editor,
    table,
    checklists,
  );
  return { node, issueForm, fresh, warnings, editor, table, checklists };
}

/** The fields of what a pair may do, filled with `k`'s values (none for a new pair). */
function restrictionFields(k) {
  const readOnly = h('input', { type: 'checkbox', id: uid('f-readOnly'), name: 'readOnly', checked: k?.readOnly ? true : null });
  return [
    field({
      name: 'networks',
      label: t('Allowed networks'),
      hint: t('CIDR blocks separated by commas, e.g. 203.0.113.0/24, 2001:db8::/32. Empty: any address.'),
      value: k?.networks ? k.networks.join(', ') : '',
      attrs: { autocomplete: 'off', spellcheck: 'false' },
    }),
    field({
      name: 'expiresOn',
      label: t('Last day'),
      type: 'date',
      hint: t('The keys stop working after this day (UTC). Empty: until revoked.'),
      value: k?.expiresOn ?? '',
    }),
    h(
      'div',
      { class: 'field field-check', dataset: { field: 'readOnly' } },
      readOnly,
      h('label', { for: readOnly.id }, t('Read-only: the keys may only read the guest list')),
    ),
  ];
}

function issueFormOf() {
  const titleId = uid('issue');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary', 'data-action': 'issue-key' }, t('Issue key pair'));
  return h(
    'form',
    { class: 'panel issue-key', 'aria-labelledby': titleId, novalidate: true },
    h('h2', { id: titleId }, t('Issue a key pair')),
    restrictionFields(null),
    h('div', { class: 'form-actions' }, submit),
  );
}

/** The form that changes what pair `k` may do; `onSave(k, form)`, `onCancel()`. */
function changeForm(k, onSave, onCancel) {
  const titleId = uid('change');
  const cancel = h('button', { type: 'button', class: 'btn' }, t('Cancel'));
  cancel.addEventListener('click', onCancel);
  const form = h(
    'form',
    { class: 'panel change-key', 'aria-labelledby': titleId, novalidate: true, dataset: { keyId: k.keyId } },
    h('h2', { id: titleId, tabindex: '-1' }, t('Change key pair {keyId}', { keyId: k.keyId })),
    restrictionFields(k),
    h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'btn btn-primary' }, t('Save')), cancel),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    onSave(k, form);
  });
  return form;
}

/** One warning per active pair whose last day is within EXPIRY_WARNING_DAYS (UTC, as the server counts). */
function expiryWarnings(keys) {
  const today = new Date().toISOString().slice(0, 10);
  const limit = addDays(today, EXPIRY_WARNING_DAYS);
  return keys
    .filter((k) => !k.revokedAt && k.expiresOn && k.expiresOn >= today && k.expiresOn <= limit)
    .map((k) =>
      h(
        'p',
        { class: 'warning', dataset: { expiring: k.keyId } },
        t('Key pair {keyId} stops working after {date}. Issue a new pair and give its live key to the PMS before then.', {
          keyId: k.keyId,
          date: formatDate(k.expiresOn),
        }),
      ),
    );
}

function revokeConfirm(k) {
  return {
    title: t('Revoke key pair {keyId}?', { keyId: k.keyId }),
    message: t('Both keys of the pair, live and test, stop working at once. A PMS still using them gets 401 until it has a new key.'),
    confirmLabel: t('Revoke key pair'),
    danger: true,
  };
}

/** The key pairs' table (or the empty note); `on.revoke(k, button)`, `on.change(k)`. */
function keyTable(keys, on) {
  if (keys.length === 0) return h('p', { class: 'empty' }, t('No key pairs yet. Issue one to connect the PMS.'));
  const head = [tk('Key id'), tk('Created'), tk('Last used'), tk('Networks'), tk('Last day'), tk('Access'), tk('Status'), tk('Actions')].map((text) =>
    h('th', { scope: 'col' }, t(text)),
  );
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table table-keys' },
      h('caption', { class: 'visually-hidden' }, t('Key pairs')),
      h('thead', null, h('tr', null, head)),
      h(
        'tbody',
        null,
        keys.map((k) => keyRow(k, on)),
      ),
    ),
  );
}

/** The buttons of an active pair's row: change, revoke. */
function rowActions(k, on) {
  const change = h('button', { type: 'button', class: 'btn btn-small', 'data-action': 'change' }, t('Change'));
  change.addEventListener('click', () => on.change(k));
  const revoke = h('button', { type: 'button', class: 'btn btn-danger btn-small', 'data-action': 'revoke' }, t('Revoke'));
  revoke.addEventListener('click', () => on.revoke(k, revoke));
  return [change, ' ', revoke];
}

function keyRow(k, on) {
  const active = !k.revokedAt;
  return h(
    'tr',
    { dataset: { keyId: k.keyId, status: active ? 'active' : 'revoked' } },
    h('td', null, h('code', null, k.keyId)),
    h('td', null, timeEl(k.createdAt)),
    h('td', null, k.lastUsedAt ? timeEl(k.lastUsedAt) : t('never')),
    h('td', { dataset: { cell: 'networks' } }, k.networks ? k.networks.map((n) => h('code', { class: 'network' }, n)) : t('any')),
    h('td', { dataset: { cell: 'expires' } }, k.expiresOn ? dateEl(k.expiresOn) : t('never')),
    h('td', { dataset: { cell: 'access' } }, k.readOnly ? t('read-only') : t('read-write')),
    h(
      'td',
      null,
      active
        ? h('span', { class: 'status-pill status-active' }, t('active'))
        : [h('span', { class: 'status-pill status-revoked' }, t('revoked')), ' ', h('span', { class: 'muted' }, timeEl(k.revokedAt))],
    ),
    h('td', null, active ? rowActions(k, on) : null),
  );
}

/** Where the PMS sends its requests: this hotel's API root, a first request to try, and the reference. */
function connectPanel(slug) {
  const titleId = uid('connect');
  const baseUrl = `${location.origin}/api/pms/v1/${slug}`;
  const curl = `curl -H "Authorization: Bearer pms_test_…" ${baseUrl}/guests`;
  return h(
    'section',
    { class: 'panel connect', 'aria-labelledby': titleId },
    h('h2', { id: titleId }, t('Connect the PMS')),
    copyLine('base-url', t('API base URL'), baseUrl, { copyLabel: t('Copy the URL') }),
    copyLine('curl', t('First request'), curl, { copyLabel: t('Copy the command') }),
    h('p', { class: 'hint' }, t('Replace pms_test_… with the test key of a pair: the answer is the empty sandbox roster.')),
    h('p', null, h('a', { href: '/api/pms/v1/docs', target: '_blank', rel: 'noopener' }, t('API reference'))),
  );
}

/** One key pair's checklist: each behaviour, its definition, and what each key has shown. */
function checklistPanel(answer) {
  const titleId = uid('checklist');
  const head = [tk('Behaviour'), tk('Test key'), tk('Live key')].map((text) => h('th', { scope: 'col' }, t(text)));
  return h(
    'section',
    { class: 'panel checklist', 'aria-labelledby': titleId, dataset: { checklistOf: answer.keyId } },
    h('h2', { id: titleId }, t('Go-live checklist of key pair {keyId}', { keyId: answer.keyId })),
    h('p', { class: 'hint' }, t('What the PMS has shown with each key, read from its requests. Try each with the test key, then confirm it live.')),
    h(
      'div',
      { class: 'table-wrap' },
      h('table', { class: 'table table-checklist' }, h('thead', null, h('tr', null, head)), h('tbody', null, answer.items.map(checklistRow))),
    ),
  );
}

function checklistRow({ item, test, live }) {
  const [name, definition] = CHECKLIST[item] ?? [item, ''];
  return h(
    'tr',
    { dataset: { item } },
    h(
      'th',
      { scope: 'row' },
      h('span', { class: 'checklist-name' }, t(name)),
      definition ? h('span', { class: 'hint checklist-definition' }, t(definition)) : null,
    ),
    checklistCell('test', test),
    checklistCell('live', live),
  );
}

function checklistCell(mode, state) {
  if (!state.shown) return h('td', { dataset: { mode, shown: 'false' } }, dash(), t('not yet'));
  return h(
    'td',
    { dataset: { mode, shown: 'true' } },
    h('span', { class: 'checklist-done', 'aria-hidden': 'true' }, '✓ '),
    t('shown'),
    ' ',
    timeEl(state.shownAt),
  );
}

const dash = () => h('span', { 'aria-hidden': 'true' }, '— ');

function newKeysPanel(pair, dismiss) {
  const titleId = uid('new-keys');
  const done = h('button', { type: 'button', class: 'btn' }, t('I have stored both keys'));
  done.addEventListener('click', dismiss);
  return h(
    'section',
    { class: 'panel new-keys', 'aria-labelledby': titleId, dataset: { keyId: pair.keyId } },
    h('h2', { id: titleId, tabindex: '-1' }, t('New key pair {keyId}', { keyId: pair.keyId })),
    h(
      'p',
      { class: 'warning' },
      h('strong', null, t('Copy these keys now.')),
      ' ',
      t(
        'They will not be shown again: innsync stores only their hashes. Give the live key to the PMS; use the test key to try the integration without changing the roster.',
      ),
    ),
    copyLine('live', t('Live key'), pair.live, { secret: true, copyLabel: t('Copy the live key') }),
    copyLine('test', t('Test key'), pair.test, { secret: true, copyLabel: t('Copy the test key') }),
    h('div', { class: 'form-actions' }, done),
  );
}

/** A labelled value with a Copy button (data-copy=`kind`); a secret's <code> is data-key=`kind`. */
function copyLine(kind, label, value, { secret = false, copyLabel }) {
  const code = h('code', { id: uid(`copy-${kind}`), class: secret ? 'secret' : 'copy-value', dataset: secret ? { key: kind } : { value: kind } }, value);
  const copied = h('span', { class: 'copied', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', class: 'btn btn-small', dataset: { copy: kind } }, copyLabel);
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value);
      copied.textContent = t('Copied');
    } catch {
      // No clipboard permission: select the text so Ctrl+C / Cmd+C copies it.
      const range = document.createRange();
      range.selectNodeContents(code);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      copied.textContent = t('Selected: press Ctrl+C to copy');
    }
    setTimeout(() => {
      copied.textContent = '';
    }, 4000);
  });
  return h('div', { class: 'key-line' }, h('span', { class: 'key-label' }, label), code, h('span', { class: 'key-actions' }, copy, copied));
}
