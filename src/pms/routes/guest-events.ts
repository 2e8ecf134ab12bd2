import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { refineGuestFields, refinePmsGuestId } from '../../domain/guest.js';
import { refined } from '../../http/validation.js';
import { pmsMode } from '../modes.js';
import { CheckinResponse, CheckoutInput, CheckoutResponse, GuestInput, UpdateInput, UpdateResponse } from '../schemas.js';
import type { PmsRouteDeps } from './guest-list.js';
import { EVENT_BODY_LIMIT, writeSchema } from '../route-options.js';

/** The check-in and update bodies: their schemas, then the trimmed room and the date order. */
export const CheckinBody = refined(GuestInput, (b) => refineGuestFields(b));
export const UpdateBody = refined(UpdateInput, (b) => refineGuestFields(b));
/** The check-out body: its schema, then pmsGuestId's length in its normalised form. */
export const CheckoutBody = refined(CheckoutInput, (b) => refinePmsGuestId(b));

/** One guest's check-in, update (or room move) and check-out (docs/pms-interface.md, "Check-in", "Update and room moves", "Check-out"). */
export const guestEventRoutes: FastifyPluginAsyncTypebox<PmsRouteDeps> = async (api, deps) => {
  api.post(
    '/guests/checkin',
    {
      bodyLimit: EVENT_BODY_LIMIT,
      config: { endpoint: 'checkin' },
      schema: writeSchema({
        summary: 'Check a guest in',
        description:
          'Creates an active stay. A pmsGuestId that was checked out may check in again (a new stay, a new guestId). Test keys: validated the same, nothing stored, fake guestId, `_sandbox: true`.',
        body: CheckinBody,
        response: CheckinResponse,
        errors: ['INVALID_DATE_FORMAT', 'ROOM_OCCUPIED', 'GUEST_ALREADY_CHECKED_IN'],
      }),
    },
    (req) => pmsMode(deps, req).checkIn(req.body),
  );

  api.post(
    '/guests/update',
    {
      bodyLimit: EVENT_BODY_LIMIT,
      config: { endpoint: 'update' },
      schema: writeSchema({
        summary: 'Update a guest, or move them to another room',
        description:
          'Partial update: `pmsGuestId` plus the fields that changed. An absent field keeps its value, an explicit null clears it. A new roomNumber moves the guest. No differences: 200 with `changes: {}`. Test keys: every submitted field reported as `{from: null, to}`.',
        body: UpdateBody,
        response: UpdateResponse,
        errors: ['INVALID_DATE_FORMAT', 'GUEST_NOT_FOUND', 'ROOM_OCCUPIED'],
      }),
    },
    (req) => pmsMode(deps, req).update(req.body),
  );

  api.post(
    '/guests/checkout',
    {
      bodyLimit: EVENT_BODY_LIMIT,
      config: { endpoint: 'checkout' },
      schema: writeSchema({
        summary: 'Check a guest out',
        description:
          'Ends the active stay and frees the room at once. Unknown or already checked-out pmsGuestId: 404 GUEST_NOT_FOUND. Test keys: `roomNumber: null`, `_sandbox: true`.',
        body: CheckoutBody,
        response: CheckoutResponse,
        errors: ['GUEST_NOT_FOUND'],
      }),
    },
    (req) => pmsMode(deps, req).checkOut(req.body),
  );
};
