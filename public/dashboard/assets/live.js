// Live updates: one EventSource while logged in, and the roster (active guests) that
// every view reads. The server sends `ready` on each (re)connect and `roster` after
// each committed change; both trigger an immediate refetch, so a reconnect never
// loses a change and a PMS check-in reaches the board in one round trip.

import { api } from './api.js';
import { coalescing } from './flow.js';

/** A live event naming more guests than this refetches the whole roster instead. */
const PARTIAL_MAX = 100;

const guestList = (data) => (Array.isArray(data.guests) ? data.guests : []);

/** `guests` with each of the named `ids` replaced by its `fresh` version, added, or (not among them: no longer active) removed. */
function mergeNamed(guests, ids, fresh) {
  const byId = new Map(fresh.map((g) => [g.id, g]));
  const named = new Set(ids);
  const next = guests.filter((g) => !named.has(g.id) || byId.has(g.id)).map((g) => byId.get(g.id) ?? g);
  const known = new Set(guests.map((g) => g.id));
  for (const g of byId.values()) if (!known.has(g.id)) next.push(g);
  return next;
}

/** Changed = named by an event (`named`), new, or updated since the last fetch (`previous`: id → updatedAt; null: none). */
function changedSince(previous, guests, named) {
  const changed = new Set(named);
  if (previous) for (const g of guests) if (previous.get(g.id) !== g.updatedAt) changed.add(g.id);
  return changed;
}

/** The active guests, refetched on demand; listeners get (guests, changedIds). */
export function createRoster() {
  let guests = [];
  let loaded = false;
  let pendingChanged = new Set();
  // The guests a live event named since the last fetch; null = refetch everyone.
  let partial = new Set();
  const listeners = new Set();

  /** Only the named guests: each is replaced, added, or (no longer active) removed. */
  async function fetchSome(ids, background) {
    const data = await api.get(`/guests?ids=${ids.map(encodeURIComponent).join(',')}`, { background });
    return mergeNamed(guests, ids, guestList(data));
  }

  async function fetchOnce({ background }) {
    const previous = new Map(guests.map((g) => [g.id, g.updatedAt]));
    const ids = loaded && partial !== null && partial.size > 0 && partial.size <= PARTIAL_MAX ? [...partial] : null;
    partial = new Set();
    try {
      guests = ids ? await fetchSome(ids, background) : guestList(await api.get('/guests', { background }));
    } catch (err) {
      partial = null; // the named guests were not fetched: the next refresh takes everyone
      throw err;
    }
    // Only after the first load, so the initial board does not flash everywhere.
    const changed = changedSince(loaded ? previous : null, guests, pendingChanged);
    pendingChanged = new Set();
    loaded = true;
    for (const fn of listeners) fn(guests, changed);
  }
  const fetching = coalescing(fetchOnce);

  /**
   * Refetch now: only the guests a live event named, or everyone (no ids: a reconnect,
   * a page opened). Calls during a fetch are coalesced (coalescing).
   */
  function refresh(changedIds = [], { live = false } = {}) {
    const ids = changedIds.filter(Boolean);
    for (const id of ids) pendingChanged.add(id);
    if (!live || ids.length === 0) partial = null;
    else if (partial !== null) for (const id of ids) partial.add(id);
    return fetching.run({ background: live });
  }

  return {
    get guests() {
      return guests;
    },
    get loaded() {
      return loaded;
    },
    refresh,
    /** Marks ids to highlight on the next render (e.g. the walk-in just added). */
    markChanged(id) {
      pendingChanged.add(id);
    },
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    reset() {
      guests = [];
      loaded = false;
      pendingChanged = new Set();
      partial = new Set();
    },
  };
}

/**
 * The hotel's room list (README.md: Rooms), fetched when a view asks for it and again on
 * every reconnect and every "re-read" event (a change to the list sends one), once some
 * view has loaded it. Listeners get (rooms).
 */
export function createRoomList() {
  let rooms = [];
  let loaded = false;
  const listeners = new Set();

  const fetching = coalescing(async ({ background }) => {
    const data = await api.get('/rooms', { background });
    rooms = Array.isArray(data.rooms) ? data.rooms : [];
    loaded = true;
    for (const fn of listeners) fn(rooms);
  });

  /** Refetch now; calls during a fetch are coalesced into one more fetch after it. */
  function refresh({ live = false } = {}) {
    return fetching.run({ background: live });
  }

  return {
    get rooms() {
      return rooms;
    },
    get loaded() {
      return loaded;
    },
    refresh,
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    reset() {
      rooms = [];
      loaded = false;
    },
  };
}

/**
 * connectLive({ onEvent(kind, data), onState(state) }) → { close() }.
 * state: 'connecting' | 'connected' | 'reconnecting'. The browser reconnects by itself
 * after a dropped stream; when it gives up (a non-200 answer, e.g. the session ended)
 * we ask onClosed whether to try again, with a growing delay.
 */
export function connectLive({ onEvent, onState, onClosed }) {
  let source = null;
  let retryTimer = null;
  let retryDelay = 1000;
  let closed = false;

  function open() {
    onState('connecting');
    source = new EventSource('/dashboard/api/events', { withCredentials: true });
    source.addEventListener('open', () => {
      retryDelay = 1000;
      onState('connected');
    });
    source.addEventListener('ready', (e) => {
      onState('connected');
      onEvent('ready', parse(e.data));
    });
    source.addEventListener('roster', (e) => onEvent('roster', parse(e.data)));
    source.addEventListener('error', () => {
      if (closed) return;
      if (source.readyState === EventSource.CONNECTING) {
        onState('reconnecting');
        return;
      }
      // CLOSED: the browser will not retry on its own.
      source.close();
      onState('reconnecting');
      Promise.resolve(onClosed ? onClosed() : true).then((retry) => {
        if (!retry || closed) return;
        retryTimer = setTimeout(open, retryDelay);
        // A front desk wants the board back soon after an outage: at most 5 s between tries.
        retryDelay = Math.min(retryDelay * 2, 5000);
      });
    });
  }

  open();
  return {
    close() {
      closed = true;
      clearTimeout(retryTimer);
      source?.close();
    },
  };
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}
