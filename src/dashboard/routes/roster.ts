import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listActivity } from '../../db/repositories/activity.repository.js';
import { findGuestById, listRoomHistory } from '../../db/repositories/guest.repository.js';
import { guestDataFromCheckin, refineGuestFields } from '../../domain/guest.js';
import { ApiError } from '../../errors.js';
import { refined, type Refinement } from '../../http/validation.js';
import { checkOutGuestByStaff, createReceptionistGuest, updateReceptionistGuest } from '../../roster/receptionist-service.js';
import { listGuests } from '../../roster/roster-service.js';
import type { DashboardDeps } from '../deps.js';
import {
  ActivityAnswer,
  ActivityQuery,
  CheckoutBody,
  GuestAnswer,
  GuestDetailAnswer,
  GuestEditAnswer,
  GuestPatchBody,
  GuestsAnswer,
  GuestsQuery,
  IdParams,
  WalkInBody,
} from '../schemas.js';
import { boardGuestView, guestView } from '../answers.js';
import { nextCursor, parseCursor } from '../cursor.js';
import { sessionOf, staffActor } from '../session.js';
import { recordAccess } from '../access-trail.js';

// The walk-in and edit forms get the PMS API's cross-field rules (trimmed room, date order).
const guestFields: Refinement = (b) => refineGuestFields(b);

/** The room an entry is about, from its changes (check-in and move: the new room; check-out: the old one). */
function roomOfEntry(changes: unknown): string | null {
  const room = (changes as { roomNumber?: { from?: unknown; to?: unknown } } | null)?.roomNumber;
  if (!room) return null;
  const value = room.to ?? room.from;
  return typeof value === 'string' ? value : null;
}

/** The roster for every signed-in user: guests, walk-ins, edits and check-outs. */
export const rosterRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const { db } = deps;
  const rosterDeps = { db, bus: deps.bus, metrics: deps.metrics, outbox: deps.webhooks };
  const hidden = { hide: true };

  // Every active guest; with `ids`, only those of them still active (a live event's guests).
  // A front-desk display gets what the board shows of each, no more.
  app.get('/guests', { config: { display: true }, schema: { ...hidden, querystring: GuestsQuery, response: { 200: GuestsAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const ids = req.query.ids?.split(',');
    const guests = await listGuests(db, s.hotel.id, ids ? { ids } : {});
    // The board and the list show every in-house guest: an access (docs/dashboard.md, "Access trail").
    if (guests.length > 0) await recordAccess(db, req, { action: 'roster.viewed' });
    return s.display ? { guests: guests.map(boardGuestView) } : { guests: guests.map(guestView) };
  });

  app.get('/guests/:id', { schema: { ...hidden, params: IdParams, response: { 200: GuestDetailAnswer } } }, async (req) => {
    const g = await findGuestById(db, sessionOf(req).hotel.id, req.params.id);
    if (!g) throw new ApiError('RECORD_NOT_FOUND', { message: 'No guest with this id in your hotel.' });
    const rooms = await listRoomHistory(db, sessionOf(req).hotel.id, g.id);
    await recordAccess(db, req, { action: 'guest.viewed', guestId: g.id });
    return { guest: guestView(g), rooms };
  });

  app.post('/guests', { schema: { ...hidden, body: refined(WalkInBody, guestFields), response: { 201: GuestAnswer } } }, async (req, reply) => {
    const s = sessionOf(req);
    // The walk-in's body is a check-in's fields: absent optional ones become null, as for the PMS.
    const guest = await createReceptionistGuest(rosterDeps, s.hotel.id, staffActor(s), guestDataFromCheckin(req.body));
    return reply.code(201).send({ guest: guestView(guest) });
  });

  app.patch(
    '/guests/:id',
    { schema: { ...hidden, params: IdParams, body: refined(GuestPatchBody, guestFields), response: { 200: GuestEditAnswer } } },
    async (req) => {
      const s = sessionOf(req);
      const { guest, changes } = await updateReceptionistGuest(rosterDeps, s.hotel.id, staffActor(s), req.params.id, req.body);
      return { guest: guestView(guest), changes };
    },
  );

  app.post('/guests/:id/checkout', { schema: { ...hidden, params: IdParams, body: CheckoutBody, response: { 200: GuestAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const { guest } = await checkOutGuestByStaff(rosterDeps, s.hotel.id, staffActor(s), req.params.id, req.body?.confirmPmsGuest === true);
    return { guest: guestView(guest) };
  });
};

/** The hotel's activity log and the live event stream, for every signed-in user. */
export const activityRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const { db } = deps;
  const hidden = { hide: true };

  app.get('/activity', { schema: { ...hidden, querystring: ActivityQuery, response: { 200: ActivityAnswer } } }, async (req) => {
    const q = req.query;
    const limit = q.limit ? Number(q.limit) : 50;
    const guest = q.guest?.trim() || undefined;
    const rows = await listActivity(db, sessionOf(req).hotel.id, { actorType: q.actorType, action: q.action, guest, before: parseCursor(q.before), limit });
    // A search that showed guests' names is an access (docs/dashboard.md, "Access trail"): one entry, its text.
    if (guest !== undefined && rows.some((r) => r.guestName !== null)) await recordAccess(db, req, { action: 'guest.searched', search: guest });
    const entries = rows.map((r) => ({
      id: r.id,
      at: r.at,
      actorType: r.actorType,
      actor: r.actorType === 'pms' ? { keyId: r.actorId, mode: r.actorMode } : r.actorType === 'staff' ? { userId: r.actorId, email: r.actorEmail } : null,
      action: r.action,
      guestId: r.guestId,
      pmsGuestId: r.pmsGuestId,
      guestName: r.guestName,
      guestAnonymised: r.guestAnonymised,
      roomNumber: roomOfEntry(r.changes) ?? r.roomNumber,
      changes: r.changes,
    }));
    return { entries, next: nextCursor(rows, limit) };
  });

  // No answer schema: the answer is a text/event-stream that live-events.ts writes itself (docs/dashboard.md, "Live events (`GET /dashboard/api/events`)").
  app.get('/events', { config: { display: true }, schema: hidden }, async (req, reply) => {
    // HEAD (which Fastify answers for every GET route) gets the headers, not a stream.
    if (req.method === 'HEAD') return reply.type('text/event-stream; charset=utf-8').send();
    // The stream writes its own head: the answer's headers so far (security headers, HSTS) go with it.
    const s = sessionOf(req);
    deps.streams.serve(req, reply, { hotelId: s.hotel.id, sessionId: s.id, userId: s.user.id }, reply.getHeaders() as Record<string, string>);
  });
};
