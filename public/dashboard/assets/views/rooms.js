// #/rooms (admin): the hotel's room list (README.md: Rooms), which the board shows with
// its guests: vacant rooms, rooms out of order with their reason. Import a CSV (pasted or
// a file), add, edit and remove rooms, and adopt the rooms the PMS has used. The list
// holds no personal data: an out-of-order reason is about the room.

import { api, enc } from '../api.js';
import { byRoom, h, pageHeading, replaceChildren } from '../dom.js';
import { announce, busy, clearAlert, clearFieldErrors, confirmDialog, field, showError, showFormErrors } from '../ui.js';
import { currentLanguage, t, tk } from '../i18n.js';
import { orEmpty } from '../format.js';

const CSV_HEADER = 'room,floor,type,out_of_order_reason';
const CSV_EXAMPLE = `${CSV_HEADER}\n101,1,Double,\n102,1,Single,Water damage in the bathroom\n"Suite A",7,"Suite, sea view",`;

// A line's problem in the page's language, by its code; English shows the server's own sentence.
const LINE_PROBLEMS = {
  REQUIRED: tk('a value is missing: the room number on a room’s line, the column room in the header.'),
  TOO_LONG: tk('a value is too long: shorten it.'),
  INVALID_FORMAT: tk('the line cannot be read: check the double quotes and the number of fields, and remove invisible characters.'),
  DUPLICATE: tk('the same room or column appears twice: keep one.'),
  UNKNOWN_FIELD: tk('the header names a column a room list does not have: use room, floor, type, out_of_order_reason.'),
  TOO_MANY: tk('a room list holds at most 5,000 rooms: remove the lines that are not rooms of this hotel.'),
};

function lineError(e) {
  if (currentLanguage() === 'en' || !LINE_PROBLEMS[e.code]) return e.message;
  const problem = t(LINE_PROBLEMS[e.code]);
  return e.column
    ? t('Line {line}, column {column}: {problem}', { line: e.line, column: e.column, problem })
    : t('Line {line}: {problem}', { line: e.line, problem });
}

/** The four fields of a room, prefilled from `room` (the add form and a row's edit form). */
function roomFieldsFor(room = {}) {
  return [
    field({ name: 'roomNumber', label: t('Room'), required: true, value: room.roomNumber ?? '', attrs: { autocomplete: 'off', maxlength: '20' } }),
    field({
      name: 'floor',
      label: t('Floor'),
      value: room.floor ?? '',
      hint: t('Blank: from a room number such as 305 (floor 3)'),
      attrs: { autocomplete: 'off', maxlength: '10' },
    }),
    field({ name: 'type', label: t('Type or name'), value: room.type ?? '', attrs: { autocomplete: 'off', maxlength: '60' } }),
    field({
      name: 'outOfOrderReason',
      label: t('Out of order: reason'),
      value: room.outOfOrderReason ?? '',
      hint: t('Blank: the room is in order. Describe the room, never a guest.'),
      attrs: { autocomplete: 'off', maxlength: '200' },
    }),
  ];
}

function readRoomForm(form) {
  const value = (name) => form.elements.namedItem(name).value.trim();
  return { roomNumber: value('roomNumber'), floor: value('floor') || null, type: value('type') || null, outOfOrderReason: value('outOfOrderReason') || null };
}

