import type { FastifyRequest } from 'fastify';
import type { Actor } from '../db/repositories/activity.repository.js';
import { GUEST_DATA_FIELDS, normalizeRoomNumber, type ChangeSet } from '../domain/guest.js';
import { newId } from '../domain/ids.js';
import { ApiError } from '../errors.js';
import {
  checkInGuest,
  checkOutGuest,
  listGuests,
  updateGuest,
  type CheckInResult,
  type CheckOutResult,
  type RosterDeps,
  type UpdateResult,
} from '../roster/roster-service.js';
import { syncRoster, type SyncResult } from '../roster/sync-service.js';
import { guestObject } from '../roster/guest-object.js';
import { answerInSandbox, idempotencyHooks } from './idempotency.js';
import type { Static } from '@sinclair/typebox';
import type {
  CheckinResponse,
  CheckoutInput,
  CheckoutResponse,
  GuestInput,
  GuestListQuery,
  GuestListResponse,
  SyncInput,
  SyncResponse,
  UpdateInput,
  UpdateResponse,
} from './schemas.js';
import { sandboxSyncResponse, syncResponse } from './sync-route.js';

/**
 * What the PMS API does for one request: the live roster, or the sandbox of a test key
 * (decisions.md, test mode: validated as live, nothing of the roster read or written,
 * idempotency as live). Chosen once per request, from the key that authenticated it;
 * each route calls its operation and nothing decides the mode again.
 */
export interface PmsMode {
  checkIn(body: GuestInput): Promise<Static<typeof CheckinResponse>>;
  update(body: UpdateInput): Promise<Static<typeof UpdateResponse>>;
  checkOut(body: CheckoutInput): Promise<Static<typeof CheckoutResponse>>;
  sync(body: SyncInput): Promise<Static<typeof SyncResponse>>;
  list(query: GuestListQuery): Promise<Static<typeof GuestListResponse>>;
}

export function pmsMode(deps: RosterDeps, req: FastifyRequest): PmsMode {
  const auth = req.auth;
  if (!auth) throw new ApiError('UNAUTHORIZED');
  return auth.mode === 'test' ? sandbox(deps, req) : live(deps, req, auth.hotelId, { type: 'pms', id: auth.pairId, mode: auth.mode });
}

function live(deps: RosterDeps, req: FastifyRequest, hotelId: string, actor: Actor): PmsMode {
  return {
    async checkIn(body) {
      const roomNumber = normalizeRoomNumber(body.roomNumber);
      const respond = (r: CheckInResult) => ({ status: 'created' as const, guestId: r.guest.id, pmsGuestId: body.pmsGuestId, roomNumber, requestId: req.id });
      return respond(await checkInGuest(deps, hotelId, actor, body, idempotencyHooks(req, respond)));
    },
    async update(body) {
      const respond = (r: UpdateResult) => ({
        status: 'updated' as const,
        guestId: r.guest.id,
        pmsGuestId: body.pmsGuestId,
        changes: r.changes,
        requestId: req.id,
      });
      return respond(await updateGuest(deps, hotelId, actor, body, idempotencyHooks(req, respond)));
    },
    async checkOut(body) {
      const respond = (r: CheckOutResult) => ({
        status: 'checked_out' as const,
        guestId: r.guest.id,
        pmsGuestId: body.pmsGuestId,
        roomNumber: r.guest.roomNumber,
        requestId: req.id,
      });
      return respond(await checkOutGuest(deps, hotelId, actor, body.pmsGuestId, idempotencyHooks(req, respond)));
    },
    async sync(body) {
      const respond = (r: SyncResult) => syncResponse(r, req.id);
      return respond(await syncRoster(deps, hotelId, actor, body.guests, idempotencyHooks(req, respond)));
    },
    async list(query) {
      const guests = await listGuests(deps.db, hotelId, query);
      return { guests: guests.map(guestObject), count: guests.length, requestId: req.id };
    },
  };
}

/** Test keys: the same answers' shapes, made up from the request alone (`_sandbox: true` on check-in and checkout). */
function sandbox(deps: RosterDeps, req: FastifyRequest): PmsMode {
  const answer = <T extends object>(body: T): Promise<T> => answerInSandbox(deps.db, req, body);
  return {
    checkIn: (body) =>
      answer({
        status: 'created' as const,
        guestId: newId('test'),
        pmsGuestId: body.pmsGuestId,
        roomNumber: normalizeRoomNumber(body.roomNumber),
        requestId: req.id,
        _sandbox: true,
      }),
    update(body) {
      // Every submitted field reported as changed from null.
      const changes: ChangeSet = {};
      for (const f of GUEST_DATA_FIELDS) {
        const v = body[f];
        if (v !== undefined) changes[f] = { from: null, to: f === 'roomNumber' && typeof v === 'string' ? normalizeRoomNumber(v) : v };
      }
      return answer({ status: 'updated' as const, guestId: newId('test'), pmsGuestId: body.pmsGuestId, changes, requestId: req.id });
    },
    checkOut: (body) =>
      answer({ status: 'checked_out' as const, guestId: newId('test'), pmsGuestId: body.pmsGuestId, roomNumber: null, requestId: req.id, _sandbox: true }),
    sync: (body) => answer(sandboxSyncResponse(body.guests, req.id)),
    list: () => Promise.resolve({ guests: [], count: 0, requestId: req.id }),
  };
}
