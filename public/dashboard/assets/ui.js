// Shared UI pieces: the alert and status regions, accessible confirm dialogs, and form
// fields that can show the API's field errors next to the input they concern.

import { h, append, uid } from './dom.js';
import { t, tk } from './i18n.js';
import { PASSWORD_RULE } from './guest-rules.js';
import { formatDate } from './format.js';

// ---------------------------------------------------------------------------
// Alert (errors, role="alert") and status (polite confirmations, role="status").
// Both elements live in index.html for the whole session: live regions must exist
// before their content changes, or screen readers may not announce it.

const alertEl = () => document.getElementById('alert');
const statusEl = () => document.getElementById('status');

export function showAlert(...content) {
  const el = alertEl();
  el.replaceChildren();
  append(el, content);
  // A form error far down the page: make sure the message is on screen.
  if (el.getBoundingClientRect().top < 0) el.scrollIntoView({ block: 'nearest' });
}

export function clearAlert() {
  alertEl()?.replaceChildren();
}

/** The alert content for an ApiError: its message, and the request id for support. */
function errorContent(err, prefix) {
  const text = prefix ? `${prefix}: ${err.message}` : err.message;
  return [text, err.requestId ? h('span', { class: 'request-id' }, ` (${t('request {id}', { id: err.requestId })})`) : null];
}

/** The 401s that refuse what was typed (a password, a code), not a session that ended. */
const TYPED_REFUSALS = new Set(['LOGIN_FAILED', 'SECOND_FACTOR_INVALID', 'PAIRING_CODE_INVALID']);
const sessionEnded = (err) => err?.status === 401 && !TYPED_REFUSALS.has(err.code);

export function showError(err, prefix) {
  if (err?.name === 'AbortError') return;
  // A 401 already sent the user to the login page; no second message needed.
  if (sessionEnded(err)) return;
  showAlert(...errorContent(err ?? { message: String(err) }, prefix));
}

let statusTimer = null;

/** Takes a confirmation off the screen: it belongs to the page it was made on. */
export function clearStatus() {
  clearTimeout(statusTimer);
  const el = statusEl();
  if (el) el.textContent = '';
}

export function announce(message) {
  const el = statusEl();
  clearTimeout(statusTimer);
  el.textContent = '';
  // Next frame, so repeating the same message is announced again.
  requestAnimationFrame(() => {
    el.textContent = message;
    statusTimer = setTimeout(() => {
      el.textContent = '';
    }, 6000);
  });
}

// ---------------------------------------------------------------------------
// Confirm dialog: a native <dialog> opened with showModal(), which makes the rest of
// the page inert (focus stays inside) and closes on Escape. Resolves true on confirm.

function confirmDialog({ title, message, confirmLabel, cancelLabel = t('Cancel'), danger = false }) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const titleId = uid('dlg-title');
    const bodyId = uid('dlg-body');
    const cancel = h('button', { type: 'button', class: 'btn', 'data-dialog-cancel': true }, cancelLabel);
    const confirm = h('button', { type: 'button', class: ['btn', danger ? 'btn-danger' : 'btn-primary'], 'data-dialog-confirm': true }, confirmLabel);
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': titleId, 'aria-describedby': bodyId },
      h('h2', { id: titleId, class: 'dialog-title' }, title),
      h('div', { id: bodyId, class: 'dialog-body' }, ...(Array.isArray(message) ? message : [h('p', null, message)])),
      h('div', { class: 'dialog-actions' }, cancel, confirm),
    );
    cancel.addEventListener('click', () => dialog.close('cancel'));
    confirm.addEventListener('click', () => dialog.close('confirm'));
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
      resolve(dialog.returnValue === 'confirm');
    });
    document.body.append(dialog);
    dialog.showModal();
    // The harmless choice has focus first, so a stray Enter does not confirm.
    cancel.focus();
  });
}

/**
 * A modal panel (request detail): title, content, a Close button. Returns the dialog;
 * it removes itself when closed and gives focus back to whatever opened it.
 */
