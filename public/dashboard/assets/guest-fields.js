// The guest fields as the dashboard edits them (walk-in and edit forms share them).
// Names are the API's, so a server error's `field` lands on the right input.
// Rules themselves stay on the server; the form only shapes what it sends.

import { h, uid } from './dom.js';
import { field, controlFor } from './ui.js';
import { GUEST_RULES } from './guest-rules.js';
import { t, tk } from './i18n.js';
import { countryName, englishName, languageName } from './format.js';

// How each field is presented; what it must hold (required, input type, limits) comes from
// the server (guest-rules.js is generated from the schema it validates guests with).
const PRESENTATION = [
  { name: 'lastName', label: tk('Last name'), group: 'guest' },
  { name: 'firstName', label: tk('First name'), group: 'guest' },
  { name: 'email', label: tk('Email'), group: 'guest' },
  { name: 'phone', label: tk('Phone'), type: 'tel', group: 'guest', hint: tk('International format, e.g. +4930123456') },
  {
    name: 'language',
    label: tk('Language'),
    group: 'guest',
    hint: tk('Type a name or a code, then pick from the list'),
    names: languageName,
    nameType: 'language',
    normalize: (v) => v.toLowerCase(),
  },
  {
    name: 'nationality',
    label: tk('Nationality'),
    group: 'guest',
    hint: tk('Type a country or a code, then pick from the list'),
    names: countryName,
    nameType: 'region',
    normalize: (v) => v.toUpperCase(),
  },
  { name: 'roomNumber', label: tk('Room'), group: 'stay' },
  { name: 'checkInDate', label: tk('Check-in date'), group: 'stay' },
  { name: 'checkOutDate', label: tk('Check-out date'), group: 'stay' },
  { name: 'adults', label: tk('Adults'), group: 'stay' },
  { name: 'children', label: tk('Children'), group: 'stay' },
];

/** The input attributes a server rule asks for. */
function attrsOf(rule) {
  const attrs = { autocomplete: 'off' };
  if (rule.maxLength !== undefined) attrs.maxlength = String(rule.maxLength);
  if (rule.input === 'number') Object.assign(attrs, { min: String(rule.min ?? ''), max: String(rule.max ?? ''), step: '1', inputmode: 'numeric' });
  return attrs;
}

const GUEST_FIELDS = PRESENTATION.map((p) => {
  const rule = GUEST_RULES[p.name] ?? { required: false, input: 'text' };
  return { ...p, type: p.type ?? rule.input, required: rule.required, attrs: attrsOf(rule), codes: rule.codes };
});

/** A <datalist> of a code field's accepted codes, each with its name in the user's language. */
function codeList(f) {
  const options = f.codes.map((code) => [code, f.names(code)]).sort((a, b) => a[1].localeCompare(b[1]));
  return h(
    'datalist',
    { id: uid(`list-${f.name}`) },
    options.map(([code, name]) => h('option', { value: code, label: name })),
  );
}

function guestField(f, value) {
  const list = f.codes && f.names ? codeList(f) : null;
  const attrs = list ? { ...f.attrs, list: list.id } : f.attrs;
  const node = field({ name: f.name, label: t(f.label), type: f.type, required: f.required, hint: f.hint && t(f.hint), attrs, value });
  if (list) node.append(list);
  return node;
}

/** Two fieldsets ("Stay", "Guest") of prefilled inputs. */
export function guestFieldsets(values = {}) {
  const group = (key, legend) =>
    h(
      'fieldset',
      { class: ['fieldset', `fieldset-${key}`] },
      h('legend', null, legend),
      h(
        'div',
        { class: ['field-grid', `field-grid-${key}`] },
        GUEST_FIELDS.filter((f) => f.group === key).map((f) => guestField(f, values[f.name] ?? '')),
      ),
    );
  return [group('stay', t('Stay')), group('guest', t('Guest'))];
}

/** Text compared without case or accents ("Österreich" = "osterreich"). */
const folded = (s) => s.normalize('NFD').replace(/\p{M}/gu, '').toLocaleLowerCase().replace(/\s+/g, ' ').trim();

// What a code field says when what was typed is neither a code nor one entry's name.
const NOT_IN_LIST = {
  language: tk('{field}: “{typed}” is not a language on the list. Pick one from the list, or type its two-letter code (such as “de”).'),
  nationality: tk('{field}: “{typed}” is not a country on the list. Pick one from the list, or type its two-letter code (such as “DE”).'),
};

/**
 * A language or country as typed, as the code it names: a listed code as such ("de", "DE"),
 * or a name that is exactly one entry's, in the user's language or in English ("Germany",
 * "Deutschland"). Anything else (a part of a name, a name of two entries, nonsense) is null:
 * the form never guesses which entry was meant.
 */
function codeOf(f, typed) {
  const asCode = f.normalize(typed);
  if (f.codes.includes(asCode)) return asCode;
  const wanted = folded(typed);
  const matches = f.codes.filter((code) => folded(f.names(code)) === wanted || folded(englishName(f.nameType, code)) === wanted);
  return matches.length === 1 ? matches[0] : null;
}

/**
 * Form values as API values: trimmed text, '' → null, numbers as numbers, a language or
 * country as its code. A number input that is not an integer is sent as typed, so the
 * server's rule explains it. `errors` lists, in the API's shape, what the form cannot send
 * (a language or country it cannot tell), worded for the user already (`plain`): show them
 * and send nothing.
 */
export function readGuestForm(form) {
  const values = {};
  const errors = [];
  for (const f of GUEST_FIELDS) {
    const control = controlFor(form, f.name);
    if (!control) continue;
    const v = control.value.trim();
    if (v === '') {
      // A number input holding text the browser cannot parse reports '' too.
      values[f.name] = control.validity?.badInput ? control.value : null;
      continue;
    }
    if (f.codes && f.names) {
      const code = codeOf(f, v);
      if (code === null) errors.push({ field: f.name, code: 'NOT_IN_LIST', message: t(NOT_IN_LIST[f.name], { field: t(f.label), typed: v }), plain: true });
      values[f.name] = code ?? v;
    } else if (f.type === 'number') values[f.name] = /^-?\d+$/.test(v) ? Number(v) : v;
    else values[f.name] = v;
  }
  return { values, errors };
}

/** Body of POST /guests: the filled fields only (absent = not given). */
export function createPayload(values) {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null));
}

/** Body of PATCH /guests/:id: only fields that differ from the stored guest; emptied → null. */
export function patchPayload(guest, values) {
  const out = {};
  for (const [name, v] of Object.entries(values)) {
    const stored = guest[name] ?? null;
    if (v !== stored) out[name] = v;
  }
  return out;
}

const EXTRA_LABELS = {
  pmsGuestId: tk('PMS guest id'),
  received: tk('received'),
  checkedIn: tk('checked in'),
  updated: tk('updated'),
  checkedOut: tk('checked out'),
  unchanged: tk('unchanged'),
  manualSkipped: tk('walk-ins left alone'),
};

/** A field's name as words in the user's language ("checkInDate" → "Check-in date"). */
export function fieldLabel(name) {
  const label = PRESENTATION.find((p) => p.name === name)?.label ?? EXTRA_LABELS[name];
  return label ? t(label) : name;
}
