// The guest page's DOM, built from the data it is given and the handlers passed in
// (guest.js loads the guest, keeps the latest answer and wires these together).

import { h, pageHeading, replaceChildren, sourceBadge, timeEl, stayDates, dateEl } from '../dom.js';
import { guestFieldsets } from '../guest-fields.js';
import { t, tk } from '../i18n.js';
import { EMPTY, countryName, formatDate, formatDateTime, guestName, languageName, orEmpty } from '../format.js';

// Each field's label and how its value reads ("de" → "German", a date → "Mon 23 Nov").
const DETAIL_FIELDS = [
  ['roomNumber', tk('Room')],
  ['lastName', tk('Last name')],
  ['firstName', tk('First name')],
  ['checkInDate', tk('Check-in'), dateEl],
  ['checkOutDate', tk('Check-out'), dateEl],
  ['adults', tk('Adults')],
  ['children', tk('Children')],
  ['email', tk('Email')],
  ['phone', tk('Phone')],
  ['language', tk('Language'), languageName],
  ['nationality', tk('Nationality'), countryName],
];

const shown = (value, format) => (value === null || value === undefined || value === '' || !format ? orEmpty(value) : format(value));

/** The page's frame: heading, subtitle, action bar, details and the edit area, filled in later. */
export function guestPage(id, back) {
  const heading = pageHeading(t('Guest'));
  const subtitle = h('p', { class: 'subtitle' });
  const actions = h('div', { class: 'view-actions' });
  const details = h('div', { class: 'detail-body' }, h('p', { class: 'loading' }, t('Loading…')));
  const editArea = h('div');
  const node = h(
    'section',
    { class: 'view view-guest', dataset: { guestId: id } },
    // Back to the page the guest was opened from (board, list, activity…), not always the board.
    h('p', { class: 'breadcrumb' }, h('a', { href: back.hash }, `← ${t(back.label)}`)),
    h('div', { class: 'view-head' }, h('div', null, heading, subtitle), actions),
    details,
    editArea,
  );
  return { node, heading, subtitle, actions, details, editArea };
}

export function renderMissing(page) {
  page.heading.textContent = t('Guest not found');
  page.subtitle.textContent = '';
  replaceChildren(page.actions);
  replaceChildren(page.details, h('p', null, t('There is no such guest in this hotel.')), h('p', null, h('a', { href: '#/board' }, t('Back to the board'))));
  replaceChildren(page.editArea);
}

/**
 * The guest as loaded: heading, subtitle, the actions this user may take (`onCheckOut`,
 * `onErase` get the button clicked), the details and the room history.
 */
export function renderGuest(page, { id, guest, rooms, isAdmin, onCheckOut, onErase }) {
  const active = guest.status === 'active';
  page.heading.textContent = guestName(guest);
  page.node.dataset.source = guest.source;
  page.node.dataset.status = guest.status;
  replaceChildren(page.subtitle, ...subtitleContent(guest));
  const hadFocus = page.actions.contains(document.activeElement);
  replaceChildren(
    page.actions,
    active ? actionButton('checkout', t('Check out'), onCheckOut) : null,
    isAdmin ? exportLink(id) : null,
    isAdmin && !active && !guest.anonymisedAt ? actionButton('erase', t('Erase personal data'), onErase) : null,
  );
  if (hadFocus) page.actions.querySelector('button')?.focus();
  replaceChildren(page.details, detailList(guest), historyTable(guest, rooms));
}

function subtitleContent(guest) {
  const active = guest.status === 'active';
  return [
    `${t('Room {room}', { room: guest.roomNumber })} · `,
    stayDates(guest),
    ' · ',
    sourceBadge(guest.source),
    ' · ',
    h('span', { class: ['status-pill', active ? 'status-active' : 'status-checked-out'] }, active ? t('In house') : t('Checked out')),
  ];
}

/** A danger button of the action bar; `onClick` gets the button (to keep it busy). */
function actionButton(action, label, onClick) {
  const button = h('button', { type: 'button', class: 'btn btn-danger', 'data-action': action }, label);
  button.addEventListener('click', () => onClick(button));
  return button;
}

/** Art. 15: everything held about this guest, as a JSON file (admins). */
function exportLink(id) {
  return h(
    'a',
    { class: 'btn', href: `/dashboard/api/guests/${encodeURIComponent(id)}/export`, download: '', 'data-action': 'export' },
    t('Export personal data'),
  );
}

function detailList(guest) {
  const rows = [
    ...DETAIL_FIELDS.map(([key, label, format]) => [t(label), shown(guest[key], format), key]),
    [t('Source'), guest.source === 'pms' ? t('PMS') : t('Walk-in (entered by staff)'), 'source'],
    [t('PMS guest id'), orEmpty(guest.pmsGuestId), 'pmsGuestId'],
    [t('Status'), guest.status === 'active' ? t('Active (in house)') : t('Checked out'), 'status'],
    [t('Created'), formatDateTime(guest.createdAt), 'createdAt'],
    [t('Updated'), formatDateTime(guest.updatedAt), 'updatedAt'],
    ...(guest.anonymisedAt
      ? [[t('Personal data'), t('Removed {when}: room, dates and counts are kept', { when: formatDateTime(guest.anonymisedAt) }), 'anonymisedAt']]
      : []),
  ];
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'guest-details' },
    h('h2', { id: 'guest-details' }, t('Details')),
    h(
      'dl',
      { class: 'details' },
      rows.map(([label, value, key]) => h('div', { class: 'detail', dataset: { field: key } }, h('dt', null, label), h('dd', null, value))),
    ),
  );
}

