// #/webhooks (admin): the hotel's webhook endpoints (events out to its other systems),
// their recent deliveries, "Send again" and "Send a test event". A new or rotated signing
// secret exists only in this view's memory: it is shown once.

import { api, enc } from '../api.js';
import { EMPTY, h, pageHeading, replaceChildren, timeEl, uid } from '../dom.js';
import { announce, busy, clearAlert, clearFieldErrors, confirmDialog, field, setFieldError, showError, showFormErrors } from '../ui.js';

const TYPE_LABELS = {
  'guest.checked_in': 'Check-in',
  'guest.updated': 'Guest updated',
  'guest.room_moved': 'Room move',
  'guest.checked_out': 'Check-out',
  'sync.completed': 'Sync completed',
  'guest.erased': 'Personal data erased',
  'webhook.test': 'Test event',
};

export function webhooksView(ctx) {
  ctx.setTitle('Webhooks');
  const fresh = h('div', { class: 'new-secret-slot' });
  const listSlot = h('div', null, h('p', { class: 'loading' }, 'Loading…'));
  const typesSlot = h('fieldset', { class: 'fieldset event-types' }, h('legend', null, 'Events (none ticked: all)'));
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Add endpoint');
  const form = h(
    'form',
    { class: 'form', novalidate: true, 'aria-labelledby': 'add-endpoint' },
    field({
      name: 'url',
      label: 'URL',
      type: 'url',
      required: true,
      hint: 'https:// on the public internet, e.g. https://locks.example.com/innsync',
      attrs: { autocomplete: 'off' },
    }),
    typesSlot,
    h('div', { class: 'form-actions' }, submit),
  );
  const node = h(
    'section',
    { class: 'view view-webhooks' },
    pageHeading('Webhooks'),
    h(
      'p',
      { class: 'lead' },
      "innsync tells the hotel's other systems (door locks, Wi-Fi, messaging, housekeeping) about every roster change, signed per the Standard Webhooks specification, in order, retried for 3 days.",
    ),
    fresh,
    listSlot,
    h('section', { class: 'panel', 'aria-labelledby': 'add-endpoint' }, h('h2', { id: 'add-endpoint' }, 'Add an endpoint'), form),
  );

  async function load() {
    try {
      const data = await api.get('/webhooks', { signal: ctx.signal });
      if (typesSlot.querySelectorAll('input').length === 0) renderTypes(data.eventTypes ?? []);
      replaceChildren(listSlot, ...(data.endpoints.length === 0 ? [h('p', { class: 'empty' }, 'No endpoints yet.')] : data.endpoints.map(endpointPanel)));
      for (const e of data.endpoints) loadDeliveries(e.endpointId);
    } catch (err) {
      showError(err, 'Could not load the webhook endpoints');
    }
  }

  function renderTypes(types) {
    for (const t of types) {
      const id = uid('type');
      typesSlot.append(
        h('div', { class: 'check' }, h('input', { type: 'checkbox', id, name: 'events', value: t }), h('label', { for: id }, `${TYPE_LABELS[t] ?? t} (${t})`)),
      );
    }
  }

  function endpointPanel(e) {
    const titleId = uid('endpoint');
    const actions = [
      action('Send a test event', 'test', () => sendTest(e)),
      action('Rotate secret', 'rotate', () => rotate(e)),
      e.enabled ? action('Disable', 'disable', () => toggle(e, false)) : action('Enable', 'enable', () => toggle(e, true)),
      action('Remove', 'remove', () => remove(e), 'btn-danger'),
    ];
    return h(
      'section',
      { class: 'panel endpoint', 'aria-labelledby': titleId, dataset: { endpointId: e.endpointId, status: e.enabled ? 'enabled' : 'disabled' } },
      h('h2', { id: titleId }, h('code', null, e.url)),
      h(
        'p',
        null,
        h('span', { class: ['status-pill', e.enabled ? 'status-active' : 'status-revoked'] }, e.enabled ? 'enabled' : 'disabled'),
        ' Events: ',
        e.events === 'all' ? 'all' : e.events.map((t) => TYPE_LABELS[t] ?? t).join(', '),
        e.previousSecretUntil ? [' · The previous secret also signs until ', timeEl(e.previousSecretUntil), '.'] : null,
      ),
      e.disabledReason ? h('p', { class: 'warning', role: 'note' }, e.disabledReason) : null,
      h('div', { class: 'form-actions' }, actions),
      h('h3', null, 'Recent deliveries'),
      h('div', { class: 'deliveries', dataset: { deliveriesOf: e.endpointId } }, h('p', { class: 'loading' }, 'Loading…')),
    );
  }

  function action(label, name, run, extra = '') {
    const b = h('button', { type: 'button', class: `btn btn-small ${extra}`, dataset: { action: name } }, label);
    b.addEventListener('click', () => busy(b, run));
    return b;
  }

  async function loadDeliveries(endpointId) {
    const slot = listSlot.querySelector(`[data-deliveries-of="${CSS.escape(endpointId)}"]`);
    if (!slot) return;
    try {
      const { deliveries } = await api.get(`/webhooks/${enc(endpointId)}/deliveries`, { signal: ctx.signal });
      if (deliveries.length === 0) return replaceChildren(slot, h('p', { class: 'empty' }, 'No deliveries yet.'));
      const head = ['Event', 'Time', 'Attempts', 'Last answer', 'Latency', 'Response', ''].map((t) => h('th', { scope: 'col' }, t));
      replaceChildren(
        slot,
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'table table-deliveries' },
            h('thead', null, h('tr', null, head)),
            h(
              'tbody',
              null,
              deliveries.map((d) => deliveryRow(endpointId, d)),
            ),
          ),
        ),
      );
    } catch (err) {
      showError(err, 'Could not load the deliveries');
    }
  }

  function deliveryRow(endpointId, d) {
    const answer = d.lastStatus !== null ? `HTTP ${d.lastStatus}` : (d.lastError ?? (d.status === 'pending' ? 'waiting' : EMPTY));
    const state = d.status === 'succeeded' ? 'delivered' : d.status === 'failed' ? 'given up' : d.attempts > 0 ? 'retrying' : 'queued';
    const again = action('Send again', 'resend', async () => {
      await api.post(`/webhooks/${enc(endpointId)}/deliveries/${enc(d.id)}/resend`, {});
      announce(`${TYPE_LABELS[d.eventType] ?? d.eventType} queued again.`);
      await loadDeliveries(endpointId);
    });
    return h(
      'tr',
      { dataset: { deliveryId: d.id, status: d.status } },
      h('td', null, TYPE_LABELS[d.eventType] ?? d.eventType),
      h('td', null, timeEl(d.createdAt)),
      h('td', null, String(d.attempts)),
      h('td', null, `${answer} (${state})`),
      h('td', null, d.lastLatencyMs === null ? EMPTY : `${d.lastLatencyMs} ms`),
      h('td', null, d.lastResponse ? h('details', null, h('summary', null, 'Show'), h('pre', null, d.lastResponse)) : EMPTY),
      h('td', null, again),
    );
  }

  async function sendTest(e) {
    clearAlert();
    try {
      await api.post(`/webhooks/${enc(e.endpointId)}/test`, {});
      announce('Test event sent.');
      setTimeout(() => loadDeliveries(e.endpointId), 1000);
    } catch (err) {
      showError(err, 'Could not send a test event');
    }
  }

  async function rotate(e) {
    const ok = await confirmDialog({
      title: 'Rotate the signing secret?',
      message: 'A new secret is shown once. For 24 hours deliveries are signed with both, so the receiver can switch without losing one.',
      confirmLabel: 'Rotate secret',
    });
    if (!ok) return;
    try {
      const { endpoint } = await api.post(`/webhooks/${enc(e.endpointId)}/rotate-secret`, {});
      showSecret(endpoint, 'New signing secret');
      await load();
    } catch (err) {
      showError(err, 'Could not rotate the secret');
    }
  }

  async function toggle(e, enabled) {
    try {
      await api.post(`/webhooks/${enc(e.endpointId)}/${enabled ? 'enable' : 'disable'}`, {});
      announce(enabled ? 'Endpoint enabled: its waiting events are sent now.' : 'Endpoint disabled.');
      await load();
    } catch (err) {
      showError(err, 'Could not change the endpoint');
    }
  }

  async function remove(e) {
    const ok = await confirmDialog({
      title: `Remove ${e.url}?`,
      message: 'It receives no more events; its delivery history is deleted with it.',
      confirmLabel: 'Remove endpoint',
      danger: true,
    });
    if (!ok) return;
    try {
      await api.post(`/webhooks/${enc(e.endpointId)}/remove`, {});
      announce('Endpoint removed.');
      await load();
    } catch (err) {
      showError(err, 'Could not remove the endpoint');
    }
  }

  function showSecret(endpoint, title) {
    const titleId = uid('secret');
    const done = h('button', { type: 'button', class: 'btn' }, 'I have stored the secret');
    done.addEventListener('click', () => replaceChildren(fresh));
    replaceChildren(
      fresh,
      h(
        'section',
        { class: 'panel new-keys', 'aria-labelledby': titleId },
        h('h2', { id: titleId, tabindex: '-1' }, title),
        h('p', { class: 'warning' }, h('strong', null, 'Copy this secret now. '), 'It will not be shown again. The receiver verifies every delivery with it.'),
        h('code', { class: 'secret', dataset: { secret: 'signing' } }, endpoint.secret),
        h('div', { class: 'form-actions' }, done),
      ),
    );
    fresh.querySelector('h2')?.focus();
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearFieldErrors(form);
    clearAlert();
    const url = form.elements.namedItem('url').value.trim();
    const events = [...form.querySelectorAll('input[name="events"]:checked')].map((c) => c.value);
    if (!url) {
      const control = form.elements.namedItem('url');
      setFieldError(control, 'URL is required.');
      control.focus();
      return;
    }
    await busy(submit, async () => {
      try {
        const { endpoint } = await api.post('/webhooks', events.length > 0 ? { url, events } : { url });
        form.reset();
        showSecret(endpoint, 'Endpoint added: its signing secret');
        announce('Endpoint added. Copy its signing secret now.');
        await load();
      } catch (err) {
        showFormErrors(form, err, { prefix: 'Could not add the endpoint' });
      }
    });
  });

  load();
  return { node, destroy: () => replaceChildren(fresh) };
}
