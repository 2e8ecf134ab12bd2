// The guest fields as the dashboard edits them (walk-in and edit forms share them).
// Names are the API's, so a server error's `field` lands on the right input.
// Rules themselves stay on the server; the form only shapes what it sends.

import { h } from './dom.js';
import { field, setFieldError, controlFor, showAlert } from './ui.js';

export const GUEST_FIELDS = [
  { name: 'lastName', label: 'Last name', required: true, group: 'guest', attrs: { autocomplete: 'off', maxlength: '100' } },
  { name: 'firstName', label: 'First name', group: 'guest', attrs: { autocomplete: 'off', maxlength: '100' } },
  { name: 'email', label: 'Email', type: 'email', group: 'guest', attrs: { autocomplete: 'off' } },
  { name: 'phone', label: 'Phone', type: 'tel', group: 'guest', hint: 'International format, e.g. +4930123456', attrs: { autocomplete: 'off' } },
  {
    name: 'language',
    label: 'Language',
    group: 'guest',
    hint: 'Two letters, ISO 639-1 (en, de, fr)',
    attrs: { maxlength: '2', autocomplete: 'off' },
    normalize: (v) => v.toLowerCase(),
  },
  {
    name: 'nationality',
    label: 'Nationality',
    group: 'guest',
    hint: 'Two letters, ISO 3166-1 (DE, US, FR)',
    attrs: { maxlength: '2', autocomplete: 'off' },
    normalize: (v) => v.toUpperCase(),
  },
  { name: 'roomNumber', label: 'Room', required: true, group: 'stay', attrs: { autocomplete: 'off', maxlength: '20' } },
  { name: 'checkInDate', label: 'Check-in date', type: 'date', required: true, group: 'stay' },
  { name: 'checkOutDate', label: 'Check-out date', type: 'date', required: true, group: 'stay' },
  { name: 'adults', label: 'Adults', type: 'number', group: 'stay', attrs: { min: '0', max: '99', step: '1', inputmode: 'numeric' } },
  { name: 'children', label: 'Children', type: 'number', group: 'stay', attrs: { min: '0', max: '99', step: '1', inputmode: 'numeric' } },
];

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
