// #/webhooks (admin): the hotel's webhook endpoints (events out to its other systems),
// their recent deliveries, "Send again" and "Send a test event". A new or rotated signing
// secret exists only in this view's memory: it is shown once.

import { api, enc } from '../api.js';
import { h, pageHeading, replaceChildren, timeEl, uid } from '../dom.js';
import { act, field, showError } from '../ui.js';
import { t, tk } from '../i18n.js';
import { EMPTY, formatDateTime, formatList } from '../format.js';
import { eventLabel } from '../event-names.js';

const STATE_LABELS = { delivered: tk('delivered'), failed: tk('given up'), retrying: tk('retrying'), queued: tk('queued') };

export function webhooksView(ctx) {
  ctx.setTitle(t('Webhooks'));
  const store = webhookStore(ctx.signal);
  const page = webhooksPage();
  const { form, fresh, listSlot, typesSlot } = page;

  async function load() {
    try {
      const data = await store.load();
      if (typesSlot.querySelectorAll('input').length === 0) typesSlot.append(...eventTypeChecks(data.eventTypes ?? []));
      replaceChildren(listSlot, ...endpointList(data.endpoints, actions));
      for (const e of data.endpoints) loadDeliveries(e.endpointId);
    } catch (err) {
      showError(err, t('Could not load the webhook endpoints'));
    }
  }

  async function loadDeliveries(endpointId) {
    const slot = listSlot.querySelector(`[data-deliveries-of="${CSS.escape(endpointId)}"]`);
    if (!slot) return;
    try {
      const deliveries = await store.deliveries(endpointId);
      replaceChildren(
        slot,
        deliveryTable(deliveries, (d, button) => actions.resend(endpointId, d, button)),
      );
    } catch (err) {
      showError(err, t('Could not load the deliveries'));
    }
  }

  const dismiss = () => replaceChildren(fresh);
  function showSecret(endpoint, title) {
    replaceChildren(fresh, secretPanel(endpoint.secret, title, dismiss));
    fresh.querySelector('h2')?.focus();
  }

  const actions = webhookActions(store, { load, loadDeliveries, showSecret });
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    actions.add(form, page.submit);
  });

  load();
  return { node: page.node, destroy: dismiss };
}

// ---------------------------------------------------------------------------
// Data: the API's answers and the actions on an endpoint.

function webhookStore(signal) {
  const endpointPath = (e) => `/webhooks/${enc(e.endpointId)}`;
  return {
    /** { eventTypes, endpoints } */
    load: () => api.get('/webhooks', { signal }),
    deliveries: async (endpointId) => (await api.get(`/webhooks/${enc(endpointId)}/deliveries`, { signal })).deliveries,
    add: async (body) => (await api.post('/webhooks', body)).endpoint,
    test: (e) => api.post(`${endpointPath(e)}/test`, {}),
    rotate: async (e) => (await api.post(`${endpointPath(e)}/rotate-secret`, {})).endpoint,
    setEnabled: (e, enabled) => api.post(`${endpointPath(e)}/${enabled ? 'enable' : 'disable'}`, {}),
    remove: (e) => api.post(`${endpointPath(e)}/remove`, {}),
    resend: (endpointId, d) => api.post(`/webhooks/${enc(endpointId)}/deliveries/${enc(d.id)}/resend`, {}),
  };
}

/**
 * What each button does: ask (when it destroys something), send, announce, show the new state.
 * `view`: load() the endpoints again, loadDeliveries(endpointId), showSecret(endpoint, title).
 */
function webhookActions(store, view) {
  return {
    add: (form, button) => addEndpoint(store, view, form, button),
    test: (e, button) =>
      act({
        button,
        run: () => store.test(e),
        done: t('Test event sent.'),
        after: () => {
          setTimeout(() => view.loadDeliveries(e.endpointId), 1000);
        },
        failed: t('Could not send a test event'),
      }),
    rotate: (e, button) =>
      act({
        button,
        confirm: rotateConfirm(),
        run: () => store.rotate(e),
        after: (endpoint) => {
          view.showSecret(endpoint, t('New signing secret'));
          return view.load();
        },
        failed: t('Could not rotate the secret'),
      }),
    toggle: (e, enabled, button) =>
      act({
        button,
        run: () => store.setEnabled(e, enabled),
        done: enabled ? t('Endpoint enabled: its waiting events are sent now.') : t('Endpoint disabled.'),
        after: view.load,
        failed: t('Could not change the endpoint'),
      }),
    remove: (e, button) =>
      act({
        button,
        confirm: removeConfirm(e),
        run: () => store.remove(e),
        done: t('Endpoint removed.'),
        after: view.load,
        failed: t('Could not remove the endpoint'),
      }),
    resend: (endpointId, d, button) =>
      act({
        button,
        run: () => store.resend(endpointId, d),
        done: t('{event} queued again.', { event: eventLabel(d.eventType) }),
        after: () => view.loadDeliveries(endpointId),
      }),
  };
}

