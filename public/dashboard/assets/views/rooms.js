// #/rooms (admin): the hotel's room list (README.md: Rooms), which the board shows with
// its guests: vacant rooms, rooms out of order with their reason. Import a CSV (pasted or
// a file), add, edit and remove rooms, and adopt the rooms the PMS has used. The list
// holds no personal data: an out-of-order reason is about the room.

import { api, enc } from '../api.js';
import { byRoom, h, pageHeading, replaceChildren } from '../dom.js';
import { act, field, showError } from '../ui.js';
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
  const store = roomStore(ctx);
  const page = roomsPage();
  let editing = null; // the id of the room whose row is a form

  const render = (rooms = store.rooms) => renderRooms(page, rooms, editing, rowActions);
  const view = {
    stopEditing: () => {
      editing = null;
    },
    focusHeading: () => page.node.querySelector('h1')?.focus(),
    showUnlisted: (roomNumbers) =>
      replaceChildren(
        page.adoptSlot,
        unlistedRooms(roomNumbers, (button) => actions.adopt(roomNumbers, button)),
      ),
  };
  const actions = roomActions(store, page, view);
  const rowActions = {
    edit(r) {
      editing = r.id;
      render();
      page.tableSlot.querySelector('tr[data-editing] input')?.focus();
    },
    cancel() {
      editing = null;
      render();
    },
    save: actions.save,
    remove: actions.remove,
    backInOrder: actions.backInOrder,
  };

  page.importForm.addEventListener('submit', (e) => {
    e.preventDefault();
    actions.importCsv();
  });
  page.addForm.addEventListener('submit', (e) => {
    e.preventDefault();
    actions.add();
  });
  page.findButton.addEventListener('click', actions.findUnlisted);

  const unsubscribe = store.subscribe(render);
  if (store.loaded) render();
  store.refresh().catch((err) => showError(err, t('Could not load the room list')));
  return { node: page.node, destroy: unsubscribe };
}

// ---------------------------------------------------------------------------
// Data: the room list (ctx.rooms keeps the latest answer and tells its listeners) and the
// changes to it.

function roomStore(ctx) {
  const list = ctx.rooms;
  const roomPath = (r) => `/rooms/${enc(r.id)}`;
  return {
    get rooms() {
      return list.rooms;
    },
    get loaded() {
      return list.loaded;
    },
    subscribe: (fn) => list.subscribe(fn),
    refresh: () => list.refresh(),
    add: async (values) => (await api.post('/rooms', values)).room,
    update: async (r, values) => (await api.patch(roomPath(r), values)).room,
    remove: (r) => api.post(`${roomPath(r)}/remove`, {}),
    /** { rooms, added, updated, removed } */
    importCsv: (csv) => api.post('/rooms/import', { csv }),
    unlisted: async () => (await api.get('/rooms/unlisted', { signal: ctx.signal })).roomNumbers ?? [],
    adopt: (roomNumbers) => api.post('/rooms/adopt', { roomNumbers }),
  };
}

/**
 * What each button and form does: send, announce, refetch the list. `view`: stopEditing(),
 * focusHeading(), showUnlisted(roomNumbers).
 */
function roomActions(store, page, view) {
  // A refetch that fails after a change says so with the change's words.
  const reload = (failed) => store.refresh().catch((err) => showError(err, failed));
  return { ...rowActions(store, view, reload), ...panelActions(store, page, view, reload) };
}

/** A row's buttons and its edit form. */
function rowActions(store, view, reload) {
  return {
    save: (r, form, button) =>
      act({
        button,
        form,
        // An unchanged number keeps its floor unless the floor was edited.
        run: async () => {
          const room = await store.update(r, readRoomForm(form));
          view.stopEditing();
          return room;
        },
        done: (room) => t('Room {room} saved.', { room: room.roomNumber }),
        after: () => reload(t('Could not change the room')),
        failed: t('Could not change the room'),
      }),
    backInOrder: (r, button) =>
      act({
        button,
        run: () => store.update(r, { outOfOrderReason: null }),
        done: t('Room {room} is back in order.', { room: r.roomNumber }),
        after: () => reload(t('Could not change the room')),
        failed: t('Could not change the room'),
      }),
    remove: (r, button) =>
      act({
        button,
        confirm: removeConfirm(r),
        run: () => store.remove(r),
        done: t('Room {room} removed.', { room: r.roomNumber }),
        after: () => store.refresh().then(view.focusHeading, (err) => showError(err, t('Could not remove the room'))),
        failed: t('Could not remove the room'),
      }),
  };
}