export function openPanel({ title, content, className }) {
  const opener = document.activeElement;
  const titleId = uid('panel-title');
  const close = h('button', { type: 'button', class: 'btn', 'data-dialog-close': true }, t('Close'));
  const dialog = h(
    'dialog',
    { class: ['dialog', 'dialog-wide', className], 'aria-labelledby': titleId },
    h('div', { class: 'dialog-head' }, h('h2', { id: titleId, class: 'dialog-title' }, title), close),
    h('div', { class: 'dialog-body' }, content),
  );
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
  return dialog;
}

// ---------------------------------------------------------------------------
// Form fields. The input's name is the API field name, so an error's `field` finds it.

/**
 * field({ name, label, type, required, hint, options: [[value, label]], value, attrs })
 * → <div class="field"> label, input (or select), hint, error slot.
 */
export function field({ name, label, type = 'text', required = false, hint, options, value, attrs = {} }) {
  const id = uid(`f-${name}`);
  const hintId = hint ? `${id}-hint` : null;
  const describedBy = hintId;
  let control;
  if (options) {
    control = h(
      'select',
      { id, name, 'aria-describedby': describedBy, required: required || null, 'aria-required': required ? 'true' : null, value: value ?? undefined, ...attrs },
      options.map(([v, text]) => h('option', { value: v }, text)),
    );
  } else {
    control = h('input', {
      id,
      name,
      type,
      'aria-describedby': describedBy,
      required: required || null,
      'aria-required': required ? 'true' : null,
      value: value ?? undefined,
      ...attrs,
    });
  }
  return h(
    'div',
    { class: 'field', dataset: { field: name } },
    h('label', { for: id }, label, required ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null),
    control,
    hint ? h('p', { id: hintId, class: 'hint' }, hint) : null,
  );
}

/** A new password input's length limits, the server's (guest-rules.js). */
export const passwordLength = { minlength: String(PASSWORD_RULE.minLength), maxlength: String(PASSWORD_RULE.maxLength) };

/** The form control for an API field name, or null. */
export function controlFor(form, name) {
  return form.querySelector(`[name="${CSS.escape(name)}"]`);
}

/** Marks one control invalid and shows the message under it (wired with aria-describedby). */
function setFieldError(control, message) {
  const wrapper = control.closest('.field') ?? control.parentElement;
  let error = wrapper.querySelector('.field-error');
  if (!error) {
    error = h('p', { class: 'field-error', id: `${control.id || uid('f')}-error` });
    wrapper.append(error);
  }
  // Two rules may say the same in the form's words (a blank name is too short and blank): once.
  if (!error.textContent.includes(message)) error.textContent = error.textContent ? `${error.textContent} ${message}` : message;
  control.setAttribute('aria-invalid', 'true');
  const ids = new Set((control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean));
  ids.add(error.id);
  control.setAttribute('aria-describedby', [...ids].join(' '));
}

export function clearFieldErrors(form) {
  for (const error of form.querySelectorAll('.field-error')) {
    const wrapper = error.closest('.field');
    const control = wrapper?.querySelector('input, select, textarea');
    if (control) {
      control.removeAttribute('aria-invalid');
      const ids = (control.getAttribute('aria-describedby') ?? '').split(/\s+/).filter((x) => x && x !== error.id);
      if (ids.length > 0) control.setAttribute('aria-describedby', ids.join(' '));
      else control.removeAttribute('aria-describedby');
    }
    error.remove();
  }
}

// A field error in plain words, in every language English included: the API's own
// `message` is written for a PMS developer (field names, ISO numbers), so the form shows
// its own text, keyed by field and code, else by code. Limits come from the input's own
// attributes, which the server's rules set (guest-rules.js).
const FIELD_MESSAGES = {
  REQUIRED: tk('{field} is required.'),
  UNKNOWN_FIELD: tk('{field} is not part of this form.'),
  INVALID_TYPE: tk('{field} has the wrong kind of value.'),
  INVALID_DATE_FORMAT: tk('{field} is not a complete date.'),
  DATE_ORDER: tk('Check-out must be on or after check-in.'),
  TOO_SHORT: tk('{field} is too short.'),
  TOO_LONG: tk('{field} is too long.'),
  INVALID_FORMAT: tk('{field} is not written in the expected form.'),
  OUT_OF_RANGE: tk('{field} is outside the allowed range.'),
  INVALID_VALUE: tk('{field} is not one of the allowed values.'),
  DUPLICATE: tk('{field} appears more than once.'),
  TOO_MANY: tk('{field} has too many entries.'),
  // A new password the server finds easy to guess (docs/dashboard.md, "Passwords"), one reason each.
  PASSWORD_TOO_COMMON: tk(
    '{field} is one of the most common passwords (or one with small changes): choose another, for example three or four unrelated words.',
  ),
  PASSWORD_LIKE_EMAIL: tk('{field} contains or resembles the e-mail address: choose one without the e-mail or the name in it.'),
  PASSWORD_LIKE_HOTEL: tk("{field} contains or resembles the hotel's name: choose one without the hotel's name in it."),
  PASSWORD_TOO_WEAK: tk('{field} is too easy to guess: make it longer, for example three or four unrelated words.'),
};

