// #/guest/<id>: every field, the room history, and what staff may do: edit and move a
// walk-in guest, check out anyone (a PMS guest only after an explicit confirmation,
// because the PMS would otherwise send the guest again on its next sync).

import { api, enc } from '../api.js';
import { h, pageHeading, replaceChildren, guestName, sourceBadge, orEmpty, timeEl, formatDateTime, EMPTY } from '../dom.js';
import { announce, busy, clearAlert, clearFieldErrors, confirmDialog, showError, showFormErrors } from '../ui.js';
import { guestFieldsets, readGuestForm, patchPayload } from '../guest-fields.js';

const DETAIL_FIELDS = [
  ['roomNumber', 'Room'],
  ['lastName', 'Last name'],
  ['firstName', 'First name'],
  ['checkInDate', 'Check-in'],
  ['checkOutDate', 'Check-out'],
  ['adults', 'Adults'],
  ['children', 'Children'],
  ['email', 'Email'],
  ['phone', 'Phone'],
  ['language', 'Language'],
  ['nationality', 'Nationality'],
];

export function guestView(ctx) {
  ctx.setTitle('Guest');
  const [id] = ctx.params;
  const heading = pageHeading('Guest');
  const subtitle = h('p', { class: 'subtitle' });
  const actions = h('div', { class: 'view-actions' });
  const details = h('div', { class: 'detail-body' }, h('p', { class: 'loading' }, 'Loading…'));
  const editArea = h('div');
  const node = h(
    'section',
    { class: 'view view-guest', dataset: { guestId: id } },
    // Back to the page the guest was opened from (board, list, activity…), not always the board.
    h('p', { class: 'breadcrumb' }, h('a', { href: ctx.back.hash }, `← ${ctx.back.label}`)),
    h('div', { class: 'view-head' }, h('div', null, heading, subtitle), actions),
    details,
    editArea,
  );

  let guest = null;
  let form = null;
  let formGuest = null; // the guest as it was when the form was filled (the diff's base)
  let dirty = false;
  let loading = null;

  let background = false;
  async function load() {
    const data = await api.get(`/guests/${enc(id)}`, { signal: ctx.signal, background });
    if (ctx.signal.aborted) return;
    const before = guest;
    guest = data.guest;
    render(data.rooms ?? []);
    if (before && before.status === 'active' && guest.status !== 'active') announce(`${guestName(guest)} has been checked out.`);
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
          else showError(err, 'Could not load the guest');
        }
      } while (again && !ctx.signal.aborted);
    })().finally(() => {
      loading = null;
    });
    return loading;
  }

  function renderMissing() {
    heading.textContent = 'Guest not found';
    subtitle.textContent = '';
    replaceChildren(actions);
    replaceChildren(details, h('p', null, 'There is no such guest in this hotel.'), h('p', null, h('a', { href: '#/board' }, 'Back to the board')));
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
      `Room ${guest.roomNumber} · `,
      sourceBadge(guest.source),
      ' · ',
      h('span', { class: ['status-pill', active ? 'status-active' : 'status-checked-out'] }, active ? 'In house' : 'Checked out'),
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
          h('h2', { id: 'pms-owned' }, 'Managed by the PMS'),
          h(
            'p',
            null,
            'This guest comes from the hotel’s PMS, which owns the data. Change it in the PMS: the change arrives here with its next update or sync. Edits made here would be overwritten.',
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
      ...DETAIL_FIELDS.map(([key, label]) => [label, orEmpty(guest[key]), key]),
      ['Source', guest.source === 'pms' ? 'PMS' : 'Walk-in (entered by staff)', 'source'],
      ['PMS guest ID', orEmpty(guest.pmsGuestId), 'pmsGuestId'],
      ['Status', guest.status === 'active' ? 'Active (in house)' : 'Checked out', 'status'],
      ['Created', formatDateTime(guest.createdAt), 'createdAt'],
      ['Updated', formatDateTime(guest.updatedAt), 'updatedAt'],
      ...(guest.anonymisedAt ? [['Personal data', `Removed ${formatDateTime(guest.anonymisedAt)}: room, dates and counts are kept`, 'anonymisedAt']] : []),
    ];
    return h(
      'section',
      { class: 'panel', 'aria-labelledby': 'guest-details' },
      h('h2', { id: 'guest-details' }, 'Details'),
      h(
        'dl',
        { class: 'details' },
        rows.map(([label, value, key]) => h('div', { class: 'detail', dataset: { field: key } }, h('dt', null, label), h('dd', null, value))),
      ),
    );
  }

  function historyTable(rooms) {
    const sorted = [...rooms].sort((a, b) => String(b.assignedAt).localeCompare(String(a.assignedAt)));
    return h(
      'section',
      { class: 'panel', 'aria-labelledby': 'room-history' },
      h('h2', { id: 'room-history' }, 'Room history'),
      sorted.length === 0
        ? h('p', null, 'No room assignments recorded.')
        : h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              { class: 'table table-rooms' },
              h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Room'), h('th', { scope: 'col' }, 'From'), h('th', { scope: 'col' }, 'Until'))),
              h(
                'tbody',
                null,
                sorted.map((r) =>
                  h(
                    'tr',
                    { dataset: { room: r.roomNumber } },
                    h('td', { class: 'cell-room' }, r.roomNumber),
                    h('td', null, timeEl(r.assignedAt)),
                    h('td', null, r.releasedAt ? timeEl(r.releasedAt) : h('span', { class: 'current' }, guest.status === 'active' ? 'now' : EMPTY)),
                  ),
                ),
              ),
            ),
          ),
    );
  }

  function editSection() {
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save changes');
    const reset = h('button', { type: 'button', class: 'btn' }, 'Discard changes');
    const f = h(
      'form',
      { class: 'form', novalidate: true, 'aria-labelledby': 'edit-guest' },
      h(
        'p',
        { class: 'stale-note', hidden: true, role: 'note' },
        'This guest was changed elsewhere while you were editing. Saving sends only the fields you changed.',
      ),
      guestFieldsets(guest),
      h('div', { class: 'form-actions' }, submit, reset),
    );
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
      announce('Changes discarded.');
    });
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearFieldErrors(f);
      clearAlert();
      const values = readGuestForm(f);
      const patch = patchPayload(formGuest, values);
      if (Object.keys(patch).length === 0) {
        announce('Nothing to save: no field was changed.');
        return;
      }
      await busy(submit, async () => {
        try {
          const result = await api.patch(`/guests/${enc(id)}`, patch);
          dirty = false;
          form = null;
          const moved = result.changes?.roomNumber;
          announce(moved ? `Saved. Moved to room ${moved.to}.` : 'Saved.');
          ctx.roster.markChanged(id);
          await reload();
          editArea.querySelector('button[type=submit]')?.focus();
        } catch (err) {
          showFormErrors(f, err, { prefix: 'Could not save' });
        }
      });
    });
    return h(
      'section',
      { class: 'panel', 'aria-labelledby': 'edit-guest' },
      h('h2', { id: 'edit-guest' }, 'Edit guest'),
      h('p', { class: 'hint' }, 'Change the room here to move the guest. Empty an optional field to clear it.'),
      f,
    );
  }

  function checkoutButton(isPms) {
    const button = h('button', { type: 'button', class: 'btn btn-danger', 'data-action': 'checkout' }, 'Check out');
    button.addEventListener('click', async () => {
      clearAlert();
      // A check-out frees the room at once and cannot be undone here: always confirm.
      const ok = await confirmDialog(
        isPms
          ? {
              title: 'Check out a PMS guest?',
              message: [
                h('p', null, `${guestName(guest)} (room ${guest.roomNumber}, PMS guest ${guest.pmsGuestId}) is managed by the PMS.`),
                h('p', null, 'The PMS will send this guest again on its next sync unless the guest is checked out there too.'),
              ],
              confirmLabel: 'Confirm check-out',
              danger: true,
            }
          : {
              title: 'Check out this guest?',
              message: [h('p', null, `${guestName(guest)} leaves room ${guest.roomNumber}; the room is free at once.`)],
              confirmLabel: 'Confirm check-out',
              danger: true,
            },
      );
      if (!ok) return;
      await busy(button, async () => {
        try {
          await api.post(`/guests/${enc(id)}/checkout`, isPms ? { confirmPmsGuest: true } : {});
          announce(`${guestName(guest)} checked out of room ${guest.roomNumber}.`);
          ctx.navigate('#/board');
        } catch (err) {
          showError(err, 'Could not check out');
        }
      });
    });
    return button;
  }

  /** Art. 15: everything held about this guest, as a JSON file (admins). */
  function exportLink() {
    return h('a', { class: 'btn', href: `/dashboard/api/guests/${enc(id)}/export`, download: '', 'data-action': 'export' }, 'Export personal data');
  }

  /** Art. 17: erase a checked-out guest's personal data everywhere (admins), after a confirmation naming it all. */
  function eraseButton() {
    const button = h('button', { type: 'button', class: 'btn btn-danger', 'data-action': 'erase' }, 'Erase personal data');
    button.addEventListener('click', async () => {
      clearAlert();
      const name = guestName(guest);
      const ok = await confirmDialog({
        title: 'Erase this guest’s personal data?',
        message: [
          h(
            'p',
            null,
            guest.pmsGuestId
              ? `${name} (PMS guest ${guest.pmsGuestId}): every stay with this PMS guest id is included.`
              : `${name} (walk-in guest, room ${guest.roomNumber}).`,
          ),
          h(
            'p',
            null,
            'Erased: first and last name, phone, e-mail, language and nationality from the guest record, from its activity entries and from stored API responses, and every request-log body that names this guest.',
          ),
          h('p', null, 'Kept: rooms, dates, adult and child counts and the fact of each change, so occupancy history still reads. This cannot be undone.'),
        ],
        confirmLabel: 'Erase personal data',
        danger: true,
      });
      if (!ok) return;
      await busy(button, async () => {
        try {
          const result = await api.post(`/guests/${enc(id)}/erase`, {});
          const e = result.erased;
          announce(
            `Personal data erased: ${e.guests} stay${e.guests === 1 ? '' : 's'}, ${e.activity} activity entries, ${e.idempotency} stored responses and ${e.requestLog} request-log bodies.`,
          );
          await reload();
        } catch (err) {
          showError(err, 'Could not erase the personal data');
        }
      });
    });
    return button;
  }

  reload();
  // Any roster change may concern this guest (a move, an update, a PMS checkout).
  return { node, onLive: () => reload({ live: true }) };
}
