import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import { ERRORS, type ErrorCode } from '../errors.js';
import { normalizeRoomNumber, refineGuestFields } from '../domain/guest.js';
import type { RosterDeps } from '../roster/roster-service.js';
import { sendStoredResponse, StoredResponse } from './idempotency.js';
import { pmsMode } from './modes.js';
import {
  CheckinResponse,
  CheckoutInput,
  CheckoutResponse,
  ErrorResponse,
  GuestInput,
  GuestListQuery,
  GuestListResponse,
  MAX_SYNC_GUESTS,
  SlugParams,
  SyncInput,
  SyncResponse,
  UpdateInput,
  UpdateResponse,
} from './schemas.js';
import { refined } from '../http/validation.js';
import { fieldError, type FieldError } from '../errors.js';
import type { PmsEndpoint } from './rate-limit.js';

export const PMS_PREFIX = '/api/pms/v1/:slug';

/** decisions.md: 1 MiB for events, 16 MiB for sync. */
export const EVENT_BODY_LIMIT = 1024 * 1024;
export const SYNC_BODY_LIMIT = 16 * 1024 * 1024;

function errorResponses(codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(ERRORS[c].status, [...(byStatus.get(ERRORS[c].status) ?? []), c]);
  const out: Record<number, unknown> = {};
  for (const [status, list] of byStatus) out[status] = { ...ErrorResponse, description: list.join(', ') };
  return out;
}

const COMMON_ERRORS: ErrorCode[] = ['UNAUTHORIZED', 'HTTPS_REQUIRED', 'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];
const POST_ERRORS: ErrorCode[] = [
  ...COMMON_ERRORS,
  'IDEMPOTENCY_KEY_REQUIRED',
  'IDEMPOTENCY_KEY_INVALID',
  'INVALID_JSON',
  'IDEMPOTENCY_KEY_IN_USE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'INVALID_DATE_FORMAT',
  'VALIDATION_ERROR',
  'IDEMPOTENCY_KEY_REUSED',
];

const idempotencyHeader = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      description: 'Required on POST: 1-255 characters, bare or as a quoted structured-field string. Scope: this API key; lifetime 24 h.',
    },
  },
};

function refineSyncList(body: Record<string, unknown>): FieldError[] {
  const list = body.guests;
  if (!Array.isArray(list) || list.length > MAX_SYNC_GUESTS) return [];
  const errors: FieldError[] = [];
  const ids = new Map<string, number>();
  const rooms = new Map<string, number>();
  list.forEach((g: unknown, i) => {
    if (g === null || typeof g !== 'object') return;
    const guest = g as Record<string, unknown>;
    errors.push(...refineGuestFields(guest, `guests[${i}].`));
    if (typeof guest.pmsGuestId === 'string') {
      const first = ids.get(guest.pmsGuestId);
      if (first === undefined) ids.set(guest.pmsGuestId, i);
      else errors.push(fieldError(`guests[${i}].pmsGuestId`, 'DUPLICATE', `pmsGuestId ${guest.pmsGuestId} appears twice (guests[${first}] and guests[${i}]).`));
    }
    if (typeof guest.roomNumber === 'string') {
      const room = normalizeRoomNumber(guest.roomNumber);
      const first = rooms.get(room);
      if (first === undefined) rooms.set(room, i);
      else errors.push(fieldError(`guests[${i}].roomNumber`, 'DUPLICATE', `roomNumber ${room} appears twice (guests[${first}] and guests[${i}]).`));
    }
  });
  return errors;
}

export interface PmsRouteDeps extends RosterDeps {
  db: Db;
}

