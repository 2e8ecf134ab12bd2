// The Staff page's front-desk displays (docs/dashboard.md, "Second factors"), for admins:
// a pairing code for one screen (with the name the admin gives it), and the paired
// displays, each of which can be unpaired (its sessions end at once).

import { api, enc } from '../api.js';
import { h, replaceChildren, timeEl } from '../dom.js';
import { act, field, showError } from '../ui.js';
import { t, tk } from '../i18n.js';

/** The most characters of a display's name (the server's rule). */
const LABEL_MAX = 60;

// ---------------------------------------------------------------------------
// Data

function displaysStore(signal) {
  return {
    load: async () => (await api.get('/displays', { signal })).displays ?? [],
    pair: (label) => api.post('/displays/pairing-code', label === '' ? {} : { label }),
    unpair: (d) => api.post(`/displays/${enc(d.id)}/unpair`, {}),
  };
}

// ---------------------------------------------------------------------------
// Render

function pairForm() {
  const submit = h('button', { type: 'submit', class: 'btn', 'data-action': 'pair-display' }, t('Pair a display'));
  const form = h(
    'form',
    { class: 'form form-inline', novalidate: true, 'aria-label': t('Pair a display') },
    field({
      name: 'label',
      label: t('Name of the display (optional)'),
      hint: t('For example the desk it stands at; the list of paired displays shows it.'),
      attrs: { maxlength: String(LABEL_MAX), autocomplete: 'off' },
    }),
    h('div', { class: 'form-actions' }, submit),
  );
  return { form, submit };
}

function pairingNote(pairing) {
  return h(
    'p',
    { class: 'pairing-code', role: 'status' },
    t('Pairing code'),
    ': ',
    h('code', null, pairing.code),
    '. ',
    t('On the display, tick Front-desk display, sign in and enter this code. It works once, until'),
    ' ',
    timeEl(pairing.expiresAt),
    '.',
  );
}

const displayName = (d) => d.label ?? t('Unnamed display');

/** The paired displays; `onUnpair(d, button)`. */
function displayTable(displays, onUnpair) {
  if (displays.length === 0) return h('p', { class: 'muted' }, t('No display is paired.'));
  const row = (d) => {
    const unpair = h('button', { type: 'button', class: 'btn btn-danger btn-small', 'data-action': 'unpair-display' }, t('Unpair'));
    unpair.addEventListener('click', () => onUnpair(d, unpair));
    return h(
      'tr',
      { dataset: { displayId: d.id } },
      h('td', null, d.label ?? h('span', { class: 'muted' }, displayName(d))),
      h('td', null, timeEl(d.pairedAt)),
      h('td', null, d.pairedBy),
      h('td', null, timeEl(d.lastUsedAt)),
      h('td', null, unpair),
    );
  };
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table table-displays' },
      h('caption', { class: 'visually-hidden' }, t('Paired displays')),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          [tk('Name'), tk('Paired'), tk('Paired by'), tk('Last used'), tk('Actions')].map((text) => h('th', { scope: 'col' }, t(text))),
        ),
      ),
      h('tbody', null, displays.map(row)),
    ),
  );
}

// ---------------------------------------------------------------------------
// The part of the Second factors section

/** The front-desk displays' heading, pairing form, new code and list, as nodes to append. */
export function staffDisplaysPart(ctx) {
  const store = displaysStore(ctx.signal);
  const { form, submit } = pairForm();
  const pairSlot = h('div');
  const list = h('div', null, h('p', { class: 'loading' }, t('Loading…')));

  async function load() {
    try {
      replaceChildren(list, displayTable(await store.load(), unpair));
    } catch (err) {
      showError(err, t('Could not load the paired displays'));
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const label = form.elements.namedItem('label').value.trim();
    act({
      button: submit,
      form,
      run: () => store.pair(label),
      after: async (pairing) => {
        form.reset();
        replaceChildren(pairSlot, pairingNote(pairing));
        await load();
      },
      failed: t('Could not make a pairing code'),
    });
  });

  const unpair = (d, button) =>
    act({
      button,
      confirm: {
        title: t('Unpair {name}?', { name: displayName(d) }),
        message: t('The display is signed out at once; its next sign-in needs a second factor or a new pairing code.'),
        confirmLabel: t('Unpair'),
        danger: true,
      },
      run: () => store.unpair(d),
      done: t('{name} unpaired.', { name: displayName(d) }),
      after: load,
      failed: t('Could not unpair the display'),
    });

  load();
  return [
    h('h3', null, t('Front-desk displays')),
    h('p', { class: 'hint' }, t('A paired screen signs in as a display without a second factor. Pair a display gives a code for one screen.')),
    form,
    pairSlot,
    h('h4', null, t('Paired displays')),
    h('p', { class: 'hint' }, t('A pairing ends when its display has not signed in for 90 days.')),
    list,
  ];
}
