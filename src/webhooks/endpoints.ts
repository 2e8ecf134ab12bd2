import { runTransaction, type Db } from '../db/database.js';
import * as repo from '../db/repositories/webhook.repository.js';
import { ApiError, fieldError, validationError } from '../errors.js';
import { checkEndpointUrl, EndpointUrlError } from './address-guard.js';
import { EVENT_TYPES, recordEvents, type EventType } from './events.js';
import { newSecret } from './signing.js';

/** During a rotation the previous secret keeps signing this long, so receivers can switch without losing a delivery. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;

/** An endpoint as admins and operators see it: never its secret (shown once, at creation and rotation). */
export interface EndpointView {
  endpointId: string;
  url: string;
  /** The event types it receives; `all` for every type. */
  events: EventType[] | 'all';
  enabled: boolean;
  /** Why the service disabled it (or null): shown on the Webhooks page. */
  disabledReason: string | null;
  disabledAt: string | null;
  createdAt: string;
  /** Until when the previous secret still signs (a rotation under way), or null. */
  previousSecretUntil: string | null;
}

function view(e: repo.WebhookEndpoint, nowIso: string): EndpointView {
  return {
    endpointId: e.id,
    url: e.url,
    events: e.eventTypes === null ? 'all' : (e.eventTypes as EventType[]),
    enabled: e.disabledAt === null,
    disabledReason: e.disabledReason,
    disabledAt: e.disabledAt,
    createdAt: e.createdAt,
    previousSecretUntil: e.previousSecretUntil !== null && e.previousSecretUntil > nowIso ? e.previousSecretUntil : null,
  };
}

/** The event types asked for: every one must exist; none or empty means all. */
export function parseEventTypes(list: string[] | undefined): EventType[] | null {
  if (list === undefined || list.length === 0) return null;
  const unknown = list.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0)
    throw validationError([fieldError('events', 'INVALID_VALUE', `${unknown.join(', ')} is not an event type; use any of ${EVENT_TYPES.join(', ')}.`)]);
  return [...new Set(list)] as EventType[];
}

function checkedUrl(url: string, allowPrivate: boolean): string {
  try {
    return checkEndpointUrl(url.trim(), allowPrivate);
  } catch (err) {
    if (err instanceof EndpointUrlError) throw validationError([fieldError('url', 'INVALID_FORMAT', err.message)]);
    throw err;
  }
}

/** The operator's rules for endpoints (WEBHOOK_ALLOW_PRIVATE_NETWORKS, WEBHOOK_MAX_ENDPOINTS_PER_HOTEL). */
export interface EndpointRules {
  allowPrivateNetworks: boolean;
  maxEndpointsPerHotel: number;
}

/**
 * Adds an endpoint; its secret is in the answer and nowhere else the admin can read it
 * again. A hotel has at most `maxEndpointsPerHotel` (409 TOO_MANY_ENDPOINTS), counted in
 * the insert's transaction under the hotel row's lock.
 */
export async function addEndpoint(
  db: Db,
  hotelId: string,
  input: { url: string; events?: string[] },
  rules: EndpointRules,
): Promise<EndpointView & { secret: string }> {
  const url = checkedUrl(input.url, rules.allowPrivateNetworks);
  const eventTypes = parseEventTypes(input.events);
  const now = new Date().toISOString();
  const secret = newSecret();
  const endpoint = await runTransaction(db, (trx) => repo.insertEndpointWithin(trx, { hotelId, url, eventTypes, secret, now }, rules.maxEndpointsPerHotel));
  if (endpoint === null) throw new ApiError('TOO_MANY_ENDPOINTS', { extra: { limit: rules.maxEndpointsPerHotel } });
  return { ...view(endpoint, now), secret: endpoint.secret };
}

export async function listEndpoints(db: Db, hotelId: string): Promise<EndpointView[]> {
  const now = new Date().toISOString();
  return (await repo.listEndpoints(db, hotelId)).map((e) => view(e, now));
}

