import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.js';
import { clientOf } from '../../http/ip-limit.js';
import { deviceOf, liveUserSessions, publicSessionId } from '../../staff/sessions.js';
import { changeOwnPassword, endStaffSessions, type AccountActor } from '../../staff/staff-service.js';
import type { DashboardDeps } from '../deps.js';
import { AccountSessionsAnswer, PasswordChangeBody, PasswordChangedAnswer, SessionParams, SessionsEndedAnswer } from '../schemas.js';
import { sessionOf } from '../session.js';
import { countedAttempt } from '../attempts.js';

/**
 * My account (docs/dashboard.md, "My account"): the signed-in user's own sessions, ending
 * them, and their password. Every session ended here is ended for its next request (401)
 * and its event streams at once on this instance, within the streams' session check on
 * the others.
 */
export const accountRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const { db } = deps;
  const hidden = { hide: true };
  const me = (req: FastifyRequest): AccountActor => ({ type: 'staff', userId: sessionOf(req).user.id, clientIp: clientOf(req) });
  const closeStreams = (ended: string[]): void => {
    for (const id of ended) deps.streams.endSession(id);
  };

  app.get('/account/sessions', { schema: { ...hidden, response: { 200: AccountSessionsAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const sessions = await liveUserSessions(db, s.hotel.id, s.user.id);
    return {
      sessions: sessions.map((x) => ({
        id: publicSessionId(x.id),
        ...deviceOf(x.userAgent),
        ip: x.clientIp,
        createdAt: x.createdAt,
        lastSeenAt: x.lastSeenAt,
        display: x.display,
        current: x.id === s.id,
      })),
    };
  });

  app.post('/account/sessions/:id/end', { schema: { ...hidden, params: SessionParams, response: { 200: SessionsEndedAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const target = (await liveUserSessions(db, s.hotel.id, s.user.id)).find((x) => publicSessionId(x.id) === req.params.id);
    if (!target) throw new ApiError('RECORD_NOT_FOUND', { message: 'None of your sessions has this id: reload the list of your sessions.' });
    const ended = await endStaffSessions(db, s.hotel.id, s.user.id, { only: target.id }, me(req));
    closeStreams(ended);
    return { ended: ended.length };
  });

  app.post('/account/sessions/end-others', { schema: { ...hidden, response: { 200: SessionsEndedAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const ended = await endStaffSessions(db, s.hotel.id, s.user.id, { except: s.id }, me(req));
    closeStreams(ended);
    return { ended: ended.length };
  });

  // A wrong current password counts as a failed login (rate-limit/login.ts): a session left
  // open is no way to try passwords faster than the login form allows.
  app.post('/account/password', { schema: { ...hidden, body: PasswordChangeBody, response: { 200: PasswordChangedAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const takeBack = await countedAttempt(deps, req, s.user.email);
    let ended: string[];
    try {
      ({ ended } = await changeOwnPassword(db, s, { ...req.body, clientIp: clientOf(req) }));
    } catch (err) {
      // Only a wrong current password counts as a failed attempt; a refused new one does not.
      if (!(err instanceof ApiError && wrongCurrent(err))) await takeBack();
      throw err;
    }
    await takeBack();
    closeStreams(ended);
    return { passwordChanged: true as const, sessionsEnded: ended.length };
  });
};

function wrongCurrent(err: ApiError): boolean {
  const errors = err.extra.errors as Array<{ field: string }> | undefined;
  return errors?.[0]?.field === 'currentPassword';
}
