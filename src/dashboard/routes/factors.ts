import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import * as staff from '../../db/repositories/staff.repository.js';
import { insertSecurityEvent } from '../../db/repositories/security.repository.js';
import { ApiError } from '../../errors.js';
import { clientOf } from '../../http/ip-limit.js';
import {
  confirmTotp,
  createPairingCode,
  factorsOf,
  hotelFactors,
  pairedDisplays,
  regenerateRecoveryCodes,
  removeTotp,
  resetFactors,
  setSecondFactorRequirement,
  startTotp,
  unpairDisplay,
  verifySecondFactor,
  type FactorChange,
} from '../../staff/factors.js';
import { sessionView } from '../answers.js';
import { countedAttempt, passwordAgain } from '../attempts.js';
import type { DashboardDeps } from '../deps.js';
import {
  FactorRemovedAnswer,
  FactorsAnswer,
  FactorsResetAnswer,
  HotelFactorsAnswer,
  IdParams,
  DisplayUnpairedAnswer,
  PairedDisplaysAnswer,
  PairingCodeAnswer,
  PairingCodeBody,
  PasswordAgainBody,
  RecoveryCodesAnswer,
  SecondFactorBody,
  SecondFactorRuleAnswer,
  SecondFactorRuleBody,
  SessionAnswer,
  TotpConfirmAnswer,
  TotpStartAnswer,
} from '../schemas.js';
import { changedBy, promoteSession, sessionOf, sessionWithNewFactor } from '../session.js';

// docs/dashboard.md, "Second factors".

const hide = { hide: true };
/** Routes a sign-in that must enrol a second factor may use (besides a full session). */
const enrolling = { stages: ['enrol'] as const };

/** Who makes a change from this session: the user, from the request's address; the session itself stays. */
function byThisSession(req: FastifyRequest, s: staff.StaffSession): FactorChange {
  return { actor: { type: 'staff', userId: s.user.id }, clientIp: clientOf(req), keepSessionId: s.id };
}

/** The sessions a change ended: their live streams close too. */
function closeStreams(deps: DashboardDeps, ids: string[]): void {
  for (const id of ids) deps.streams.endSession(id);
}

/** The second step of a sign-in, and the user's own factors (the My account page). */
export const accountFactorRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const { db } = deps;
  const user = (s: staff.StaffSession) => ({ id: s.user.id, hotelId: s.hotel.id, email: s.user.email });

  app.post(
    '/login/second-factor',
    { config: { stages: ['second_factor'] }, schema: { ...hide, body: SecondFactorBody, response: { 200: SessionAnswer } } },
    async (req, reply) => {
      const s = sessionOf(req);
      if (s.stage !== 'second_factor') return sessionView(s, s.csrfToken, s.display, s.stage);
      const takeBack = await countedAttempt(deps, req, s.user.email);
      if (!(await verifySecondFactor(db, user(s), req.body.code, clientOf(req)))) {
        // A failed sign-in of the account, at its second step (docs/dashboard.md, "Access trail").
        const detail = { step: 'second_factor' };
        await insertSecurityEvent(db, {
          hotelId: s.hotel.id,
          kind: 'login.failed',
          actor: { type: 'anonymous' },
          subjectUserId: s.user.id,
          clientIp: clientOf(req),
          detail,
        });
        throw new ApiError('SECOND_FACTOR_INVALID');
      }
      await takeBack();
      return promoteSession(db, req, s, reply);
    },
  );

  app.get('/account/factors', { config: enrolling, schema: { ...hide, response: { 200: FactorsAnswer } } }, async (req) => factorsOf(db, user(sessionOf(req))));

  app.post('/account/totp/start', { config: enrolling, schema: { ...hide, body: PasswordAgainBody, response: { 200: TotpStartAnswer } } }, async (req) => {
    const s = sessionOf(req);
    await passwordAgain(deps, req, s, req.body.password);
    return startTotp(db, user(s), s.hotel.slug);
  });

  app.post(
    '/account/totp/confirm',
    { config: enrolling, schema: { ...hide, body: SecondFactorBody, response: { 200: TotpConfirmAnswer } } },
    async (req, reply) => {
      const s = sessionOf(req);
      const { recoveryCodes, endedSessions } = await confirmTotp(db, user(s), req.body.code, byThisSession(req, s));
      closeStreams(deps, endedSessions);
      return { recoveryCodes, session: await sessionWithNewFactor(db, req, s, reply) };
    },
  );

  app.post('/account/totp/remove', { schema: { ...hide, body: PasswordAgainBody, response: { 200: FactorRemovedAnswer } } }, async (req) => {
    const s = sessionOf(req);
    await passwordAgain(deps, req, s, req.body.password);
    closeStreams(deps, await removeTotp(db, user(s), byThisSession(req, s)));
    return { removed: true as const };
  });

  app.post('/account/recovery-codes', { schema: { ...hide, body: PasswordAgainBody, response: { 200: RecoveryCodesAnswer } } }, async (req) => {
    const s = sessionOf(req);
    await passwordAgain(deps, req, s, req.body.password);
    const { recoveryCodes, endedSessions } = await regenerateRecoveryCodes(db, user(s), byThisSession(req, s));
    closeStreams(deps, endedSessions);
    return { recoveryCodes };
  });
};

/** The hotel's rule, a user's factors reset, and display pairing: for admins. */
export const factorAdminRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const { db } = deps;

  app.get('/hotel/second-factor', { schema: { ...hide, response: { 200: HotelFactorsAnswer } } }, async (req) => hotelFactors(db, sessionOf(req).hotel.id));

  app.post('/hotel/second-factor', { schema: { ...hide, body: SecondFactorRuleBody, response: { 200: SecondFactorRuleAnswer } } }, async (req) => {
    const s = sessionOf(req);
    await setSecondFactorRequirement(db, s.hotel.id, req.body.required, byThisSession(req, s));
    return { required: req.body.required };
  });

  app.post('/users/:id/reset-factors', { schema: { ...hide, params: IdParams, response: { 200: FactorsResetAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const target = await staff.findUser(db, s.hotel.id, req.params.id);
    if (!target) throw new ApiError('RECORD_NOT_FOUND', { message: 'No user with this id in your hotel.' });
    closeStreams(deps, await resetFactors(db, { id: target.id, hotelId: s.hotel.id }, byThisSession(req, s)));
    return { userId: target.id, reset: true as const };
  });

  // The body is optional (no name): a request without one is read as `{}`.
  const noBodyIsEmpty = async (req: FastifyRequest): Promise<void> => {
    req.body ??= {};
  };
  app.post(
    '/displays/pairing-code',
    { preValidation: noBodyIsEmpty, schema: { ...hide, body: PairingCodeBody, response: { 201: PairingCodeAnswer } } },
    async (req, reply) => {
      const s = sessionOf(req);
      const label = req.body.label?.trim() ?? '';
      return reply.code(201).send(await createPairingCode(db, s.hotel.id, s.user.id, label === '' ? null : label));
    },
  );

  app.get('/displays', { schema: { ...hide, response: { 200: PairedDisplaysAnswer } } }, async (req) => ({
    displays: await pairedDisplays(db, sessionOf(req).hotel.id),
  }));

  // The pairing and every session that came through it end at once, their event streams with them.
  app.post('/displays/:id/unpair', { schema: { ...hide, params: IdParams, response: { 200: DisplayUnpairedAnswer } } }, async (req) => {
    const id = req.params.id;
    closeStreams(deps, await unpairDisplay(db, sessionOf(req).hotel.id, id, changedBy(req)));
    return { id, unpaired: true as const };
  });
};
