// #/guest/<id>: every field, the room history, and what staff may do: edit and move a
// walk-in guest, check out anyone (a PMS guest only after an explicit confirmation,
// because the PMS would otherwise send the guest again on its next sync).
// Data here (load, the latest answer, the actions); the DOM in guest-render.js.

import { api, enc } from '../api.js';
import { replaceChildren } from '../dom.js';
import { act, announce, clearAlert, clearFieldErrors, showError, showFormErrors } from '../ui.js';
import { readGuestForm, patchPayload } from '../guest-fields.js';
import { t } from '../i18n.js';
import { roomHelp } from '../room-help.js';
import { guestName } from '../format.js';
import { coalescing } from '../flow.js';
import { checkoutConfirm, editSection, eraseConfirm, guestPage, pmsNote, renderGuest, renderMissing } from './guest-render.js';

/**
 * The guest's data: `reload()` refetches (calls during a fetch coalesce into one more fetch
 * after it; `live` ones run in the background), `state` keeps the latest answer, and the
 * actions post. `onData(before)` runs after each answer with the guest it replaced.
 */
function guestData(id, signal, { onData, onMissing }) {
  const state = { guest: null, rooms: [] };
  const fetcher = coalescing(async ({ background }) => {
    if (signal.aborted) return;
    try {
      const data = await api.get(`/guests/${enc(id)}`, { signal, background });
      if (signal.aborted) return;
      const before = state.guest;
      state.guest = data.guest;
      state.rooms = data.rooms ?? [];
      onData(before);
    } catch (err) {
      if (err.status === 404) onMissing();
      else showError(err, t('Could not load the guest'));
    }
  });
  return {
    state,
    reload: ({ live = false } = {}) => fetcher.run({ background: live }),
    save: (patch) => api.patch(`/guests/${enc(id)}`, patch),
    checkOut: (isPms) => api.post(`/guests/${enc(id)}/checkout`, isPms ? { confirmPmsGuest: true } : {}),
    erase: () => api.post(`/guests/${enc(id)}/erase`, {}),
  };
}

/**
 * Saves the edit form: its own checks first, then only the fields changed since `base` (the
 * guest the form was filled from), nothing when none was. `saved()` runs once the server took
 * the change, before the announcement; `after()` then reloads.
 */
async function saveChanges(f, submit, { base, data, saved, after }) {
  clearFieldErrors(f);
  clearAlert();
  const { values, errors } = readGuestForm(f);
  if (errors.length > 0) return showFormErrors(f, { errors }, { prefix: t('Could not save') });
  const patch = patchPayload(base, values);
  if (Object.keys(patch).length === 0) return announce(t('Nothing to save: no field was changed.'));
  return act({
    button: submit,
    form: f,
    failed: t('Could not save'),
    run: async () => {
      const result = await data.save(patch);
      saved();
      return result;
    },
    done: (result) => (result.changes?.roomNumber ? t('Saved. Moved to room {room}.', { room: result.changes.roomNumber.to }) : t('Saved.')),
    after,
  });
}

/**
 * The edit form of an in-house walk-in guest: the guest it was filled from (the diff's base)
 * and whether the user has typed since. A change made elsewhere replaces an untouched form;
 * one being edited keeps the typing and says so.
 */
function guestEditor(ctx, id, data, editArea) {
  let form = null;
  let formGuest = null;
  let dirty = false;
  let updateRooms = () => {}; // the edit form's room help (room-help.js), while it is shown

  function show() {
    const guest = data.state.guest;
    const edit = editSection(guest, {
      onSubmit: save,
      onReset: discard,
      onInput: () => {
        dirty = true;
      },
    });
    updateRooms = roomHelp(edit.form, ctx, { action: 'move', current: guest.roomNumber });
    // The room list and the guests in house, read once the form is first shown.
    if (!ctx.rooms?.loaded) ctx.rooms?.refresh().catch(() => {});
    if (!ctx.roster.loaded) ctx.roster.refresh().catch(() => {});
    form = edit.form;
    formGuest = guest;
    dirty = false;
    replaceChildren(editArea, edit.section);
  }

  function discard() {
    dirty = false;
    clearAlert();
    show();
    announce(t('Changes discarded.'));
  }

  const save = (f, submit) =>
    saveChanges(f, submit, {
      base: formGuest,
      data,
      saved: () => {
        dirty = false;
        form = null;
      },
      after: async () => {
        ctx.roster.markChanged(id);
        await data.reload();
        editArea.querySelector('button[type=submit]')?.focus();
      },
    });

  /** After each answer: the form, the PMS's note, or nothing, as the guest now stands. */
  function update(guest) {
    if (guest.status !== 'active' || guest.source === 'pms') {
      replaceChildren(editArea, guest.status === 'active' ? pmsNote() : null);
      form = null;
    } else if (!form || !formGuest || (!dirty && formGuest.updatedAt !== guest.updatedAt)) {
      show();
    } else if (formGuest.updatedAt !== guest.updatedAt) {
      // Someone else changed the guest while this user is editing: keep the typing,
      // say so. Saving sends only the fields this user changed.
      editArea.querySelector('.stale-note')?.removeAttribute('hidden');
    }
  }

  return { update, updateRooms: () => updateRooms() };
}

export function guestView(ctx) {
  ctx.setTitle(t('Guest'));
  const [id] = ctx.params;
  const page = guestPage(id, ctx.back);
  const data = guestData(id, ctx.signal, { onData: show, onMissing: () => renderMissing(page) });
  const editor = guestEditor(ctx, id, data, page.editArea);

  // A check-out frees the room at once and cannot be undone here: always confirm.
  const checkOut = (button) =>
    act({
      button,
      confirm: checkoutConfirm(data.state.guest),
      run: () => data.checkOut(data.state.guest.source === 'pms'),
      done: () => t('{name} checked out of room {room}.', { name: guestName(data.state.guest), room: data.state.guest.roomNumber }),
      after: () => {
        ctx.roster.markChanged(id);
        return data.reload();
      },
      failed: t('Could not check out'),
    });

  const erase = (button) =>
    act({
      button,
      confirm: eraseConfirm(data.state.guest),
      run: data.erase,
      done: (result) =>
        t(
          'Personal data erased: {guests} stays, {activity} activity entries, {idempotency} stored responses and {requestLog} request-log bodies.',
          result.erased,
        ),
      after: () => data.reload(),
      failed: t('Could not erase the personal data'),
    });

  function show(before) {
    const { guest, rooms } = data.state;
    ctx.setTitle(guestName(guest));
    renderGuest(page, { id, guest, rooms, isAdmin: ctx.isAdmin, onCheckOut: checkOut, onErase: erase });
    editor.update(guest);
    if (before && before.status === 'active' && guest.status !== 'active') announce(t('{name} has been checked out.', { name: guestName(guest) }));
  }

  data.reload();
  // Any roster change may concern this guest (a move, an update, a PMS checkout).
  // The edit form's room help follows the room list and the guests in house (the live stream keeps them fresh).
  const unsubscribe = [ctx.rooms?.subscribe(editor.updateRooms), ctx.roster.subscribe(editor.updateRooms)];
  return { node: page.node, onLive: () => data.reload({ live: true }), destroy: () => unsubscribe.forEach((fn) => fn?.()) };
}
