import { readLater, type DbOrTrx } from '../db/database.js';
import { insertEvents, outboxQuery, toOutbox, type Outbox } from '../db/repositories/webhook.repository.js';
import type { EventType } from './event-types.js';

/** How long outgoing events and their deliveries are kept (the Webhooks page's history, "Send again"). */
export const WEBHOOK_HISTORY_MS = 30 * 24 * 3600_000;

// The types live in a module of their own that loads no database code (the command line's --help names them).
export { EVENT_TYPES, type EventType } from './event-types.js';

/** Who made the change: a PMS (by its key pair's id), a staff user, or the service itself (retention, an operator's command). */
export type EventActor = { type: 'pms'; keyId: string } | { type: 'staff'; userId: string } | { type: 'system' };

/** An event to send, as its change's transaction states it. */
export interface OutgoingEvent {
  type: EventType;
  data: Record<string, unknown>;
}

/** The body every delivery of an event carries: `{ id, type, createdAt, hotel: { slug }, data }`. */
export function eventBody(id: string, type: EventType, createdAt: string, hotelSlug: string, data: Record<string, unknown>): string {
  return JSON.stringify({ id, type, createdAt, hotel: { slug: hotelSlug }, data });
}

/**
 * Writes the events `build` returns to the outbox inside the change's own transaction:
 * they leave if and only if the change commits. A hotel without an enabled endpoint
 * writes nothing (and `build` is not called). Returns the events' ids.
 */
export async function recordEvents(
  trx: DbOrTrx,
  hotelId: string,
  build: () => OutgoingEvent[] | Promise<OutgoingEvent[]>,
  now: string,
  onlyEndpoint?: string,
): Promise<string[]> {
  return writeEvents(trx, await (await readOutbox(trx, hotelId, onlyEndpoint)).get(), build, now);
}

/** The outbox's read, sent with a later round trip of the transaction (readLater); `get` gives it. */
export async function readOutbox(trx: DbOrTrx, hotelId: string, onlyEndpoint?: string): Promise<{ get(): Promise<Outbox> }> {
  const later = await readLater(trx, outboxQuery(trx, hotelId, onlyEndpoint));
  return { get: async () => toOutbox(hotelId, await later.rows(), onlyEndpoint) };
}

/** recordEvents with the outbox already read (readOutbox). */
export async function writeEvents(trx: DbOrTrx, outbox: Outbox, build: () => OutgoingEvent[] | Promise<OutgoingEvent[]>, now: string): Promise<string[]> {
  if (outbox.endpoints.length === 0) return [];
  const events = await build();
  const written = await insertEvents(
    trx,
    outbox,
    events.map((e) => ({ type: e.type, payload: (id: string, slug: string) => eventBody(id, e.type, now, slug, e.data) })),
    now,
  );
  return written.ids;
}