export function roomsView(ctx) {
  ctx.setTitle(t('Rooms'));
  const tableSlot = h('div', null, h('p', { class: 'loading' }, t('Loading…')));
  const countLine = h('p', { class: 'summary', 'aria-live': 'polite' });

  // Import
  const csv = h('textarea', {
    id: 'rooms-csv',
    name: 'csv',
    class: 'rooms-csv',
    spellcheck: 'false',
    'aria-describedby': 'rooms-csv-hint',
    placeholder: CSV_EXAMPLE,
  });
  const file = h('input', { type: 'file', id: 'rooms-file', accept: '.csv,text/csv,text/plain' });
  file.addEventListener('change', async () => {
    const chosen = file.files?.[0];
    if (!chosen) return;
    csv.value = await chosen.text();
  });
  const importErrors = h('div', { class: 'rooms-errors', role: 'alert' });
  const importButton = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Import'));
  const importForm = h(
    'form',
    { class: 'form', novalidate: true, 'aria-labelledby': 'rooms-import' },
    h(
      'p',
      { id: 'rooms-csv-hint', class: 'hint' },
      t(
        'One room a line, after a header line that names the columns: room (required), floor, type, out_of_order_reason. Commas or semicolons. The import replaces the whole list; when a line has a problem, nothing is changed.',
      ),
    ),
    h('pre', { class: 'code-sample' }, CSV_EXAMPLE),
    h('div', { class: 'field' }, h('label', { for: 'rooms-file' }, t('CSV file')), file),
    h('div', { class: 'field' }, h('label', { for: 'rooms-csv' }, t('Or paste the CSV')), csv),
    importErrors,
    h('div', { class: 'form-actions' }, importButton),
  );
  importForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearAlert();
    replaceChildren(importErrors);
    await busy(importButton, async () => {
      try {
        const result = await api.post('/rooms/import', { csv: csv.value });
        announce(t('Room list imported: {rooms} rooms ({added} added, {updated} changed, {removed} removed).', result));
        csv.value = '';
        file.value = '';
        await ctx.rooms.refresh();
      } catch (err) {
        if (err.code === 'ROOM_LIST_INVALID' && Array.isArray(err.errors)) {
          const more = err.body?.errorsNotShown;
          replaceChildren(
            importErrors,
            h('p', null, t('Nothing was imported. Fix these lines and import again:')),
            h(
              'ul',
              null,
              err.errors.map((x) => h('li', { dataset: { line: String(x.line) } }, lineError(x))),
            ),
            more ? h('p', null, t('{n} more problems not listed.', { n: more })) : null,
          );
          csv.focus();
        } else showError(err, t('Could not import the room list'));
      }
    });
  });

  // Adopt
  const adoptSlot = h('div');
  const findButton = h('button', { type: 'button', class: 'btn', 'data-action': 'find-unlisted' }, t('Find rooms the PMS has used'));
  findButton.addEventListener('click', () =>
    busy(findButton, async () => {
      clearAlert();
      try {
        const { roomNumbers } = await api.get('/rooms/unlisted', { signal: ctx.signal });
        showUnlisted(roomNumbers ?? []);
      } catch (err) {
        showError(err, t('Could not list the rooms the PMS has used'));
      }
    }),
  );
  function showUnlisted(roomNumbers) {
    if (roomNumbers.length === 0) {
      replaceChildren(adoptSlot, h('p', { role: 'status' }, t('Every room the PMS has used is on the list.')));
      return;
    }
    const add = h('button', { type: 'button', class: 'btn btn-primary', 'data-action': 'adopt' }, t('Add these {n} rooms', { n: roomNumbers.length }));
    add.addEventListener('click', () =>
      busy(add, async () => {
        try {
          const { added } = await api.post('/rooms/adopt', { roomNumbers });
          announce(t('{n} rooms added to the list.', { n: added.length }));
          replaceChildren(adoptSlot);
          await ctx.rooms.refresh();
        } catch (err) {
          showError(err, t('Could not add the rooms'));
        }
      }),
    );
    replaceChildren(
      adoptSlot,
      h('p', null, t('Rooms the roster has held that are not on the list:')),
      h('p', { class: 'unlisted-rooms' }, roomNumbers.join(', ')),
      add,
    );
  }

  // Add
  const addButton = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Add room'));
  const addForm = h(
    'form',
    { class: 'form form-inline', novalidate: true, 'aria-labelledby': 'rooms-add' },
    h('div', { class: 'field-grid' }, roomFieldsFor()),
    h('div', { class: 'form-actions' }, addButton),
  );
  addForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearAlert();
    clearFieldErrors(addForm);
    await busy(addButton, async () => {
      try {
        const { room } = await api.post('/rooms', readRoomForm(addForm));
        announce(t('Room {room} added.', { room: room.roomNumber }));
        addForm.reset();
        await ctx.rooms.refresh();
      } catch (err) {
        showFormErrors(addForm, err, { prefix: t('Could not add the room') });
      }
    });
  });

  const node = h(
    'section',
    { class: 'view view-rooms' },
    pageHeading(t('Rooms')),
    h(
      'p',
      { class: 'hint' },
      t('The hotel’s rooms: the board shows each one, vacant rooms too. A PMS may still put a guest in a room that is not on the list.'),
    ),
    countLine,
    tableSlot,
    h('section', { class: 'panel', 'aria-labelledby': 'rooms-add' }, h('h2', { id: 'rooms-add' }, t('Add a room')), addForm),
    h('section', { class: 'panel', 'aria-labelledby': 'rooms-import' }, h('h2', { id: 'rooms-import' }, t('Import a CSV')), importForm),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'rooms-adopt' },
      h('h2', { id: 'rooms-adopt' }, t('Rooms the PMS has used')),
      h('p', { class: 'hint' }, t('Lists the rooms guests have been in that are not on the list yet, to add them in one step.')),
      findButton,
      adoptSlot,
    ),
  );

  let editing = null; // the id of the room whose row is a form

  function renderTable(rooms) {
    countLine.textContent = t('{n} rooms on the list', { n: rooms.length });
    if (rooms.length === 0) {
      replaceChildren(tableSlot, h('p', { class: 'empty' }, t('No rooms yet: import a CSV, add rooms one by one, or add the rooms the PMS has used.')));
      return;
    }
    replaceChildren(
      tableSlot,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'table table-rooms' },
          h('caption', { class: 'visually-hidden' }, t('Rooms')),
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              [tk('Room'), tk('Floor'), tk('Type or name'), tk('Out of order'), tk('Actions')].map((text) => h('th', { scope: 'col' }, t(text))),
            ),
          ),
          h(
            'tbody',
            null,
            byRoom(rooms).map((r) => (r.id === editing ? editRow(r) : roomRow(r))),
          ),
        ),
      ),
    );
  }

  function roomRow(r) {
    const edit = h('button', { type: 'button', class: 'btn btn-small', 'data-action': 'edit' }, t('Edit'));
    edit.addEventListener('click', () => {
      editing = r.id;
      renderTable(ctx.rooms.rooms);
      tableSlot.querySelector('tr[data-editing] input')?.focus();
    });
    const remove = h('button', { type: 'button', class: 'btn btn-danger btn-small', 'data-action': 'remove' }, t('Remove'));
    remove.addEventListener('click', () => removeRoom(r, remove));
    let back = null;
    if (r.outOfOrderReason) {
      back = h('button', { type: 'button', class: 'btn btn-small', 'data-action': 'in-order' }, t('Back in order'));
      back.addEventListener('click', () =>
        busy(back, async () => {
          try {
            await api.patch(`/rooms/${enc(r.id)}`, { outOfOrderReason: null });
            announce(t('Room {room} is back in order.', { room: r.roomNumber }));
            await ctx.rooms.refresh();
          } catch (err) {
            showError(err, t('Could not change the room'));
          }
        }),
      );
    }
    return h(
      'tr',
      { dataset: { room: r.roomNumber, state: r.outOfOrderReason ? 'out-of-order' : 'in-order' } },
      h('th', { scope: 'row' }, r.roomNumber),
      h('td', null, orEmpty(r.floor)),
      h('td', null, orEmpty(r.type)),
      h('td', null, r.outOfOrderReason ?? t('No')),
      h('td', { class: 'actions' }, edit, ' ', back, back ? ' ' : null, remove),
    );
  }

  function editRow(r) {
    const save = h('button', { type: 'submit', class: 'btn btn-primary btn-small' }, t('Save'));
    const cancel = h('button', { type: 'button', class: 'btn btn-small' }, t('Cancel'));
    const form = h(
      'form',
      { class: 'form form-inline', novalidate: true, 'aria-label': t('Edit room {room}', { room: r.roomNumber }) },
      h('div', { class: 'field-grid' }, roomFieldsFor(r)),
      h('div', { class: 'form-actions' }, save, cancel),
    );
    cancel.addEventListener('click', () => {
      editing = null;
      renderTable(ctx.rooms.rooms);
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearAlert();
      clearFieldErrors(form);
      await busy(save, async () => {
        try {
          const values = readRoomForm(form);
          // An unchanged number keeps its floor unless the floor was edited.
          const { room } = await api.patch(`/rooms/${enc(r.id)}`, values);
          editing = null;
          announce(t('Room {room} saved.', { room: room.roomNumber }));
          await ctx.rooms.refresh();
        } catch (err) {
          showFormErrors(form, err, { prefix: t('Could not change the room') });
        }
      });
    });
    return h('tr', { dataset: { room: r.roomNumber, editing: 'true' } }, h('td', { colspan: '5' }, form));
  }

  async function removeRoom(r, button) {
    clearAlert();
    const ok = await confirmDialog({
      title: t('Remove room {room}?', { room: r.roomNumber }),
      message: t('The board no longer shows the room when it is vacant. A guest in it stays, marked “Not on the room list”.'),
      confirmLabel: t('Remove room'),
      danger: true,
    });
    if (!ok) return;
    await busy(button, async () => {
      try {
        await api.post(`/rooms/${enc(r.id)}/remove`, {});
        announce(t('Room {room} removed.', { room: r.roomNumber }));
        await ctx.rooms.refresh();
        node.querySelector('h1')?.focus();
      } catch (err) {
        showError(err, t('Could not remove the room'));
      }
    });
  }

  const unsubscribe = ctx.rooms.subscribe(renderTable);
  if (ctx.rooms.loaded) renderTable(ctx.rooms.rooms);
  ctx.rooms.refresh().catch((err) => showError(err, t('Could not load the room list')));
  return { node, destroy: unsubscribe };
}
