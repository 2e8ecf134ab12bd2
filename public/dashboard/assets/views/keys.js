// #/keys (admin): issue, list and revoke PMS API key pairs. A new pair's plain keys
// exist only in this view's memory: they are shown once and gone when the page is left.

import { api, enc } from '../api.js';
import { h, pageHeading, replaceChildren, timeEl, uid } from '../dom.js';
import { announce, busy, clearAlert, confirmDialog, showError } from '../ui.js';

export function keysView(ctx) {
  ctx.setTitle('API keys');
  const issue = h('button', { type: 'button', class: 'btn btn-primary', 'data-action': 'issue-key' }, 'Issue key pair');
  const fresh = h('div', { class: 'new-keys-slot' });
  const tableSlot = h('div', null, h('p', { class: 'loading' }, 'Loading…'));
  const node = h(
    'section',
    { class: 'view view-keys' },
    h('div', { class: 'view-head' }, pageHeading('API keys'), issue),
    h(
      'p',
      { class: 'lead' },
      'The PMS authenticates with a key pair: the live key changes the roster, the test key validates the same way and stores nothing.',
    ),
    fresh,
    tableSlot,
  );

  async function loadKeys() {
    try {
      const data = await api.get('/keys', { signal: ctx.signal });
      renderTable(data.keys ?? []);
    } catch (err) {
      showError(err, 'Could not load the key pairs');
    }
  }

  function renderTable(keys) {
    const sorted = [...keys].sort((a, b) => String(b.createdAt).localeCompare(String(a.createdAt)));
    if (sorted.length === 0) {
      replaceChildren(tableSlot, h('p', { class: 'empty' }, 'No key pairs yet. Issue one to connect the PMS.'));
      return;
    }
    replaceChildren(
      tableSlot,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table table-keys' },
          h('caption', { class: 'visually-hidden' }, 'Key pairs'),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Key id', 'Created', 'Last used', 'Status', 'Actions'].map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          h('tbody', null, sorted.map(keyRow)),
        ),
      ),
    );
  }

  function keyRow(k) {
    const active = !k.revokedAt;
    let action = null;
    if (active) {
      action = h('button', { type: 'button', class: 'btn btn-danger btn-small', 'data-action': 'revoke' }, 'Revoke');
      action.addEventListener('click', () => revoke(k, action));
    }
    return h(
      'tr',
      { dataset: { keyId: k.keyId, status: active ? 'active' : 'revoked' } },
      h('td', null, h('code', null, k.keyId)),
      h('td', null, timeEl(k.createdAt)),
      h('td', null, k.lastUsedAt ? timeEl(k.lastUsedAt) : 'never'),
      h(
        'td',
        null,
        active
          ? h('span', { class: 'status-pill status-active' }, 'active')
          : [h('span', { class: 'status-pill status-revoked' }, 'revoked'), ' ', h('span', { class: 'muted' }, timeEl(k.revokedAt))],
      ),
      h('td', null, action),
    );
  }

  async function revoke(k, button) {
    clearAlert();
    const ok = await confirmDialog({
      title: `Revoke key pair ${k.keyId}?`,
      message: 'Both keys of the pair, live and test, stop working at once. A PMS still using them gets 401 until it has a new key.',
      confirmLabel: 'Revoke key pair',
      danger: true,
    });
    if (!ok) return;
    await busy(button, async () => {
      try {
        await api.post(`/keys/${enc(k.keyId)}/revoke`, {});
        announce(`Key pair ${k.keyId} revoked.`);
        await loadKeys();
        node.querySelector('h1')?.focus();
      } catch (err) {
        showError(err, 'Could not revoke the key pair');
      }
    });
  }

  issue.addEventListener('click', () =>
    busy(issue, async () => {
      clearAlert();
      try {
        const pair = await api.post('/keys', {});
        replaceChildren(
          fresh,
          newKeysPanel(pair, () => replaceChildren(fresh)),
        );
        fresh.querySelector('h2')?.focus();
        announce(`Key pair ${pair.keyId} issued. Copy both keys now.`);
        loadKeys();
      } catch (err) {
        showError(err, 'Could not issue a key pair');
      }
    }),
  );

  loadKeys();
  // Leaving the page drops the panel (and the only copy of the plain keys) with the view.
  return { node, destroy: () => replaceChildren(fresh) };
}

function newKeysPanel(pair, dismiss) {
  const titleId = uid('new-keys');
  const done = h('button', { type: 'button', class: 'btn' }, 'I have stored both keys');
  done.addEventListener('click', dismiss);
  return h(
    'section',
    { class: 'panel new-keys', 'aria-labelledby': titleId, dataset: { keyId: pair.keyId } },
    h('h2', { id: titleId, tabindex: '-1' }, `New key pair ${pair.keyId}`),
    h(
      'p',
      { class: 'warning' },
      h('strong', null, 'Copy these keys now. '),
      'They will not be shown again: innsync stores only their hashes. Give the live key to the PMS; use the test key to try the integration without changing the roster.',
    ),
    keyLine('live', 'Live key', pair.live),
    keyLine('test', 'Test key', pair.test),
    h('div', { class: 'form-actions' }, done),
  );
}

function keyLine(kind, label, value) {
  const codeId = uid(`key-${kind}`);
  const code = h('code', { id: codeId, class: 'secret', dataset: { key: kind } }, value);
  const copied = h('span', { class: 'copied', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', class: 'btn btn-small', dataset: { copy: kind } }, `Copy ${label.toLowerCase()}`);
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(value);
      copied.textContent = 'Copied';
    } catch {
      // No clipboard permission: select the key so Ctrl+C / Cmd+C copies it.
      const range = document.createRange();
      range.selectNodeContents(code);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      copied.textContent = 'Selected: press Ctrl+C to copy';
    }
    setTimeout(() => {
      copied.textContent = '';
    }, 4000);
  });
  return h('div', { class: 'key-line' }, h('span', { class: 'key-label' }, label), code, h('span', { class: 'key-actions' }, copy, copied));
}