/**
 * When a room of the stay began: the first room with the stay's arrival date (the row is
 * written when the PMS reports the stay, which may be days later), a later one when the
 * guest was moved into it.
 */
function roomFrom(guest, r, first) {
  if (first) return [dateEl(guest.checkInDate), ' ', h('span', { class: 'hint' }, t('(arrival)'))];
  return [timeEl(r.assignedAt), ' ', h('span', { class: 'hint' }, t('(moved in)'))];
}

/** When a room of the stay ended: the move out or the check-out, or "now" with the planned departure. */
function roomUntil(guest, r, last) {
  if (r.releasedAt) return [timeEl(r.releasedAt), ' ', h('span', { class: 'hint' }, last ? t('(checked out)') : t('(moved out)'))];
  if (guest.status !== 'active') return EMPTY;
  return [h('span', { class: 'current' }, t('now')), ' ', h('span', { class: 'hint' }, t('(departure {date})', { date: formatDate(guest.checkOutDate) }))];
}

function historyTable(guest, rooms) {
  const byTime = [...rooms].sort((a, b) => String(a.assignedAt).localeCompare(String(b.assignedAt)));
  const firstOf = byTime[0];
  const lastOf = byTime.at(-1);
  const sorted = [...byTime].reverse();
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'room-history' },
    h('h2', { id: 'room-history' }, t('Room history')),
    sorted.length === 0 ? h('p', null, t('No room assignments recorded.')) : historyRows(guest, sorted, firstOf, lastOf),
  );
}

function historyRows(guest, sorted, firstOf, lastOf) {
  const th = (text) => h('th', { scope: 'col' }, text);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table table-rooms' },
      h('thead', null, h('tr', null, th(t('Room')), th(t('From')), th(t('Until')))),
      h(
        'tbody',
        null,
        sorted.map((r) =>
          h(
            'tr',
            { dataset: { room: r.roomNumber } },
            h('td', { class: 'cell-room' }, r.roomNumber),
            h('td', null, roomFrom(guest, r, r === firstOf)),
            h('td', null, roomUntil(guest, r, r === lastOf)),
          ),
        ),
      ),
    ),
  );
}

/** In place of the edit form for a PMS guest: the PMS owns the data. */
export function pmsNote() {
  return h(
    'section',
    { class: 'panel note', 'aria-labelledby': 'pms-owned' },
    h('h2', { id: 'pms-owned' }, t('Managed by the PMS')),
    h(
      'p',
      null,
      t(
        'This guest comes from the hotel’s PMS, which owns the data. Change it in the PMS: the change arrives here with its next update or sync. Edits made here would be overwritten.',
      ),
    ),
  );
}

/** The edit form filled from `guest`; `onSubmit(form, submit)`, `onReset()`, `onInput()`. */
export function editSection(guest, { onSubmit, onReset, onInput }) {
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Save changes'));
  const reset = h('button', { type: 'button', class: 'btn' }, t('Discard changes'));
  const form = h(
    'form',
    { class: 'form', novalidate: true, 'aria-labelledby': 'edit-guest' },
    h(
      'p',
      { class: 'stale-note', hidden: true, role: 'note' },
      t('This guest was changed elsewhere while you were editing. Saving sends only the fields you changed.'),
    ),
    guestFieldsets(guest),
    h('div', { class: 'form-actions' }, submit, reset),
  );
  form.addEventListener('input', onInput);
  reset.addEventListener('click', onReset);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    onSubmit(form, submit);
  });
  const section = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'edit-guest' },
    h('h2', { id: 'edit-guest' }, t('Edit guest')),
    h('p', { class: 'hint' }, t('Change the room here to move the guest. Empty an optional field to clear it.')),
    form,
  );
  return { section, form };
}

/** The check-out's confirmation: a PMS guest's names the PMS, which would send the guest again. */
export function checkoutConfirm(guest) {
  const name = guestName(guest);
  const message =
    guest.source === 'pms'
      ? [
          h('p', null, t('{name} (room {room}, PMS guest {id}) is managed by the PMS.', { name, room: guest.roomNumber, id: guest.pmsGuestId })),
          h('p', null, t('The PMS will send this guest again on its next sync unless the guest is checked out there too.')),
        ]
      : [h('p', null, t('{name} leaves room {room}; the room is free at once.', { name, room: guest.roomNumber }))];
  const title = guest.source === 'pms' ? t('Check out a PMS guest?') : t('Check out this guest?');
  return { title, message, confirmLabel: t('Confirm check-out'), danger: true };
}

/** Art. 17: the erasure's confirmation, naming all it erases and keeps. */
export function eraseConfirm(guest) {
  const name = guestName(guest);
  return {
    title: t('Erase this guest’s personal data?'),
    message: [
      h(
        'p',
        null,
        guest.pmsGuestId
          ? t('{name} (PMS guest {id}): every stay with this PMS guest id is included.', { name, id: guest.pmsGuestId })
          : t('{name} (walk-in guest, room {room}).', { name, room: guest.roomNumber }),
      ),
      h(
        'p',
        null,
        t(
          'Erased: first and last name, phone, e-mail, language and nationality from the guest record, from its activity entries and from stored API responses, and every request-log body that names this guest.',
        ),
      ),
      h('p', null, t('Kept: rooms, dates, adult and child counts and the fact of each change, so occupancy history still reads. This cannot be undone.')),
    ],
    confirmLabel: t('Erase personal data'),
    danger: true,
  };
}
