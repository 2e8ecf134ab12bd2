import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listAccessEntries, listSecurityEvents } from '../../db/repositories/access-trail.repository.js';
import { hotelDayBounds } from '../../domain/hotel-day.js';
import type { DashboardDeps } from '../deps.js';
import { AccessTrailAnswer, AccessTrailQuery, SecurityEventsAnswer, SecurityEventsQuery } from '../schemas.js';
import { nextCursor, parseCursor } from '../cursor.js';
import { sessionOf } from '../session.js';

/** The Access trail page, for admins (docs/dashboard.md, "Access trail"): who saw guests' data, and the security events. */
export const trailRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, { db }) => {
  const hidden = { hide: true };

  app.get('/access-trail', { schema: { ...hidden, querystring: AccessTrailQuery, response: { 200: AccessTrailAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const q = req.query;
    const limit = q.limit ? Number(q.limit) : 50;
    const rows = await listAccessEntries(db, s.hotel.id, {
      staffUserId: q.staff,
      guestId: q.guest,
      ...(q.day ? hotelDayBounds(q.day, s.hotel.timeZone) : {}),
      before: parseCursor(q.before),
      limit,
    });
    const entries = rows.map((r) => ({
      id: r.id,
      at: r.at,
      action: r.action,
      staff: { userId: r.staffUserId, email: r.staffEmail },
      clientIp: r.clientIp,
      guestId: r.guestId,
      guestName: r.guestName,
      search: r.search,
    }));
    return { entries, next: nextCursor(rows, limit) };
  });

  app.get('/security-events', { schema: { ...hidden, querystring: SecurityEventsQuery, response: { 200: SecurityEventsAnswer } } }, async (req) => {
    const q = req.query;
    const limit = q.limit ? Number(q.limit) : 50;
    const rows = await listSecurityEvents(db, sessionOf(req).hotel.id, { kind: q.kind, subject: q.staff, before: parseCursor(q.before), limit });
    const events = rows.map((r) => ({
      id: r.id,
      at: r.at,
      kind: r.kind,
      actorType: r.actorType,
      actor: r.actorType === 'staff' ? { userId: r.actorId, email: r.actorEmail } : null,
      subject: r.subjectUserId === null ? null : { userId: r.subjectUserId, email: r.subjectEmail },
      keyPairId: r.subjectKeyPairId,
      clientIp: r.clientIp,
      detail: r.detail,
    }));
    return { events, next: nextCursor(rows, limit) };
  });
};
