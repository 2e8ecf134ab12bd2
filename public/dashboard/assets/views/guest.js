// #/guest/<id>: every field, the room history, and what staff may do: edit and move a
// walk-in guest, check out anyone (a PMS guest only after an explicit confirmation,
// because the PMS would otherwise send the guest again on its next sync).

import { api, enc } from '../api.js';
import { h, pageHeading, replaceChildren, sourceBadge, timeEl, stayDates, dateEl } from '../dom.js';
import { announce, busy, clearAlert, clearFieldErrors, confirmDialog, showError, showFormErrors } from '../ui.js';
import { guestFieldsets, readGuestForm, patchPayload } from '../guest-fields.js';
import { t, tk } from '../i18n.js';
import { roomHelp } from '../room-help.js';
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

export function guestView(ctx) {
  ctx.setTitle(t('Guest'));
  const [id] = ctx.params;
  const heading = pageHeading(t('Guest'));
  const subtitle = h('p', { class: 'subtitle' });
  const actions = h('div', { class: 'view-actions' });
  const details = h('div', { class: 'detail-body' }, h('p', { class: 'loading' }, t('Loading…')));
  const editArea = h('div');
  const node = h(
    'section',
    { class: 'view view-guest', dataset: { guestId: id } },
    // Back to the page the guest was opened from (board, list, activity…), not always the board.
    h('p', { class: 'breadcrumb' }, h('a', { href: ctx.back.hash }, `← ${t(ctx.back.label)}`)),
    h('div', { class: 'view-head' }, h('div', null, heading, subtitle), actions),
    details,
    editArea,
  );

  let guest = null;
  let form = null;
  let formGuest = null; // the guest as it was when the form was filled (the diff's base)
  let dirty = false;
  let loading = null;
  let updateRooms = () => {}; // the edit form's room help (room-help.js), while it is shown

  let background = false;
  async function load() {
    const data = await api.get(`/guests/${enc(id)}`, { signal: ctx.signal, background });
    if (ctx.signal.aborted) return;
    const before = guest;
    guest = data.guest;
    render(data.rooms ?? []);
    if (before && before.status === 'active' && guest.status !== 'active') announce(t('{name} has been checked out.', { name: guestName(guest) }));
  }

  /** Refetch; calls during a fetch are coalesced into one more fetch right after it. */
  let again = false;
  function reload({ live = false } = {}) {
    background = loading ? background && live : live;
    if (loading) {
      again = true;
      return loading;
    }
    loading = (async () => {
      do {
        again = false;
        try {
          await load();
        } catch (err) {
          if (err.status === 404) renderMissing();
          else showError(err, t('Could not load the guest'));
        }
      } while (again && !ctx.signal.aborted);
    })().finally(() => {
      loading = null;
    });
    return loading;
  }

  function renderMissing() {
    heading.textContent = t('Guest not found');
    subtitle.textContent = '';
    replaceChildren(actions);
    replaceChildren(details, h('p', null, t('There is no such guest in this hotel.')), h('p', null, h('a', { href: '#/board' }, t('Back to the board'))));
    replaceChildren(editArea);
  }

  function render(rooms) {
    const active = guest.status === 'active';
    const isPms = guest.source === 'pms';
    ctx.setTitle(guestName(guest));
    heading.textContent = guestName(guest);
    node.dataset.source = guest.source;
    node.dataset.status = guest.status;
    replaceChildren(
      subtitle,
      `${t('Room {room}', { room: guest.roomNumber })} · `,
      stayDates(guest),
      ' · ',
      sourceBadge(guest.source),
      ' · ',
      h('span', { class: ['status-pill', active ? 'status-active' : 'status-checked-out'] }, active ? t('In house') : t('Checked out')),
    );

    const hadFocus = actions.contains(document.activeElement);
    replaceChildren(
      actions,
      active ? checkoutButton(isPms) : null,
      ctx.isAdmin ? exportLink() : null,
      ctx.isAdmin && !active && !guest.anonymisedAt ? eraseButton() : null,
    );
    if (hadFocus) actions.querySelector('button')?.focus();
    replaceChildren(details, detailList(), historyTable(rooms));

    if (!active) {
      replaceChildren(editArea);
      form = null;
    } else if (isPms) {
      replaceChildren(
        editArea,
        h(
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
        ),
      );
      form = null;
    } else if (!form || !formGuest || (!dirty && formGuest.updatedAt !== guest.updatedAt)) {
      replaceChildren(editArea, editSection());
    } else if (formGuest.updatedAt !== guest.updatedAt) {
      // Someone else changed the guest while this user is editing: keep the typing,
      // say so. Saving sends only the fields this user changed.
      editArea.querySelector('.stale-note')?.removeAttribute('hidden');
    }
  }

  function detailList() {
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
  function roomFrom(r, first) {
    if (first) return [dateEl(guest.checkInDate), ' ', h('span', { class: 'hint' }, t('(arrival)'))];
    return [timeEl(r.assignedAt), ' ', h('span', { class: 'hint' }, t('(moved in)'))];
  }

  /** When a room of the stay ended: the move out or the check-out, or "now" with the planned departure. */
  function roomUntil(r, last) {
    if (r.releasedAt) return [timeEl(r.releasedAt), ' ', h('span', { class: 'hint' }, last ? t('(checked out)') : t('(moved out)'))];
    if (guest.status !== 'active') return EMPTY;
    return [h('span', { class: 'current' }, t('now')), ' ', h('span', { class: 'hint' }, t('(departure {date})', { date: formatDate(guest.checkOutDate) }))];
  }

  function historyTable(rooms) {
    const byTime = [...rooms].sort((a, b) => String(a.assignedAt).localeCompare(String(b.assignedAt)));
    const firstOf = byTime[0];
    const lastOf = byTime.at(-1);
    const sorted = [...byTime].reverse();
    return h(
      'section',
      { class: 'panel', 'aria-labelledby': 'room-history' },
      h('h2', { id: 'room-history' }, t('Room history')),
      sorted.length === 0
        ? h('p', null, t('No room assignments recorded.'))
        : h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'table table-rooms' },
              h(
                'thead',
                null,
                h('tr', null, h('th', { scope: 'col' }, t('Room')), h('th', { scope: 'col' }, t('From')), h('th', { scope: 'col' }, t('Until'))),
              ),
              h(
                'tbody',
                null,
                sorted.map((r) =>
                  h(
                    'tr',
                    { dataset: { room: r.roomNumber } },
                    h('td', { class: 'cell-room' }, r.roomNumber),
                    h('td', null, roomFrom(r, r === firstOf)),
                    h('td', null, roomUntil(r, r === lastOf)),
                  ),
                ),
              ),
            ),
          ),
    );
  }

  function editSection() {
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Save changes'));
    const reset = h('button', { type: 'button', class: 'btn' }, t('Discard changes'));
    const f = h(
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
    updateRooms = roomHelp(f, ctx, { action: 'move', current: guest.roomNumber });
    // The room list and the guests in house, read once the form is first shown.
    if (!ctx.rooms?.loaded) ctx.rooms?.refresh().catch(() => {});
    if (!ctx.roster.loaded) ctx.roster.refresh().catch(() => {});
    form = f;
    formGuest = guest;
    dirty = false;
    f.addEventListener('input', () => {
      dirty = true;
    });
    reset.addEventListener('click', () => {
      dirty = false;
      clearAlert();
      replaceChildren(editArea, editSection());
      announce(t('Changes discarded.'));
    });
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearFieldErrors(f);
      clearAlert();
      const { values, errors } = readGuestForm(f);
      if (errors.length > 0) {
        showFormErrors(f, { errors }, { prefix: t('Could not save') });
        return;
      }
      const patch = patchPayload(formGuest, values);
      if (Object.keys(patch).length === 0) {
        announce(t('Nothing to save: no field was changed.'));
        return;
      }
      await busy(submit, async () => {
        try {
          const result = await api.patch(`/guests/${enc(id)}`, patch);
          dirty = false;
          form = null;
          const moved = result.changes?.roomNumber;
          announce(moved ? t('Saved. Moved to room {room}.', { room: moved.to }) : t('Saved.'));
          ctx.roster.markChanged(id);
          await reload();
          editArea.querySelector('button[type=submit]')?.focus();
        } catch (err) {
          showFormErrors(f, err, { prefix: t('Could not save') });
        }
      });
    });
    return h(
      'section',
      { class: 'panel', 'aria-labelledby': 'edit-guest' },
      h('h2', { id: 'edit-guest' }, t('Edit guest')),
      h('p', { class: 'hint' }, t('Change the room here to move the guest. Empty an optional field to clear it.')),
      f,
    );
  }

  function checkoutButton(isPms) {
    const button = h('button', { type: 'button', class: 'btn btn-danger', 'data-action': 'checkout' }, t('Check out'));
    button.addEventListener('click', async () => {
      clearAlert();
      // A check-out frees the room at once and cannot be undone here: always confirm.
      const ok = await confirmDialog(
        isPms
          ? {
              title: t('Check out a PMS guest?'),
              message: [
                h(
                  'p',
                  null,
                  t('{name} (room {room}, PMS guest {id}) is managed by the PMS.', { name: guestName(guest), room: guest.roomNumber, id: guest.pmsGuestId }),
                ),
                h('p', null, t('The PMS will send this guest again on its next sync unless the guest is checked out there too.')),
              ],
              confirmLabel: t('Confirm check-out'),
              danger: true,
            }
          : {
              title: t('Check out this guest?'),
              message: [h('p', null, t('{name} leaves room {room}; the room is free at once.', { name: guestName(guest), room: guest.roomNumber }))],
              confirmLabel: t('Confirm check-out'),
              danger: true,
            },
      );
      if (!ok) return;
      await busy(button, async () => {
        try {
          await api.post(`/guests/${enc(id)}/checkout`, isPms ? { confirmPmsGuest: true } : {});
          announce(t('{name} checked out of room {room}.', { name: guestName(guest), room: guest.roomNumber }));
          ctx.roster.markChanged(id);
          await reload();
        } catch (err) {
          showError(err, t('Could not check out'));
        }
      });
    });
    return button;
  }

  /** Art. 15: everything held about this guest, as a JSON file (admins). */
  function exportLink() {
    return h('a', { class: 'btn', href: `/dashboard/api/guests/${enc(id)}/export`, download: '', 'data-action': 'export' }, t('Export personal data'));
  }

  /** Art. 17: erase a checked-out guest's personal data everywhere (admins), after a confirmation naming it all. */
  function eraseButton() {
    const button = h('button', { type: 'button', class: 'btn btn-danger', 'data-action': 'erase' }, t('Erase personal data'));
    button.addEventListener('click', async () => {
      clearAlert();
      const name = guestName(guest);
      const ok = await confirmDialog({
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
      });
      if (!ok) return;
      await busy(button, async () => {
        try {
          const result = await api.post(`/guests/${enc(id)}/erase`, {});
          const e = result.erased;
          announce(
            t('Personal data erased: {guests} stays, {activity} activity entries, {idempotency} stored responses and {requestLog} request-log bodies.', e),
          );
          await reload();
        } catch (err) {
          showError(err, t('Could not erase the personal data'));
        }
      });
    });
    return button;
  }

  reload();
  // Any roster change may concern this guest (a move, an update, a PMS checkout).
  // The edit form's room help follows the room list and the guests in house (the live stream keeps them fresh).
  const unsubscribe = [ctx.rooms?.subscribe(() => updateRooms()), ctx.roster.subscribe(() => updateRooms())];
  return { node, onLive: () => reload({ live: true }), destroy: () => unsubscribe.forEach((fn) => fn?.()) };
}