// The same codes where the input states its limit.
const LIMIT_MESSAGES = {
  TOO_SHORT: tk('{field} must be at least {min} characters.'),
  TOO_LONG: tk('{field} must be at most {max} characters.'),
  NUMBER: tk('{field} must be a whole number from {min} to {max}.'),
};

// Errors that read better in the form's own words.
const FORM_MESSAGES = {
  'passwordConfirm:INVALID_VALUE': tk('The two passwords do not match.'),
  'currentPassword:INVALID_VALUE': tk('{field} is not your current password: type it again.'),
  'email:INVALID_FORMAT': tk('{field} must be an e-mail address such as name@example.com.'),
  'phone:INVALID_FORMAT': tk('{field} must be in international format: + and the country code, e.g. +4930123456.'),
  'language:INVALID_VALUE': tk('{field}: pick a language from the list, or type its two-letter code (such as “de”).'),
  'nationality:INVALID_VALUE': tk('{field}: pick a country from the list, or type its two-letter code (such as “DE”).'),
  'roomNumber:INVALID_FORMAT': tk('{field} holds an invisible character (such as a zero-width space): clear the field and type the room number again.'),
  'hotelSlug:INVALID_FORMAT': tk('{field} must be 2 to 63 characters of a–z, 0–9 and “-”, starting with a letter, e.g. grand-hotel.'),
  'networks:INVALID_FORMAT': tk('{field}: write each network in CIDR notation, separated by commas, e.g. 203.0.113.0/24, 2001:db8::/32.'),
  'expiresOn:OUT_OF_RANGE': tk('{field} has passed: choose today or a later day.'),
  'timeZone:INVALID_VALUE': tk('{field}: the server does not know this time zone. Pick another one of the same place.'),
  // The server's URL rules in one sentence: a full https:// address, no user name or password in it, not a private or local network, at most 2,000 characters.
  'url:INVALID_FORMAT': tk(
    '{field} must be an https:// address on the public internet, without a user name or password and at most 2,000 characters, e.g. https://locks.example.com/innsync.',
  ),
};

/** A field error in the user's language: "Check-out must be on or after check-in.", "Last name is required." */
function fieldMessage(form, control, e) {
  if (e.plain) return e.message; // the form's own words (guest-fields.js)
  const label = form.querySelector(`label[for="${CSS.escape(control.id)}"]`)?.firstChild?.textContent ?? e.field;
  // An empty required input: the server says "is required", "must not be blank" or "must be text, got null" (an edit that clears it).
  if (control.value.trim() === '' && ['REQUIRED', 'INVALID_TYPE', 'TOO_SHORT'].includes(e.code)) return t(FIELD_MESSAGES.REQUIRED, { field: label });
  const own = FORM_MESSAGES[`${e.field}:${e.code}`];
  if (own) return t(own, { field: label });
  const { min, max, minLength, maxLength } = control;
  if (control.type === 'number' && ['INVALID_TYPE', 'OUT_OF_RANGE'].includes(e.code) && min !== '' && max !== '')
    return t(LIMIT_MESSAGES.NUMBER, { field: label, min, max });
  if (e.code === 'TOO_SHORT' && minLength > 0) return t(LIMIT_MESSAGES.TOO_SHORT, { field: label, min: minLength });
  if (e.code === 'TOO_LONG' && maxLength > 0) return t(LIMIT_MESSAGES.TOO_LONG, { field: label, max: maxLength });
  return t(FIELD_MESSAGES[e.code] ?? tk('{field} is not valid.'), { field: label });
}

