import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import * as passkeyRepo from '../../db/repositories/passkey.repository.js';
import { ApiError } from '../../errors.js';
import { clientOf } from '../../http/ip-limit.js';
import {
  authenticatePasskey,
  changePasskeysOnly,
  passkeyView,
  registerPasskey,
  registrationOptions,
  removePasskey,
  signInOptions,
  type PasskeyActor,
  type RelyingParty,
} from '../../staff/passkeys.js';
import { sessionView } from '../answers.js';
import { passwordAgain } from '../attempts.js';
import type { DashboardDeps } from '../deps.js';
import {
  IdParams,
  PasskeyAnswer,
  PasskeyLoginBody,
  PasskeyOptionsAnswer,
  PasskeyRegisterBody,
  PasskeyRemovedAnswer,
  PasskeysAnswer,
  PasskeysOnlyAnswer,
  PasskeysOnlyBody,
  PasswordAgainBody,
  SessionAnswer,
} from '../schemas.js';
import { checkSameOrigin, originOf, requestHost, sessionOf, sessionWithNewFactor, setSessionCookie, startSession } from '../session.js';

// docs/dashboard.md, "Passkeys": sign-in with a passkey (open, as login is) and the
// passkeys of the signed-in account (My account).

/** A browser's credential and its reply: at most this many bytes of JSON. */
const BODY_LIMIT = 16 * 1024;

/**
 * The relying party is the host the dashboard was asked for (its name without the port),
 * the origin `https://<host>[:port]`: the browser signs the origin it shows, so a passkey
 * works on the host it was registered on.
 */
function relyingParty(req: FastifyRequest): RelyingParty {
  const host = requestHost(req);
  if (host === undefined) throw new ApiError('PASSKEY_INVALID');
  let url: URL;
  try {
    url = new URL(`https://${host}`);
  } catch {
    throw new ApiError('PASSKEY_INVALID');
  }
  return { rpId: url.hostname, origin: url.origin };
}

/** Sign in with a passkey: no session yet, so counted per address and same-origin only, as login. */
export const passkeyLoginRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const { db } = deps;
  const sameOrigin = async (req: FastifyRequest): Promise<void> => checkSameOrigin(req);
  const open = { onRequest: [app.limitByIp, sameOrigin], bodyLimit: BODY_LIMIT };

  app.post('/passkey-login/options', { ...open, schema: { hide: true, response: { 200: PasskeyOptionsAnswer } } }, async (req) => ({
    options: await signInOptions(db, relyingParty(req)),
  }));

  app.post('/passkey-login', { ...open, schema: { hide: true, body: PasskeyLoginBody, response: { 200: SessionAnswer } } }, async (req, reply) => {
    // A passkey is possession and user verification at once: the session is complete.
    const signedIn = await authenticatePasskey(db, relyingParty(req), req.body.credential as AuthenticationResponseJSON);
    const display = req.body.display === true;
    const { token, csrfToken } = await startSession(db, signedIn.user, { display, passkeyId: signedIn.passkeyId, ...originOf(req) });
    setSessionCookie(reply, token);
    return sessionView(signedIn, csrfToken, display);
  });
};

/**
 * The signed-in user's own passkeys (never a display session's). Adding one is open to a
 * sign-in that must enrol a second factor too (docs/dashboard.md, "Second factors"): the
 * passkey is that factor, and the session becomes full.
 */
export const accountPasskeyRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, deps) => {
  const { db } = deps;
  const hidden = { hide: true };
  const enrolling = { stages: ['enrol'] as const };
  // A full display session is refused before (session.ts checkStage); an enrolling display is refused here.
  app.addHook('onRequest', async (req) => {
    if (sessionOf(req).display) throw new ApiError('DISPLAY_READ_ONLY');
  });
  const actor = (req: FastifyRequest): PasskeyActor => ({ session: sessionOf(req), clientIp: clientOf(req) });
  /** The user's other sessions ended by a change: their live streams on this instance close now (other instances': within 5 s). */
  const closeStreams = (ids: string[]): void => ids.forEach((id) => deps.streams.endSession(id));

  app.get('/account/passkeys', { schema: { ...hidden, response: { 200: PasskeysAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const list = await passkeyRepo.listPasskeys(db, s.hotel.id, s.user.id);
    const only = await passkeyRepo.passkeysOnly(db, s.hotel.id, s.user.id);
    return { passkeys: list.map(passkeyView), passkeysOnly: only, signedInWithPasskey: s.passkeyId !== null };
  });

  app.post(
    '/account/passkeys/options',
    { config: enrolling, schema: { ...hidden, body: PasswordAgainBody, response: { 200: PasskeyOptionsAnswer } } },
    async (req) => {
      const s = sessionOf(req);
      await passwordAgain(deps, req, s, req.body.password);
      return { options: await registrationOptions(db, s, relyingParty(req)) };
    },
  );

  app.post(
    '/account/passkeys',
    { config: enrolling, bodyLimit: BODY_LIMIT, schema: { ...hidden, body: PasskeyRegisterBody, response: { 201: PasskeyAnswer } } },
    async (req, reply) => {
      const credential = req.body.credential as RegistrationResponseJSON;
      const added = await registerPasskey(db, actor(req), relyingParty(req), { name: req.body.name, credential });
      closeStreams(added.endedSessions);
      const session = await sessionWithNewFactor(db, req, sessionOf(req), reply);
      return reply.code(201).send({ passkey: added.passkey, session });
    },
  );

  app.post(
    '/account/passkeys/:id/remove',
    { schema: { ...hidden, params: IdParams, body: PasswordAgainBody, response: { 200: PasskeyRemovedAnswer } } },
    async (req) => {
      await passwordAgain(deps, req, sessionOf(req), req.body.password);
      closeStreams(await removePasskey(db, actor(req), req.params.id));
      return { id: req.params.id, removed: true as const };
    },
  );

  app.post('/account/passkeys-only', { schema: { ...hidden, body: PasskeysOnlyBody, response: { 200: PasskeysOnlyAnswer } } }, async (req) => {
    const on = req.body.passkeysOnly;
    // Turning it on is confirmed with the password; turning it off needs a passkey session (changePasskeysOnly).
    if (on) await passwordAgain(deps, req, sessionOf(req), req.body.password ?? '');
    closeStreams(await changePasskeysOnly(db, actor(req), on));
    return { passkeysOnly: on };
  });
};
