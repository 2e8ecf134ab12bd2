import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { addStaffUser, changeStaffRole, deactivateStaffUser, endStaffSessions, listStaffUsers, staffUserView } from '../../staff/staff-service.js';
import { findUser } from '../../db/repositories/staff.repository.js';
import { ApiError } from '../../errors.js';
import { clientOf } from '../../http/ip-limit.js';
import type { DashboardDeps } from '../deps.js';
import { HotelSettingsAnswer, HotelSettingsBody, IdParams, SessionsEndedAnswer, UserAnswer, UserBody, UserRoleBody, UsersAnswer } from '../schemas.js';
import { setHotelTimeZone } from '../../db/repositories/hotel.repository.js';
import { changedBy, sessionOf } from '../session.js';

/** The hotel's staff accounts, for admins. */
export const staffRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const { db } = deps;
  const hidden = { hide: true };

  app.get('/users', { schema: { ...hidden, response: { 200: UsersAnswer } } }, async (req) => ({ users: await listStaffUsers(db, sessionOf(req).hotel.id) }));

  app.post('/users', { schema: { ...hidden, body: UserBody, response: { 201: UserAnswer } } }, async (req, reply) => {
    const user = await addStaffUser(db, sessionOf(req).hotel, req.body, changedBy(req));
    return reply.code(201).send({ user: staffUserView(user) });
  });

  // docs/dashboard.md, "Changing a role": the user's next request has the new role (sessions read it anew).
  app.patch('/users/:id', { schema: { ...hidden, params: IdParams, body: UserRoleBody, response: { 200: UserAnswer } } }, async (req) => {
    const { user } = await changeStaffRole(db, sessionOf(req).hotel.id, req.params.id, req.body.role, changedBy(req));
    return { user: staffUserView(user) };
  });

  // The hotel's time zone: its "today" for arrivals and departures on the board.
  app.patch('/hotel', { schema: { ...hidden, body: HotelSettingsBody, response: { 200: HotelSettingsAnswer } } }, async (req) => {
    const s = sessionOf(req);
    await setHotelTimeZone(db, s.hotel.id, req.body.timeZone);
    return { hotel: { slug: s.hotel.slug, name: s.hotel.name, timeZone: req.body.timeZone } };
  });

  // docs/dashboard.md, "Ending sessions": every session of the user ends at once, their event streams with them.
  app.post('/users/:id/end-sessions', { schema: { ...hidden, params: IdParams, response: { 200: SessionsEndedAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const user = await findUser(db, s.hotel.id, req.params.id);
    if (!user) throw new ApiError('RECORD_NOT_FOUND', { message: 'No user with this id in your hotel.' });
    const ended = await endStaffSessions(db, s.hotel.id, user.id, {}, { type: 'staff', userId: s.user.id, clientIp: clientOf(req) });
    for (const id of ended) deps.streams.endSession(id);
    return { ended: ended.length };
  });

  app.post('/users/:id/deactivate', { schema: { ...hidden, params: IdParams, response: { 200: UserAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const user = await deactivateStaffUser(db, s.hotel.id, req.params.id, changedBy(req));
    // Their open live streams end with their sessions.
    deps.streams.endUser(user.id);
    return { user: staffUserView(user) };
  });
};