/** The add, import and adopt panels. */
function panelActions(store, page, view, reload) {
  return {
    importCsv: () => importRooms(store, page, reload),
    add: () =>
      act({
        button: page.addButton,
        form: page.addForm,
        run: () => store.add(readRoomForm(page.addForm)),
        done: (room) => t('Room {room} added.', { room: room.roomNumber }),
        after: () => {
          page.addForm.reset();
          return reload(t('Could not add the room'));
        },
        failed: t('Could not add the room'),
      }),
    findUnlisted: () => act({ button: page.findButton, run: store.unlisted, after: view.showUnlisted, failed: t('Could not list the rooms the PMS has used') }),
    adopt: (roomNumbers, button) =>
      act({
        button,
        run: () => store.adopt(roomNumbers),
        done: ({ added }) => t('{n} rooms added to the list.', { n: added.length }),
        after: () => {
          replaceChildren(page.adoptSlot);
          return reload(t('Could not add the rooms'));
        },
        failed: t('Could not add the rooms'),
      }),
  };
}

/** The import: the whole list replaced, or (a line with a problem) nothing, and the lines listed. */
function importRooms(store, page, reload) {
  const { csv, file, importErrors } = page;
  replaceChildren(importErrors);
  const invalidList = (err) => {
    if (err.code === 'ROOM_LIST_INVALID' && Array.isArray(err.errors)) return { invalid: err };
    throw err;
  };
  return act({
    button: page.importButton,
    run: () => store.importCsv(csv.value).catch(invalidList),
    done: (result) => (result.invalid ? null : t('Room list imported: {rooms} rooms ({added} added, {updated} changed, {removed} removed).', result)),
    after: (result) => {
      if (result.invalid) {
        replaceChildren(importErrors, lineErrors(result.invalid));
        csv.focus();
        return;
      }
      csv.value = '';
      file.value = '';
      return reload(t('Could not import the room list'));
    },
    failed: t('Could not import the room list'),
  });
}

// ---------------------------------------------------------------------------
// Render: DOM from data; handlers come in as arguments.

/** The page and its parts: the count, the table's slot, the add, import and adopt panels. */
function roomsPage() {
  const tableSlot = h('div', null, h('p', { class: 'loading' }, t('Loading…')));
  const countLine = h('p', { class: 'summary', 'aria-live': 'polite' });
  const add = addRoomForm();
  const importing = importForm();
  const adoptSlot = h('div');
  const findButton = h('button', { type: 'button', class: 'btn', 'data-action': 'find-unlisted' }, t('Find rooms the PMS has used'));
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
    h('section', { class: 'panel', 'aria-labelledby': 'rooms-add' }, h('h2', { id: 'rooms-add' }, t('Add a room')), add.addForm),
    h('section', { class: 'panel', 'aria-labelledby': 'rooms-import' }, h('h2', { id: 'rooms-import' }, t('Import a CSV')), importing.importForm),
    h(
      'section',
      { class: 'panel', 'aria-labelledby': 'rooms-adopt' },
      h('h2', { id: 'rooms-adopt' }, t('Rooms the PMS has used')),
      h('p', { class: 'hint' }, t('Lists the rooms guests have been in that are not on the list yet, to add them in one step.')),
      findButton,
      adoptSlot,
    ),
  );
  return { node, tableSlot, countLine, adoptSlot, findButton, ...add, ...importing };
}

function addRoomForm() {
  const addButton = h('button', { type: 'submit', class: 'btn btn-primary' }, t('Add room'));
  const addForm = h(
    'form',
    { class: 'form form-inline', novalidate: true, 'aria-labelledby': 'rooms-add' },
    h('div', { class: 'field-grid' }, roomFieldsFor()),
    h('div', { class: 'form-actions' }, addButton),
  );
  return { addForm, addButton };
}

