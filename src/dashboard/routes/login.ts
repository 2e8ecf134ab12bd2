import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import * as staff from '../../db/repositories/staff.repository.js';
import { ApiError, fieldError } from '../../errors.js';
import { foreignKeyViolation } from '../../db/database.js';
import { normalizeEmail } from '../../domain/accounts.js';
import { clientOf } from '../../http/ip-limit.js';
import { insertSecurityEvent } from '../../db/repositories/security.repository.js';
import { refined, type Refinement } from '../../http/validation.js';
import { pairDisplay, signInStage, usePairedDisplay } from '../../staff/factors.js';
import { authenticateStaff, setUpFirstHotel, setupDone } from '../../staff/staff-service.js';
import { countedAttempt } from '../attempts.js';
import type { DashboardDeps } from '../deps.js';
import { LoginBody, LogoutAnswer, SessionAnswer, SetupBody, SetupLinkAnswer, SetupTokenParams } from '../schemas.js';
import { sessionView } from '../answers.js';
import {
  checkSameOrigin,
  clearSessionCookie,
  displayToken,
  endSession,
  originOf,
  sessionOf,
  setDisplayCookie,
  setSessionCookie,
  startSession,
} from '../session.js';

/** As `innsync hotel create`: a name of blanks only is no name; a confirmation must repeat the password. */
const setupRules: Refinement = (b) => [
  ...(typeof b.hotelName === 'string' && b.hotelName.trim() === '' ? [fieldError('hotelName', 'TOO_SHORT', 'hotelName must not be blank.')] : []),
  ...(typeof b.passwordConfirm === 'string' && b.passwordConfirm !== b.password
    ? [fieldError('passwordConfirm', 'INVALID_VALUE', 'passwordConfirm must repeat the password exactly.')]
    : []),
];

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
    const takeBack = await countedAttempt(deps, req, email);
    const outcome = await authenticateStaff(db, email, req.body.password, req.body.hotel);
    // Logged as a security event with the client's address (http/error-reply.ts), never with the e-mail;
    // kept as an entry of each account it was tried on (docs/dashboard.md, "Access trail"),
    // written once the answer is sent: an unknown e-mail, which has no account to write it
    // for, answers as fast as a known one.
    if (outcome.kind === 'failed') {
      const clientIp = clientOf(req);
      reply.raw.once('close', () => {
        recordFailedSignIns(db, outcome.accounts, clientIp).catch((err: unknown) => req.log.error({ err }, 'a failed sign-in could not be recorded'));
      });
      throw new ApiError('LOGIN_FAILED');
    }
    // The same e-mail and password at several hotels: the form asks which, and sends the
    // login again with `hotel`. Only the hotels this password opened are named. The
    // password was right: not a failure.
    if (outcome.kind === 'choose-hotel') {
      await takeBack();
      throw new ApiError('HOTEL_CHOICE_REQUIRED', { extra: { hotels: outcome.hotels } });
    }
    const display = req.body.display === true;
    // A wrong pairing code is a failed attempt: it is not taken back.
    const pairedDisplayId = display ? await pairedDevice(deps, req, reply, outcome.user, req.body.pairingCode) : null;
    await takeBack();
    // docs/dashboard.md, "Second factors": a paired display skips the second factor; its
    // session records the pairing, whose unpairing ends it. Unpaired between the check and
    // the session's insert (its foreign key): the device is no longer paired, and signs in as any.
    const start = async (paired: string | null) => {
      const stage = paired !== null ? 'full' : await signInStage(db, outcome.user);
      return { stage, ...(await startSession(db, outcome.user, { display, stage, pairedDisplayId: paired, ...originOf(req) })) };
    };
    const { stage, token, csrfToken } = await start(pairedDisplayId).catch((err: unknown) => {
      if (pairedDisplayId === null || !foreignKeyViolation(err)) throw err;
      return start(null);
    });
    setSessionCookie(reply, token);
    return sessionView(outcome, csrfToken, display, stage);
  });
};

/** One `login.failed` entry for each account the failed sign-in was tried on. */
async function recordFailedSignIns(db: DashboardDeps['db'], accounts: Array<{ hotelId: string; userId: string }>, clientIp: string): Promise<void> {
  for (const a of accounts)
    await insertSecurityEvent(db, { hotelId: a.hotelId, kind: 'login.failed', actor: { type: 'anonymous' }, subjectUserId: a.userId, clientIp });
}

/**
 * The pairing a display sign-in comes through, or null: the paired-device cookie of a
 * current pairing of the user's hotel, or a pairing made now with an admin's code (the
 * device then gets the cookie).
 */
async function pairedDevice(
  deps: DashboardDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  user: staff.StaffUser,
  code: string | undefined,
): Promise<string | null> {
  if (code === undefined) {
    const token = displayToken(req);
    return token === null ? null : usePairedDisplay(deps.db, user.hotelId, token);
  }
  const paired = await pairDisplay(deps.db, user, code, clientOf(req));
  if (paired === null) throw new ApiError('PAIRING_CODE_INVALID');
  setDisplayCookie(reply, paired.token);
  return paired.displayId;
}

/** The signed-in user's session: what the page shows, and logout. */
export const sessionRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  // Displays, and sign-ins still waiting for their second factor or enrolment, too.
  const anyStage = { display: true, stages: ['second_factor', 'enrol'] as const };
  app.post('/logout', { config: anyStage, schema: { hide: true, response: { 200: LogoutAnswer } } }, async (req, reply) => {
    const s = sessionOf(req);
    await endSession(deps.db, s);
    deps.streams.endSession(s.id);
    clearSessionCookie(reply);
    return { loggedOut: true as const };
  });

  app.get('/session', { config: anyStage, schema: { hide: true, response: { 200: SessionAnswer } } }, async (req) => {
    const s = sessionOf(req);
    return sessionView(s, s.csrfToken, s.display, s.stage);
  });
};
