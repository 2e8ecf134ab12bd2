// The guest fields as the dashboard edits them (walk-in and edit forms share them).
// Names are the API's, so a server error's `field` lands on the right input.
// Rules themselves stay on the server; the form only shapes what it sends.

import { h } from './dom.js';
import { field, setFieldError, controlFor, showAlert } from './ui.js';
import { GUEST_RULES } from './guest-rules.js';

// How each field is presented; what it must hold (required, input type, limits) comes from
// the server (guest-rules.js is generated from the schema it validates guests with).
const PRESENTATION = [
  { name: 'lastName', label: 'Last name', group: 'guest' },
  { name: 'firstName', label: 'First name', group: 'guest' },
  { name: 'email', label: 'Email', group: 'guest' },
  { name: 'phone', label: 'Phone', type: 'tel', group: 'guest', hint: 'International format, e.g. +4930123456' },
  { name: 'language', label: 'Language', group: 'guest', hint: 'Two letters, ISO 639-1 (en, de, fr)', normalize: (v) => v.toLowerCase() },
  { name: 'nationality', label: 'Nationality', group: 'guest', hint: 'Two letters, ISO 3166-1 (DE, US, FR)', normalize: (v) => v.toUpperCase() },
  { name: 'roomNumber', label: 'Room', group: 'stay' },
  { name: 'checkInDate', label: 'Check-in date', group: 'stay' },
  { name: 'checkOutDate', label: 'Check-out date', group: 'stay' },
  { name: 'adults', label: 'Adults', group: 'stay' },
  { name: 'children', label: 'Children', group: 'stay' },
];

/** The input attributes a server rule asks for. */
function attrsOf(rule) {
  const attrs = { autocomplete: 'off' };
  if (rule.maxLength !== undefined) attrs.maxlength = String(rule.maxLength);
  if (rule.input === 'number') Object.assign(attrs, { min: String(rule.min ?? ''), max: String(rule.max ?? ''), step: '1', inputmode: 'numeric' });
  return attrs;
}

export const GUEST_FIELDS = PRESENTATION.map((p) => {
  const rule = GUEST_RULES[p.name] ?? { required: false, input: 'text' };
  return { ...p, type: p.type ?? rule.input, required: rule.required, attrs: attrsOf(rule) };
});

/** Two fieldsets ("Guest", "Stay") of prefilled inputs. */
export function guestFieldsets(values = {}) {
  const group = (key, legend) =>
    h(
      'fieldset',
      { class: ['fieldset', `fieldset-${key}`] },
      h('legend', null, legend),
      h(
        'div',
        { class: ['field-grid', `field-grid-${key}`] },
        GUEST_FIELDS.filter((f) => f.group === key).map((f) =>
          field({ name: f.name, label: f.label, type: f.type, required: f.required, hint: f.hint, attrs: f.attrs, value: values[f.name] ?? '' }),
        ),
      ),
    );
  return [group('stay', 'Stay'), group('guest', 'Guest')];
}

/**
 * Form values as API values: trimmed text, '' → null, numbers as numbers. A number
 * input that is not an integer is sent as typed, so the server's rule explains it.
 */
export function readGuestForm(form) {
  const out = {};
  for (const f of GUEST_FIELDS) {
    const control = controlFor(form, f.name);
    if (!control) continue;
    let v = control.value.trim();
    if (v === '') {
      // A number input holding text the browser cannot parse reports '' too.
      out[f.name] = control.validity?.badInput ? control.value : null;
      continue;
    }
    if (f.normalize) v = f.normalize(v);
    if (f.type === 'number') out[f.name] = /^-?\d+$/.test(v) ? Number(v) : v;
    else out[f.name] = v;
  }
  return out;
}

/** Required fields left empty, marked on the form; true when all are present. */
export function checkRequired(form, values) {
  let first = null;
  for (const f of GUEST_FIELDS) {
    if (!f.required || (values[f.name] !== null && values[f.name] !== '')) continue;
    const control = controlFor(form, f.name);
    if (!control) continue;
    const badDate = f.type === 'date' && control.validity?.badInput;
    setFieldError(control, badDate ? `${f.label} is not a complete date.` : `${f.label} is required.`);
    first ??= control;
  }
  if (first) {
    showAlert('Please fill in the required fields.');
    (form.querySelector('[aria-invalid="true"]') ?? first).focus();
  }
  return first === null;
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
