import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listKeyPairs } from '../../db/repositories/api-key.repository.js';
import { listChecklistFacts, type ChecklistFact } from '../../db/repositories/key-checklist.repository.js';
import { CHECKLIST_ITEMS } from '../../pms/key-checklist.js';
import { findHotelRequest, listHotelRequests, type RequestLogFilter } from '../../db/repositories/request-log.repository.js';
import { ApiError, fieldError, validationError } from '../../errors.js';
import { refined, type Refinement } from '../../http/validation.js';
import { changePair, keyPairViews, revokePair } from '../../keys/key-pairs.js';
import { checkRestrictionChanges, type RestrictionChanges } from '../../keys/restrictions.js';
import { issueKeyPair } from '../../operations.js';
import { DEFAULT_MAX_KEY_PAIRS_PER_HOTEL } from '../../config.js';
import type { DashboardDeps } from '../deps.js';
import {
  IdParams,
  IssuedKeysAnswer,
  KeyChecklistAnswer,
  KeyIdParams,
  KeyRestrictionsAnswer,
  KeyRestrictionsBody,
  KeysAnswer,
  RequestAnswer,
  RequestsAnswer,
  RequestsQuery,
  RevokedKeysAnswer,
} from '../schemas.js';
import { nextCursor, parseCursor } from '../cursor.js';
import { changedBy, sessionOf } from '../session.js';
import { recordRequestBodyAccess } from '../access-trail.js';

/** `date-time` admits 23:59:60, which no Date can hold: refused here, not failed later. */
const existingTimes: Refinement = (q) =>
  (['since', 'until'] as const)
    .filter((f) => typeof q[f] === 'string' && Number.isNaN(Date.parse(String(q[f]))))
    .map((f) => fieldError(f, 'INVALID_FORMAT', `${f} must be an ISO 8601 date-time that exists (e.g. 2026-11-23T08:00:00Z).`));

const ENDPOINT_PATHS: Record<string, Pick<RequestLogFilter, 'pathPrefix' | 'pathExact'>> = {
  checkin: { pathPrefix: '/guests/checkin' },
  update: { pathPrefix: '/guests/update' },
  checkout: { pathPrefix: '/guests/checkout' },
  sync: { pathPrefix: '/guests/sync' },
  list: { pathExact: '/guests' },
};

/** The integration console, for admins: the hotel's key pairs and its request log. */
export const consoleRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, { db, maxKeyPairsPerHotel = DEFAULT_MAX_KEY_PAIRS_PER_HOTEL }) => {
  const hidden = { hide: true };

  app.get('/keys', { schema: { ...hidden, response: { 200: KeysAnswer } } }, async (req) => ({ keys: await keyPairViews(db, sessionOf(req).hotel.id) }));

  const restrictedBody = refined(KeyRestrictionsBody, (b) => {
    const checked = checkRestrictionChanges(b as RestrictionChanges);
    return checked.ok ? [] : checked.errors;
  });

  app.post('/keys', { schema: { ...hidden, body: restrictedBody, response: { 201: IssuedKeysAnswer } } }, async (req, reply) => {
    const pair = await issueKeyPair(db, sessionOf(req).hotel.slug, { maxActive: maxKeyPairsPerHotel, restrictions: req.body ?? {}, by: changedBy(req) });
    return reply.code(201).send({ keyId: pair.keyId, live: pair.live, test: pair.test });
  });

  app.patch('/keys/:keyId', { schema: { ...hidden, params: KeyIdParams, body: restrictedBody, response: { 200: KeyRestrictionsAnswer } } }, async (req) => {
    const checked = checkRestrictionChanges(req.body ?? {});
    if (!checked.ok) throw validationError(checked.errors);
    const after = await changePair(db, req.params.keyId, checked.changes, changedBy(req), sessionOf(req).hotel.id);
    if (!after)
      throw new ApiError('RECORD_NOT_FOUND', { message: 'No active key pair with this id in your hotel: reload the Keys page to see its key pairs.' });
    return { keyId: req.params.keyId, ...after };
  });

  app.post('/keys/:keyId/revoke', { schema: { ...hidden, params: KeyIdParams, response: { 200: RevokedKeysAnswer } } }, async (req) => {
    const { keyId } = req.params;
    if (!(await revokePair(db, keyId, changedBy(req), sessionOf(req).hotel.id)))
      throw new ApiError('RECORD_NOT_FOUND', { message: 'No key pair with this id in your hotel.' });
    return { keyId, revoked: true as const };
  });

  app.get('/keys/:keyId/checklist', { schema: { ...hidden, params: KeyIdParams, response: { 200: KeyChecklistAnswer } } }, async (req) => {
    const { keyId } = req.params;
    const pairs = await listKeyPairs(db, sessionOf(req).hotel.id);
    if (!pairs.some((p) => p.pairId === keyId)) throw new ApiError('RECORD_NOT_FOUND', { message: 'No key pair with this id in your hotel.' });
    return checklistAnswer(keyId, await listChecklistFacts(db, keyId));
  });

  app.get('/requests', { schema: { ...hidden, querystring: refined(RequestsQuery, existingTimes), response: { 200: RequestsAnswer } } }, async (req) => {
    const q = req.query;
    const limit = q.limit ? Number(q.limit) : 50;
    const rows = await listHotelRequests(db, sessionOf(req).hotel, {
      status: q.status,
      ...(q.endpoint ? ENDPOINT_PATHS[q.endpoint] : {}),
      mode: q.mode,
      sender: q.sender,
      since: q.since ? new Date(q.since).toISOString() : undefined,
      until: q.until ? new Date(q.until).toISOString() : undefined,
      before: parseCursor(q.before),
      limit,
    });
    return { requests: rows, next: nextCursor(rows, limit) };
  });

  app.get('/requests/:id', { schema: { ...hidden, params: IdParams, response: { 200: RequestAnswer } } }, async (req) => {
    const row = await findHotelRequest(db, sessionOf(req).hotel, req.params.id);
    if (!row) throw new ApiError('RECORD_NOT_FOUND', { message: 'No request with this id in your hotel.' });
    await recordRequestBodyAccess(db, req, row);
    return { request: row };
  });
};

/** Every checklist item, in order, with what each mode has shown. */
function checklistAnswer(keyId: string, facts: ChecklistFact[]): KeyChecklistAnswer {
  const state = (item: string, mode: 'live' | 'test') => {
    const f = facts.find((x) => x.item === item && x.mode === mode);
    return { shown: f !== undefined, shownAt: f?.shown_at ?? null, requestId: f?.request_id ?? null };
  };
  return {
    keyId,
    items: CHECKLIST_ITEMS.map((item) => ({ item, test: state(item, 'test'), live: state(item, 'live') })),
  };
}