/** Registers the PMS API v1 routes under /api/pms/v1/{slug}. */
export function registerPmsRoutes(app: FastifyInstance, deps: PmsRouteDeps): void {
  const post = (
    endpoint: PmsEndpoint,
    path: string,
    opts: { summary: string; description: string; body: unknown; response: unknown; errors: ErrorCode[]; bodyLimit: number },
    handler: (req: FastifyRequest, reply: FastifyReply) => Promise<object>,
  ) => {
    app.post(`${PMS_PREFIX}${path}`, {
      bodyLimit: opts.bodyLimit,
      config: { endpoint },
      schema: {
        tags: ['guests'],
        summary: opts.summary,
        description: opts.description,
        params: SlugParams,
        headers: idempotencyHeader,
        body: opts.body,
        response: { 200: opts.response, ...errorResponses([...POST_ERRORS, ...opts.errors]) },
        security: [{ bearer: [] }],
      },
      // spec 8.2: a key with a committed response is answered with it, not processed again.
      handler: async (req, reply) => {
        try {
          return await handler(req, reply);
        } catch (err) {
          if (err instanceof StoredResponse) {
            deps.metrics?.replayed(endpoint);
            return sendStoredResponse(reply, err);
          }
          throw err;
        }
      },
    });
  };

  post(
    'checkin',
    '/guests/checkin',
    {
      summary: 'Check a guest in',
      description:
        'Creates an active stay. A pmsGuestId that was checked out may check in again (a new stay, a new guestId). Test keys: validated the same, nothing stored, fake guestId, `_sandbox: true`.',
      body: refined(GuestInput, (b) => refineGuestFields(b)),
      response: CheckinResponse,
      errors: ['ROOM_OCCUPIED', 'GUEST_ALREADY_CHECKED_IN'],
      bodyLimit: EVENT_BODY_LIMIT,
    },
    (req) => pmsMode(deps, req).checkIn(req.body as GuestInput),
  );

  post(
    'update',
    '/guests/update',
    {
      summary: 'Update a guest, or move them to another room',
      description:
        'Partial update: `pmsGuestId` plus the fields that changed. An absent field keeps its value, an explicit null clears it. A new roomNumber moves the guest. No differences: 200 with `changes: {}`. Test keys: every submitted field reported as `{from: null, to}`.',
      body: refined(UpdateInput, (b) => refineGuestFields(b)),
      response: UpdateResponse,
      errors: ['GUEST_NOT_FOUND', 'ROOM_OCCUPIED'],
      bodyLimit: EVENT_BODY_LIMIT,
    },
    (req) => pmsMode(deps, req).update(req.body as UpdateInput),
  );

  post(
    'checkout',
    '/guests/checkout',
    {
      summary: 'Check a guest out',
      description:
        'Ends the active stay and frees the room at once. Unknown or already checked-out pmsGuestId: 404 GUEST_NOT_FOUND. Test keys: `roomNumber: null`, `_sandbox: true`.',
      body: CheckoutInput,
      response: CheckoutResponse,
      errors: ['GUEST_NOT_FOUND'],
      bodyLimit: EVENT_BODY_LIMIT,
    },
    (req) => pmsMode(deps, req).checkOut(req.body as CheckoutInput),
  );

  post(
    'sync',
    '/guests/sync',
    {
      summary: 'Reconcile the full in-house list',
      description:
        'Full reconciliation of the PMS-sourced guests against the submitted list, in one transaction: check-outs, then updates and room moves, then check-ins. Receptionist guests are never touched. Limited to 10 requests per hour per key.',
      body: refined(SyncInput, refineSyncList),
      response: SyncResponse,
      errors: ['ROOM_OCCUPIED'],
      bodyLimit: SYNC_BODY_LIMIT,
    },
    (req) => pmsMode(deps, req).sync(req.body as SyncInput),
  );

  app.get(`${PMS_PREFIX}/guests`, {
    config: { endpoint: 'list' },
    schema: {
      tags: ['guests'],
      summary: 'List current guests',
      description:
        'Active guests of both sources, ordered by roomNumber in natural order (2 before 10). Optional filters; an unknown query parameter is 422. Test keys: always an empty list.',
      params: SlugParams,
      querystring: GuestListQuery,
      response: { 200: GuestListResponse, ...errorResponses([...COMMON_ERRORS, 'VALIDATION_ERROR']) },
      security: [{ bearer: [] }],
    },
    handler: (req) => pmsMode(deps, req).list(req.query as GuestListQuery),
  });
}