/** "Room 101 is occupied by Smith (PMS guest P-1, since Fri 20 Nov)" */
function roomOccupiedMessage(room, currentGuest) {
  if (!currentGuest) return t('Room {room} is occupied by another guest.', { room });
  const params = { room, name: currentGuest.lastName, id: currentGuest.pmsGuestId, since: formatDate(currentGuest.checkInDate) };
  return currentGuest.pmsGuestId
    ? t('Room {room} is occupied by {name} (PMS guest {id}, since {since}).', params)
    : t('Room {room} is occupied by {name} (walk-in guest, since {since}).', params);
}

/** Codes that concern one field though they carry no errors[] entry. */
const CODE_FIELDS = {
  ROOM_OCCUPIED: 'roomNumber',
  EMAIL_TAKEN: 'email',
  // The password entered again before a change to one's own account (views/account-passkeys.js).
  PASSWORD_INCORRECT: 'password',
  SECOND_FACTOR_INVALID: 'code',
  PAIRING_CODE_INVALID: 'pairingCode',
};

/**
 * Shows an ApiError on a form: each field error next to its control, anything else in
 * the alert region; focuses the first invalid control. Returns true if anything showed.
 */
export function showFormErrors(form, err, { prefix } = {}) {
  if (err?.name === 'AbortError') return false;
  clearFieldErrors(form);
  if (sessionEnded(err)) return false;
  let firstInvalid = null;
  const unplaced = [];
  for (const e of err.errors ?? []) {
    const control = e.field ? controlFor(form, e.field) : null;
    if (!control) {
      unplaced.push(e.field ? `${e.field}: ${e.message}` : e.message);
      continue;
    }
    setFieldError(control, fieldMessage(form, control, e));
    firstInvalid ??= control;
  }
  const codeField = CODE_FIELDS[err.code];
  if (codeField && (err.errors ?? []).length === 0) {
    const control = controlFor(form, codeField);
    if (control) {
      const message = err.code === 'ROOM_OCCUPIED' ? roomOccupiedMessage(control.value.trim(), err.body?.currentGuest) : err.message;
      setFieldError(control, message);
      firstInvalid ??= control;
    }
  }
  if (firstInvalid) {
    // Top to bottom, as the user reads the form (the server lists errors in its own order).
    firstInvalid = form.querySelector('[aria-invalid="true"]') ?? firstInvalid;
    const rest = unplaced.length > 0 ? ` ${unplaced.join(' ')}` : '';
    showAlert(`${prefix ? `${prefix}: ` : ''}${t('Please correct the marked fields.')}${rest}`);
    firstInvalid.focus();
  } else {
    showAlert(...errorContent(err, prefix), unplaced.length > 0 ? ` ${unplaced.join(' ')}` : null);
  }
  return true;
}

/** Disables a form's submit button while `work` runs, so a double click sends once. */
export async function busy(button, work) {
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
  }
}

/**
 * A staff action, the one way every button that changes something works: asks first when
 * `confirm` is given (a confirmDialog's options), keeps `button` busy while `run` works, then
 * announces `done` (a text, or a function of run's result giving one) and runs `after` (a
 * reload). A refusal (or a failed reload) shows next to `form`'s fields when there is a form,
 * else in the alert, after `failed` ("Could not save: …"). Resolves run's result, or null when
 * cancelled or refused.
 */
export async function act({ button, confirm, run, done, after, failed, form }) {
  clearAlert();
  if (form) clearFieldErrors(form);
  if (confirm && !(await confirmDialog(confirm))) return null;
  return busy(button, async () => {
    try {
      const result = await run();
      const message = typeof done === 'function' ? done(result) : done;
      if (message) announce(message);
      // A reload that fails after the change is shown too, with the change's words.
      await after?.(result);
      return result ?? true;
    } catch (err) {
      if (form) showFormErrors(form, err, { prefix: failed });
      else showError(err, failed);
      return null;
    }
  });
}
