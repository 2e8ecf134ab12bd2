import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { normalizeIdentifier, normalizeRoomNumber, refineGuestFields } from '../../domain/guest.js';
import { fieldError, type FieldError } from '../../errors.js';
import { refinedItems } from '../../http/validation.js';
import { sendAnswerText } from '../idempotency.js';
import { pmsMode } from '../modes.js';
import { SyncInput, SyncResponse } from '../schemas.js';
import type { PmsRouteDeps } from './guest-list.js';
import { SYNC_BODY_LIMIT, writeSchema } from '../route-options.js';

/** Each listed guest's own rules, and no pmsGuestId or room twice in one list (checked a guest at a time). */
function syncGuestRules(): (guest: Record<string, unknown>, i: number) => FieldError[] {
  const ids = new Map<string, number>();
  const rooms = new Map<string, number>();
  return (guest, i) => {
    const errors = refineGuestFields(guest, `guests[${i}].`);
    if (typeof guest.pmsGuestId === 'string') {
      const id = normalizeIdentifier(guest.pmsGuestId);
      const first = ids.get(id);
      if (first === undefined) ids.set(id, i);
      else errors.push(fieldError(`guests[${i}].pmsGuestId`, 'DUPLICATE', `pmsGuestId ${id} appears twice (guests[${first}] and guests[${i}]).`));
    }
    if (typeof guest.roomNumber === 'string') {
      const room = normalizeRoomNumber(guest.roomNumber);
      const first = rooms.get(room);
      if (first === undefined) rooms.set(room, i);
      else errors.push(fieldError(`guests[${i}].roomNumber`, 'DUPLICATE', `roomNumber ${room} appears twice (guests[${first}] and guests[${i}]).`));
    }
    return errors;
  };
}

/** The sync body: its schema, then each guest's own rules and no pmsGuestId or room twice. */
export const SyncBody = refinedItems(SyncInput, 'guests', syncGuestRules);

/** docs/pms-interface.md, "Full sync": the full in-house list, reconciled in one transaction. */
export const syncRoutes: FastifyPluginAsyncTypebox<PmsRouteDeps> = async (api, deps) => {
  api.post(
    '/guests/sync',
    {
      bodyLimit: SYNC_BODY_LIMIT,
      config: { endpoint: 'sync' },
      schema: writeSchema({
        summary: 'Reconcile the full in-house list',
        description:
          'Full reconciliation of the PMS-sourced guests against the submitted list, in one transaction: check-outs, then updates and room moves, then check-ins. Receptionist guests are never touched. Limited to 10 requests per hour per key.',
        body: SyncBody,
        response: SyncResponse,
        errors: ['INVALID_DATE_FORMAT', 'ROOM_OCCUPIED'],
      }),
    },
    async (req, reply) => {
      const answer = await pmsMode(deps, req).sync(req.body);
      // The answer's JSON as stored on the idempotency record is the answer sent, as a
      // replay sends it: a 20,000-guest answer is written once, not a second time by the
      // route's serialiser (docs/architecture.md, SQLite: long work beside short requests).
      const stored = req.idempotency?.answer;
      return stored === undefined ? answer : sendAnswerText(reply, stored);
    },
  );
};
