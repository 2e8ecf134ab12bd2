// #/webhooks (admin): the hotel's webhook endpoints (events out to its other systems),
// their recent deliveries, "Send again" and "Send a test event". A new or rotated signing
// secret exists only in this view's memory: it is shown once.

import { api, enc } from '../api.js';
import { h, pageHeading, replaceChildren, timeEl, uid } from '../dom.js';
import { announce, busy, clearAlert, clearFieldErrors, confirmDialog, field, showError, showFormErrors } from '../ui.js';
import { t, tk } from '../i18n.js';
import { EMPTY, formatDateTime, formatList } from '../format.js';
import { eventLabel } from '../event-names.js';

const STATE_LABELS = { delivered: tk('delivered'), failed: tk('given up'), retrying: tk('retrying'), queued: tk('queued') };

export function webhooksView(ctx) {
  ctx.setTitle(t('Webhooks'));
  const fresh = h('div', { class: 'new-secret-slot' });
  const listSlot = h('div', null, h('p', { class: 'loading' }, t('Loading…')));
  const typesSlot = h('fieldset', { class: 'fieldset event-types' }, h('legend', null, t('Events (none ticked: all)')));
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Add endpoint'));
  const form = h(
    'form',
    { class: 'form', novalidate: true, 'aria-labelledby': 'add-endpoint' },
    field({
      name: 'url',
      label: t('URL'),
      type: 'url',
      required: true,
      hint: t('https:// on the public internet, e.g. https://locks.example.com/innsync'),
      attrs: { autocomplete: 'off' },
    }),
    typesSlot,
    h('div', { class: 'form-actions' }, submit),
  );
  const node = h(
    'section',
    { class: 'view view-webhooks' },
    pageHeading(t('Webhooks')),
    h(
      'p',
      { class: 'lead' },
      t(
        "innsync tells the hotel's other systems (door locks, Wi-Fi, messaging, housekeeping) about every roster change, signed per the Standard Webhooks specification, in order, retried for 3 days.",
      ),
    ),
    fresh,
    listSlot,
    h('section', { class: 'panel', 'aria-labelledby': 'add-endpoint' }, h('h2', { id: 'add-endpoint' }, t('Add an endpoint')), form),
  );

  async function load() {
    try {
      const data = await api.get('/webhooks', { signal: ctx.signal });
      if (typesSlot.querySelectorAll('input').length === 0) renderTypes(data.eventTypes ?? []);
      replaceChildren(listSlot, ...(data.endpoints.length === 0 ? [h('p', { class: 'empty' }, t('No endpoints yet.'))] : data.endpoints.map(endpointPanel)));
      for (const e of data.endpoints) loadDeliveries(e.endpointId);
    } catch (err) {
      showError(err, t('Could not load the webhook endpoints'));
    }
  }

  function renderTypes(types) {
    for (const type of types) {
      const id = uid('type');
      typesSlot.append(
        h(
          'div',
          { class: 'check' },
          h('input', { type: 'checkbox', id, name: 'events', value: type }),
          h('label', { for: id }, `${eventLabel(type)} (${type})`),
        ),
      );
    }
  }

  function endpointPanel(e) {
    const titleId = uid('endpoint');
    const actions = [
      action(t('Send a test event'), 'test', () => sendTest(e)),
      action(t('Rotate secret'), 'rotate', () => rotate(e)),
      e.enabled ? action(t('Disable'), 'disable', () => toggle(e, false)) : action(t('Enable'), 'enable', () => toggle(e, true)),
      action(t('Remove'), 'remove', () => remove(e), 'btn-danger'),
    ];
    return h(
      'section',
      { class: 'panel endpoint', 'aria-labelledby': titleId, dataset: { endpointId: e.endpointId, status: e.enabled ? 'enabled' : 'disabled' } },
      h('h2', { id: titleId }, h('code', null, e.url)),
      h(
        'p',
        null,
        h('span', { class: ['status-pill', e.enabled ? 'status-active' : 'status-revoked'] }, e.enabled ? t('enabled') : t('disabled')),
        ' ',
        e.events === 'all' ? t('Events: all') : t('Events: {list}', { list: formatList(e.events.map(eventLabel)) }),
        e.previousSecretUntil ? [' · ', t('The previous secret also signs until {time}.', { time: formatDateTime(e.previousSecretUntil) })] : null,
      ),
      e.disabledReason ? h('p', { class: 'warning', role: 'note' }, e.disabledReason) : null,
      h('div', { class: 'form-actions' }, actions),
      h('h3', null, t('Recent deliveries')),
      h('div', { class: 'deliveries', dataset: { deliveriesOf: e.endpointId } }, h('p', { class: 'loading' }, t('Loading…'))),
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
      if (deliveries.length === 0) return replaceChildren(slot, h('p', { class: 'empty' }, t('No deliveries yet.')));
      const head = [t('Event'), t('Time'), t('Attempts'), t('Last answer'), t('Latency'), t('Actions')].map((text) => h('th', { scope: 'col' }, text));
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
      showError(err, t('Could not load the deliveries'));
    }
  }

  function deliveryRow(endpointId, d) {
    const answer = d.lastStatus !== null ? `HTTP ${d.lastStatus}` : (d.lastError ?? (d.status === 'pending' ? t('waiting') : EMPTY));
    const state = d.status === 'succeeded' ? 'delivered' : d.status === 'failed' ? 'failed' : d.attempts > 0 ? 'retrying' : 'queued';
    const again = action(t('Send again'), 'resend', async () => {
      await api.post(`/webhooks/${enc(endpointId)}/deliveries/${enc(d.id)}/resend`, {});
      announce(t('{event} queued again.', { event: eventLabel(d.eventType) }));
      await loadDeliveries(endpointId);
    });
    return h(
      'tr',
      { dataset: { deliveryId: d.id, status: d.status } },
      h('td', null, eventLabel(d.eventType)),
      h('td', null, timeEl(d.createdAt)),
      h('td', null, String(d.attempts)),
      h('td', null, `${answer} (${t(STATE_LABELS[state])})`),
      h('td', null, d.lastLatencyMs === null ? EMPTY : t('{ms} ms', { ms: d.lastLatencyMs })),
      h('td', null, again),
    );
  }

  async function sendTest(e) {
    clearAlert();
    try {
      await api.post(`/webhooks/${enc(e.endpointId)}/test`, {});
      announce(t('Test event sent.'));
      setTimeout(() => loadDeliveries(e.endpointId), 1000);
    } catch (err) {
      showError(err, t('Could not send a test event'));
    }
  }

  async function rotate(e) {
    const ok = await confirmDialog({
      title: t('Rotate the signing secret?'),
      message: t('A new secret is shown once. For 24 hours deliveries are signed with both, so the receiver can switch without losing one.'),
      confirmLabel: t('Rotate secret'),
    });
    if (!ok) return;
    try {
      const { endpoint } = await api.post(`/webhooks/${enc(e.endpointId)}/rotate-secret`, {});
      showSecret(endpoint, t('New signing secret'));
      await load();
    } catch (err) {
      showError(err, t('Could not rotate the secret'));
    }
  }

  async function toggle(e, enabled) {
    try {
      await api.post(`/webhooks/${enc(e.endpointId)}/${enabled ? 'enable' : 'disable'}`, {});
      announce(enabled ? t('Endpoint enabled: its waiting events are sent now.') : t('Endpoint disabled.'));
      await load();
    } catch (err) {
      showError(err, t('Could not change the endpoint'));
    }
  }

  async function remove(e) {
    const ok = await confirmDialog({
      title: t('Remove {url}?', { url: e.url }),
      message: t('It receives no more events; its delivery history is deleted with it.'),
      confirmLabel: t('Remove endpoint'),
      danger: true,
    });
    if (!ok) return;
    try {
      await api.post(`/webhooks/${enc(e.endpointId)}/remove`, {});
      announce(t('Endpoint removed.'));
      await load();
    } catch (err) {
      showError(err, t('Could not remove the endpoint'));
    }
  }

  function showSecret(endpoint, title) {
    const titleId = uid('secret');
    const done = h('button', { type: 'button', class: 'btn' }, t('I have stored the secret'));
    done.addEventListener('click', () => replaceChildren(fresh));
    replaceChildren(
      fresh,
      h(
        'section',
        { class: 'panel new-keys', 'aria-labelledby': titleId },
        h('h2', { id: titleId, tabindex: '-1' }, title),
        h(
          'p',
          { class: 'warning' },
          h('strong', null, t('Copy this secret now.')),
          ' ',
          t('It will not be shown again. The receiver verifies every delivery with it.'),
        ),
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
    await busy(submit, async () => {
      try {
        const { endpoint } = await api.post('/webhooks', events.length > 0 ? { url, events } : { url });
        form.reset();
        showSecret(endpoint, t('Endpoint added: its signing secret'));
        announce(t('Endpoint added. Copy its signing secret now.'));
        await load();
      } catch (err) {
        showFormErrors(form, err, { prefix: t('Could not add the endpoint') });
      }
    });
  });

  load();
  return { node, destroy: () => replaceChildren(fresh) };
}