/** The add form's action: the new endpoint's secret is shown once. */
function addEndpoint(store, view, form, button) {
  const url = form.elements.namedItem('url').value.trim();
  const events = [...form.querySelectorAll('input[name="events"]:checked')].map((c) => c.value);
  return act({
    button,
    form,
    run: async () => {
      const endpoint = await store.add(events.length > 0 ? { url, events } : { url });
      form.reset();
      return endpoint;
    },
    done: t('Endpoint added. Copy its signing secret now.'),
    after: (endpoint) => {
      view.showSecret(endpoint, t('Endpoint added: its signing secret'));
      return view.load();
    },
    failed: t('Could not add the endpoint'),
  });
}

const rotateConfirm = () => ({
  title: t('Rotate the signing secret?'),
  message: t('A new secret is shown once. For 24 hours deliveries are signed with both, so the receiver can switch without losing one.'),
  confirmLabel: t('Rotate secret'),
});

const removeConfirm = (e) => ({
  title: t('Remove {url}?', { url: e.url }),
  message: t('It receives no more events; its delivery history is deleted with it.'),
  confirmLabel: t('Remove endpoint'),
  danger: true,
});

// ---------------------------------------------------------------------------
// Render: DOM from data; handlers come in as arguments.

/** The page and its parts: the new secret's slot, the endpoints' slot, the add form and its event types. */
function webhooksPage() {
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
  return { node, fresh, listSlot, typesSlot, form, submit };
}

/** One checkbox per event type, for the add form. */
function eventTypeChecks(types) {
  return types.map((type) => {
    const id = uid('type');
    return h(
      'div',
      { class: 'check' },
      h('input', { type: 'checkbox', id, name: 'events', value: type }),
      h('label', { for: id }, `${eventLabel(type)} (${type})`),
    );
  });
}

/** The endpoints' panels, or the empty note; `on`: test, rotate, toggle, remove (webhookActions). */
function endpointList(endpoints, on) {
  if (endpoints.length === 0) return [h('p', { class: 'empty' }, t('No endpoints yet.'))];
  return endpoints.map((e) => endpointPanel(e, on));
}

function endpointPanel(e, on) {
  const titleId = uid('endpoint');
  const actions = [
    actionButton(t('Send a test event'), 'test', (b) => on.test(e, b)),
    actionButton(t('Rotate secret'), 'rotate', (b) => on.rotate(e, b)),
    e.enabled ? actionButton(t('Disable'), 'disable', (b) => on.toggle(e, false, b)) : actionButton(t('Enable'), 'enable', (b) => on.toggle(e, true, b)),
    actionButton(t('Remove'), 'remove', (b) => on.remove(e, b), 'btn-danger'),
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

/** A small button (data-action=`name`); `onClick(button)`. */
function actionButton(label, name, onClick, extra = '') {
  const b = h('button', { type: 'button', class: `btn btn-small ${extra}`, dataset: { action: name } }, label);
  b.addEventListener('click', () => onClick(b));
  return b;
}

/** An endpoint's recent deliveries, or the empty note; `onResend(d, button)`. */
function deliveryTable(deliveries, onResend) {
  if (deliveries.length === 0) return h('p', { class: 'empty' }, t('No deliveries yet.'));
  const head = [t('Event'), t('Time'), t('Attempts'), t('Last answer'), t('Latency'), t('Actions')].map((text) => h('th', { scope: 'col' }, text));
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table table-deliveries' },
      h('thead', null, h('tr', null, head)),
      h(
        'tbody',
        null,
        deliveries.map((d) => deliveryRow(d, onResend)),
      ),
    ),
  );
}

function deliveryRow(d, onResend) {
  const answer = d.lastStatus !== null ? `HTTP ${d.lastStatus}` : (d.lastError ?? (d.status === 'pending' ? t('waiting') : EMPTY));
  const state = d.status === 'succeeded' ? 'delivered' : d.status === 'failed' ? 'failed' : d.attempts > 0 ? 'retrying' : 'queued';
  return h(
    'tr',
    { dataset: { deliveryId: d.id, status: d.status } },
    h('td', null, eventLabel(d.eventType)),
    h('td', null, timeEl(d.createdAt)),
    h('td', null, String(d.attempts)),
    h('td', null, `${answer} (${t(STATE_LABELS[state])})`),
    h('td', null, d.lastLatencyMs === null ? EMPTY : t('{ms} ms', { ms: d.lastLatencyMs })),
    h(
      'td',
      null,
      actionButton(t('Send again'), 'resend', (b) => onResend(d, b)),
    ),
  );
}

/** A new signing secret, shown once; `onDone` when the user has stored it. */
function secretPanel(secret, title, onDone) {
  const titleId = uid('secret');
  const done = h('button', { type: 'button', class: 'btn' }, t('I have stored the secret'));
  done.addEventListener('click', onDone);
  return h(
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
    h('code', { class: 'secret', dataset: { secret: 'signing' } }, secret),
    h('div', { class: 'form-actions' }, done),
  );
}