/** The endpoint, if it belongs to `hotelId` (null: any hotel, for operators). */
async function endpointOf(db: Db, hotelId: string | null, endpointId: string): Promise<repo.WebhookEndpoint> {
  const e = await repo.findEndpoint(db, hotelId, endpointId);
  if (!e || (hotelId !== null && e.hotelId !== hotelId)) throw new ApiError('RECORD_NOT_FOUND', { message: `No webhook endpoint with id ${endpointId}.` });
  return e;
}

export async function removeEndpoint(db: Db, hotelId: string | null, endpointId: string): Promise<{ endpointId: string; removed: true }> {
  const e = await endpointOf(db, hotelId, endpointId);
  await db.transaction().execute((trx) => repo.deleteEndpoint(trx, e.hotelId, endpointId));
  return { endpointId, removed: true };
}

/** A new secret, shown this once; the previous one signs beside it for 24 hours. */
export async function rotateSecret(db: Db, hotelId: string | null, endpointId: string): Promise<EndpointView & { secret: string }> {
  const e = await endpointOf(db, hotelId, endpointId);
  const now = Date.now();
  const secret = newSecret();
  const until = new Date(now + ROTATION_OVERLAP_MS).toISOString();
  await repo.rotateEndpointSecret(db, e.hotelId, endpointId, secret, e.secret, until);
  const nowIso = new Date(now).toISOString();
  return { ...view({ ...e, secret, previousSecret: e.secret, previousSecretUntil: until }, nowIso), secret };
}

/** Enables or disables an endpoint by hand (hotelId null: any hotel's, for operators); enabled again, its waiting deliveries are sent in order. */
export async function setEnabled(db: Db, hotelId: string | null, endpointId: string, enabled: boolean): Promise<EndpointView> {
  const e = await endpointOf(db, hotelId, endpointId);
  const now = new Date().toISOString();
  const reason = enabled ? null : 'Disabled by an admin.';
  await repo.setEndpointDisabled(db, e.hotelId, endpointId, enabled ? null : now, reason);
  return view({ ...e, disabledAt: enabled ? null : now, disabledReason: reason }, now);
}

/** Where a test event was sent from: the dashboard's Webhooks page or `innsync webhook test`. */
const TEST_EVENT_ORIGIN = { dashboard: 'the Webhooks page of innsync', cli: 'innsync webhook test' } as const;

/**
 * A `webhook.test` event to this endpoint alone, delivered like any other (signed, retried,
 * in order). hotelId null: any hotel's endpoint (operators).
 */
export async function sendTestEvent(
  db: Db,
  hotelId: string | null,
  endpointId: string,
  origin: keyof typeof TEST_EVENT_ORIGIN = 'dashboard',
): Promise<{ eventId: string }> {
  const e = await endpointOf(db, hotelId, endpointId);
  if (e.disabledAt !== null) throw new ApiError('ENDPOINT_DISABLED');
  const now = new Date().toISOString();
  const data = { message: `A test event sent from ${TEST_EVENT_ORIGIN[origin]}.` };
  const [eventId] = await db.transaction().execute((trx) => recordEvents(trx, e.hotelId, () => [{ type: 'webhook.test', data }], now, endpointId));
  return { eventId: eventId ?? '' };
}

/** "Send again": the same event (same webhook-id) queued once more for the endpoint. */
export async function resendDelivery(db: Db, hotelId: string, endpointId: string, deliveryId: string): Promise<{ deliveryId: string }> {
  await endpointOf(db, hotelId, endpointId);
  const d = await repo.findDelivery(db, endpointId, deliveryId);
  if (!d) throw new ApiError('RECORD_NOT_FOUND', { message: `No delivery with id ${deliveryId} for this endpoint.` });
  return { deliveryId: await repo.requeueDelivery(db, hotelId, endpointId, d.eventId, new Date().toISOString()) };
}

/** An endpoint's most recent deliveries, newest first (hotelId null: any hotel's, for operators). */
export async function recentDeliveries(db: Db, hotelId: string | null, endpointId: string, limit = 50): Promise<repo.DeliveryView[]> {
  await endpointOf(db, hotelId, endpointId);
  return repo.listDeliveries(db, endpointId, limit);
}