/** The import form: a file (read into the text area) or pasted CSV, the lines' problems, the button. */
function importForm() {
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
  const form = h(
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
  return { importForm: form, csv, file, importErrors, importButton };
}

/** A refused import's problems, line by line. */
function lineErrors(err) {
  const more = err.body?.errorsNotShown;
  return [
    h('p', null, t('Nothing was imported. Fix these lines and import again:')),
    h(
      'ul',
      null,
      err.errors.map((x) => h('li', { dataset: { line: String(x.line) } }, lineError(x))),
    ),
    more ? h('p', null, t('{n} more problems not listed.', { n: more })) : null,
  ];
}

/** The rooms the PMS has used that are not on the list, and the button that adds them: `onAdopt(button)`. */
function unlistedRooms(roomNumbers, onAdopt) {
  if (roomNumbers.length === 0) return h('p', { role: 'status' }, t('Every room the PMS has used is on the list.'));
  const add = h('button', { type: 'button', class: 'btn btn-primary', 'data-action': 'adopt' }, t('Add these {n} rooms', { n: roomNumbers.length }));
  add.addEventListener('click', () => onAdopt(add));
  return [h('p', null, t('Rooms the roster has held that are not on the list:')), h('p', { class: 'unlisted-rooms' }, roomNumbers.join(', ')), add];
}

function removeConfirm(r) {
  return {
    title: t('Remove room {room}?', { room: r.roomNumber }),
    message: t('The board no longer shows the room when it is vacant. A guest in it stays, marked “Not on the room list”.'),
    confirmLabel: t('Remove room'),
    danger: true,
  };
}

/** The count and the table; the room `editing` (an id) shows as its form. `on`: roomRow's and editRow's handlers. */
function renderRooms({ countLine, tableSlot }, rooms, editing, on) {
  countLine.textContent = t('{n} rooms on the list', { n: rooms.length });
  replaceChildren(tableSlot, roomTable(rooms, editing, on));
}

function roomTable(rooms, editing, on) {
  if (rooms.length === 0) return h('p', { class: 'empty' }, t('No rooms yet: import a CSV, add rooms one by one, or add the rooms the PMS has used.'));
  const head = [tk('Room'), tk('Floor'), tk('Type or name'), tk('Out of order'), tk('Actions')].map((text) => h('th', { scope: 'col' }, t(text)));
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table table-rooms' },
      h('caption', { class: 'visually-hidden' }, t('Rooms')),
      h('thead', null, h('tr', null, head)),
      h(
        'tbody',
        null,
        byRoom(rooms).map((r) => (r.id === editing ? editRow(r, on) : roomRow(r, on))),
      ),
    ),
  );
}

/** A room's row; `on`: edit(r), remove(r, button), backInOrder(r, button). */
function roomRow(r, on) {
  const button = (action, label, extra = '') => h('button', { type: 'button', class: `btn ${extra}btn-small`, 'data-action': action }, label);
  const edit = button('edit', t('Edit'));
  edit.addEventListener('click', () => on.edit(r));
  const remove = button('remove', t('Remove'), 'btn-danger ');
  remove.addEventListener('click', () => on.remove(r, remove));
  const back = r.outOfOrderReason ? button('in-order', t('Back in order')) : null;
  back?.addEventListener('click', () => on.backInOrder(r, back));
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

/** A room's row as its edit form; `on`: save(r, form, button), cancel(). */
function editRow(r, on) {
  const save = h('button', { type: 'submit', class: 'btn btn-primary btn-small' }, t('Save'));
  const cancel = h('button', { type: 'button', class: 'btn btn-small' }, t('Cancel'));
  const form = h(
    'form',
    { class: 'form form-inline', novalidate: true, 'aria-label': t('Edit room {room}', { room: r.roomNumber }) },
    h('div', { class: 'field-grid' }, roomFieldsFor(r)),
    h('div', { class: 'form-actions' }, save, cancel),
  );
  cancel.addEventListener('click', () => on.cancel());
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    on.save(r, form, save);
  });
  return h('tr', { dataset: { room: r.roomNumber, editing: 'true' } }, h('td', { colspan: '5' }, form));
}
