import type { FastifyRequest } from 'fastify';
import type { Actor } from '../db/repositories/activity.repository.js';
import { normalizeIdentifier } from '../domain/guest.js';
import { derivedId } from '../domain/ids.js';
import type { PmsEndpoint } from '../rate-limit/limits.js';
import { refusalBeforeClaim, refusalOfRoster } from './sandbox-triggers.js';
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
import { Turns } from '../roster/turns.js';
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
import { checkedInAnswer, checkedOutAnswer, guestListAnswer, sandboxChanges, sandboxSyncResponse, syncResponse, updatedAnswer } from './answers.js';

/**
 * What the PMS API does for one request: the live roster, or the sandbox of a test key
 * (docs/pms-interface.md, "Test mode": validated as live, nothing of the roster read or written,
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
  return withNormalizedIds(
    auth.mode === 'test' ? sandbox(deps, req, auth.keyId) : live(deps, req, auth.hotelId, { type: 'pms', id: auth.pairId, mode: auth.mode }),
  );
}

/**
 * Every pmsGuestId the PMS sends, in the one form it is compared and stored in
 * (docs/identifiers.md); room numbers are normalised where they are trimmed.
 */
function withNormalizedIds(mode: PmsMode): PmsMode {
  const normalized = <T extends { pmsGuestId: string }>(body: T): T => ({ ...body, pmsGuestId: normalizeIdentifier(body.pmsGuestId) });
  return {
    checkIn: (body) => mode.checkIn(normalized(body)),
    update: (body) => mode.update(normalized(body)),
    checkOut: (body) => mode.checkOut(normalized(body)),
    // A 20,000-guest list a slice at a time (roster/turns.ts).
    sync: async (body) => mode.sync({ ...body, guests: await new Turns().map(body.guests, normalized) }),
    list: (query) => mode.list(query.pmsGuestId === undefined ? query : { ...query, pmsGuestId: normalizeIdentifier(query.pmsGuestId) }),
  };
}

function live(deps: RosterDeps, req: FastifyRequest, hotelId: string, actor: Actor): PmsMode {
  return {
    async checkIn(body) {
      const respond = (r: CheckInResult) => checkedInAnswer(body, r.guest.id, req.id);
      return respond(await checkInGuest(deps, hotelId, actor, body, idempotencyHooks(req, respond)));
    },
    async update(body) {
      const respond = (r: UpdateResult) => updatedAnswer(body.pmsGuestId, r.guest.id, r.changes, req.id);
      return respond(await updateGuest(deps, hotelId, actor, body, idempotencyHooks(req, respond)));
    },
    async checkOut(body) {
      const respond = (r: CheckOutResult) => checkedOutAnswer(body.pmsGuestId, r.guest.id, r.guest.roomNumber, req.id);
      return respond(await checkOutGuest(deps, hotelId, actor, body.pmsGuestId, idempotencyHooks(req, respond)));
    },
    async sync(body) {
      const respond = (r: SyncResult) => syncResponse(r, req.id);
      return respond(await syncRoster(deps, hotelId, actor, body.guests, idempotencyHooks(req, respond)));
    },
    async list(query) {
      return guestListAnswer(await listGuests(deps.db, hotelId, query), req.id);
    },
  };
}

/**
 * Test keys: the same answers' shapes, made up from the request alone (`_sandbox: true` on
 * check-in and checkout), with the key's own fake guestId for each pmsGuestId (the same
 * every time, so a PMS can correlate its calls); trigger values answer as live's refusals
 * (pms/sandbox-triggers.ts).
 */
function sandbox(deps: RosterDeps, req: FastifyRequest, keyId: string): PmsMode {
  const guestId = (pmsGuestId: string): string => derivedId('test', keyId, pmsGuestId);
  const answer = async <T extends object>(
    endpoint: PmsEndpoint,
    sent: { pmsGuestIds: string[]; rooms: Array<{ roomNumber: string; pmsGuestId: string }> },
    body: () => T,
  ): Promise<T> => {
    const input = { endpoint, ...sent, guestId, nowMs: Date.now() };
    const before = refusalBeforeClaim(input);
    if (before) throw before;
    return answerInSandbox(deps.db, req, body(), refusalOfRoster(input));
  };
  const one = (body: { pmsGuestId: string; roomNumber?: string | null }) => ({
    pmsGuestIds: [body.pmsGuestId],
    rooms: typeof body.roomNumber === 'string' ? [{ roomNumber: body.roomNumber, pmsGuestId: body.pmsGuestId }] : [],
  });
  return {
    checkIn: (body) => answer('checkin', one(body), () => ({ ...checkedInAnswer(body, guestId(body.pmsGuestId), req.id), _sandbox: true })),
    update: (body) => answer('update', one(body), () => updatedAnswer(body.pmsGuestId, guestId(body.pmsGuestId), sandboxChanges(body), req.id)),
    checkOut: (body) => answer('checkout', one(body), () => ({ ...checkedOutAnswer(body.pmsGuestId, guestId(body.pmsGuestId), null, req.id), _sandbox: true })),
    sync: (body) =>
      answer(
        'sync',
        { pmsGuestIds: body.guests.map((g) => g.pmsGuestId), rooms: body.guests.map((g) => ({ roomNumber: g.roomNumber, pmsGuestId: g.pmsGuestId })) },
        () => sandboxSyncResponse(body.guests, req.id),
      ),
    list: async (query) => {
      const before = refusalBeforeClaim({
        endpoint: 'list',
        pmsGuestIds: query.pmsGuestId === undefined ? [] : [query.pmsGuestId],
        rooms: [],
        guestId,
        nowMs: Date.now(),
      });
      if (before) throw before;
      return guestListAnswer([], req.id);
    },
  };
}
