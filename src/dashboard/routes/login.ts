import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import * as staff from '../../db/repositories/staff.repository.js';
import { ApiError, fieldError } from '../../errors.js';
import { normalizeEmail } from '../../domain/accounts.js';
import { clientOf } from '../../http/ip-limit.js';
import { insertSecurityEvent } from '../../db/repositories/security.repository.js';
import { refined, type Refinement } from '../../http/validation.js';
import { countLoginAttempt } from '../../rate-limit/login.js';
import { authenticateStaff, setUpFirstHotel, setupDone } from '../../staff/staff-service.js';
import type { DashboardDeps } from '../deps.js';
import { LoginBody, LogoutAnswer, SessionAnswer, SetupBody, SetupLinkAnswer, SetupTokenParams } from '../schemas.js';
import { sessionView } from '../answers.js';
import { checkSameOrigin, clearSessionCookie, endSession, originOf, sessionOf, setSessionCookie, startSession } from '../session.js';

/** As `innsync hotel create`: a name of blanks only is no name; a confirmation must repeat the password. */
const setupRules: Refinement = (b) => [
  ...(typeof b.hotelName === 'string' && b.hotelName.trim() === '' ? [fieldError('hotelName', 'TOO_SHORT', 'hotelName must not be blank.')] : []),
  ...(typeof b.passwordConfirm === 'string' && b.passwordConfirm !== b.password
    ? [fieldError('passwordConfirm', 'INVALID_VALUE', 'passwordConfirm must repeat the password exactly.')]
    : []),
];

/** 429 of the login limits (rate-limit/login.ts), counted in the metrics. */
function tooManyFailedLogins(deps: DashboardDeps, retryAfter: number): ApiError {
  deps.metrics?.rateLimited('login');
  return new ApiError('RATE_LIMITED', {
    message: `Too many failed logins; try again in ${Math.ceil(retryAfter / 60)} minutes.`,
    extra: { retryAfter },
    headers: { 'retry-after': String(retryAfter) },
  });
}

/**
 * A password check counted by the failed-login limits of `email` (rate-limit/login.ts):
 * 429 RATE_LIMITED when over one; else the function that takes the attempt back (a right password).
 */
export async function countLogin(deps: DashboardDeps, email: string, req: FastifyRequest): Promise<() => Promise<void>> {
  const attempt = await countLoginAttempt(deps.rateLimits, email, clientOf(req), Date.now());
  if (!attempt.allowed) throw tooManyFailedLogins(deps, attempt.retryAfterSeconds);
  return attempt.takeBack;
}

/**
 * First run and login: open to anyone, so each is counted against the per-IP limit,
 * takes a small body and must come from the dashboard's own page (same origin).
 */
export const openRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const { db } = deps;
  const sameOrigin = async (req: FastifyRequest): Promise<void> => checkSameOrigin(req);
  const open = { onRequest: [app.limitByIp, sameOrigin], bodyLimit: 4 * 1024 };

  app.get(
    '/setup/:token',
    { onRequest: app.limitByIp, bodyLimit: open.bodyLimit, schema: { hide: true, params: SetupTokenParams, response: { 200: SetupLinkAnswer } } },
    async (req) => {
      const { token } = req.params;
      if ((await staff.countHotels(db)) > 0) throw setupDone();
      if (!deps.setupLink.matches(token)) throw new ApiError('SETUP_LINK_INVALID');
      return { valid: true as const };
    },
  );

  app.post('/setup', { ...open, schema: { hide: true, body: refined(SetupBody, setupRules), response: { 201: SessionAnswer } } }, async (req, reply) => {
    const body = req.body;
    if (!deps.setupLink.take(body.token)) throw new ApiError('SETUP_LINK_INVALID');
    let created: Awaited<ReturnType<typeof setUpFirstHotel>>;
    try {
      created = await setUpFirstHotel(db, { slug: body.hotelSlug, name: body.hotelName, email: body.email, password: body.password, timeZone: body.timeZone });
    } catch (err) {
      // A taken slug or e-mail leaves the link usable for a corrected try; a hotel made meanwhile does not.
      if (!(err instanceof ApiError) || err.code !== 'SETUP_LINK_INVALID') deps.setupLink.restore(body.token);
      throw err;
    }
    const { user, hotel } = created;
    const { token, csrfToken } = await startSession(db, user, originOf(req));
    setSessionCookie(reply, token);
    req.log.info({ hotel: hotel.slug, userId: user.id }, 'first hotel and admin created through the setup link');
    return reply.code(201).send(sessionView({ user, hotel }, csrfToken));
  });

  app.post('/login', { ...open, schema: { hide: true, body: LoginBody, response: { 200: SessionAnswer } } }, async (req, reply) => {
    const email = normalizeEmail(req.body.email);
    // Counted before the (slow) password check, by the login limits (rate-limit/login.ts).
    const takeBack = await countLogin(deps, email, req);
    const outcome = await authenticateStaff(db, email, req.body.password, req.body.hotel);
    // Logged as a security event with the client's address (http/error-reply.ts), never with the e-mail;
    // kept as an entry of each account it was tried on (docs/dashboard.md, "Access trail").
    if (outcome.kind === 'failed') {
      for (const a of outcome.accounts)
        await insertSecurityEvent(db, {
          hotelId: a.hotelId,
          kind: 'login.failed',
          actor: { type: 'anonymous' },
          subjectUserId: a.userId,
          clientIp: clientOf(req),
        });
      throw new ApiError('LOGIN_FAILED');
    }
    // The password was right (one account, or several to choose from): not a failure.
    await takeBack();
    // The same e-mail and password at several hotels: the form asks which, and sends the
    // login again with `hotel`. Only the hotels this password opened are named.
    if (outcome.kind === 'choose-hotel') throw new ApiError('HOTEL_CHOICE_REQUIRED', { extra: { hotels: outcome.hotels } });
    const display = req.body.display === true;
    const { token, csrfToken } = await startSession(db, outcome.user, { display, ...originOf(req) });
    setSessionCookie(reply, token);
    return sessionView(outcome, csrfToken, display);
  });
};

/** The signed-in user's session: what the page shows, and logout. */
export const sessionRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const display = { display: true };
  app.post('/logout', { config: display, schema: { hide: true, response: { 200: LogoutAnswer } } }, async (req, reply) => {
    const s = sessionOf(req);
    await endSession(deps.db, s);
    deps.streams.endSession(s.id);
    clearSessionCookie(reply);
    return { loggedOut: true as const };
  });

  app.get('/session', { config: display, schema: { hide: true, response: { 200: SessionAnswer } } }, async (req) => {
    const s = sessionOf(req);
    return sessionView(s, s.csrfToken, s.display);
  });
};
