import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import { listActivity, type Actor } from '../db/repositories/activity.repository.js';
import { listKeyPairs, revokeKeyPair } from '../db/repositories/api-key.repository.js';
import { findGuestById, listRoomHistory, type Guest } from '../db/repositories/guest.repository.js';
import { findHotelRequest, listHotelRequests, type RequestLogFilter } from '../db/repositories/request-log.repository.js';
import * as staff from '../db/repositories/staff.repository.js';
import { ApiError, fieldError } from '../errors.js';
import type { RosterEventBus } from '../events/roster-events.js';
import type { Metrics } from '../http/metrics.js';
import { refined, type Refinement } from '../http/validation.js';
import { refineGuestFields } from '../domain/guest.js';
import { issueKeyPair } from '../operations.js';
import { addStaffUser, authenticateStaff, deactivateStaffUser, setUpFirstHotel } from '../staff/staff-service.js';
import { consume, LOGIN_FAILURE_LIMITS, type RateLimitStore } from '../pms/rate-limit.js';
import { createReceptionistGuest, checkOutGuestByStaff, updateReceptionistGuest } from '../roster/receptionist-service.js';
import { listGuests } from '../roster/roster-service.js';
import { registerDashboardAssets } from './assets.js';
import type { LiveStreams } from './live-events.js';
import type { RequestLogWriter } from '../pms/request-log.js';
import { ActivityQuery, GuestPatchBody, IdParams, LoginBody, RequestsQuery, SetupBody, UserBody, WalkInBody } from './schemas.js';
import { checkCsrf, checkSameOrigin, clearSessionCookie, endSession, loadSession, setSessionCookie, startSession } from './session.js';
import type { SetupLink } from './setup-link.js';
import { registerPrivacyRoutes } from './privacy-routes.js';

export interface DashboardDeps {
  db: Db;
  bus: RosterEventBus;
  rateLimits: RateLimitStore;
  setupLink: SetupLink;
  streams: LiveStreams;
  metrics?: Metrics;
  /** Flushed before an erasure, so request-log rows still queued are searched too. */
  requestLog?: Pick<RequestLogWriter, 'flush'>;
}

const API = '/dashboard/api';

/** docs/dashboard.md: only this origin, no inline script or style, never framed. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

/** `date-time` admits 23:59:60, which no Date can hold: refused here, not failed later. */
const existingTimes: Refinement = (q) =>
  (['since', 'until'] as const)
    .filter((f) => typeof q[f] === 'string' && Number.isNaN(Date.parse(String(q[f]))))
    .map((f) => fieldError(f, 'INVALID_FORMAT', `${f} must be an ISO 8601 date-time that exists (e.g. 2026-11-23T08:00:00Z).`));

/** As `innsync hotel create`: a name of blanks only is no name. */
const nonBlankHotelName: Refinement = (b) =>
  typeof b.hotelName === 'string' && b.hotelName.trim() === '' ? [fieldError('hotelName', 'TOO_SHORT', 'hotelName must not be blank.')] : [];

// The walk-in and edit forms get the PMS API's cross-field rules (trimmed room, date order).
const guestFields: Refinement = (b) => refineGuestFields(b);

function sessionView(s: { user: { id: string; email: string; role: string }; hotel: { slug: string; name: string } }, csrfToken: string) {
  return { user: { id: s.user.id, email: s.user.email, role: s.user.role }, hotel: { slug: s.hotel.slug, name: s.hotel.name }, csrfToken };
}

/** A guest as the dashboard shows it: every member but the hotel id (docs/dashboard.md). */
function guestView(g: Guest): Omit<Guest, 'hotelId'> {
  const { hotelId: _hotelId, ...view } = g;
  return view;
}

/** Pages are (created_at, id) positions: `next` of one page is `before` of the following one. */
function parseCursor(cursor: string | undefined): { at: string; id: string } | undefined {
  if (cursor === undefined) return undefined;
  const cut = cursor.lastIndexOf('~');
  if (cut <= 0)
    throw new ApiError('VALIDATION_ERROR', {
      message: 'before: not a cursor this API gave out.',
      extra: { errors: [{ field: 'before', code: 'INVALID_FORMAT', message: 'before must be the `next` value of a previous page.' }] },
    });
  return { at: cursor.slice(0, cut), id: cursor.slice(cut + 1) };
}

function nextCursor<T extends { at: string; id: string }>(rows: T[], limit: number): string | null {
  const last = rows[rows.length - 1];
  return rows.length === limit && last ? `${last.at}~${last.id}` : null;
}

const ENDPOINT_PATHS: Record<string, Pick<RequestLogFilter, 'pathPrefix' | 'pathExact'>> = {
  checkin: { pathPrefix: '/guests/checkin' },
  update: { pathPrefix: '/guests/update' },
  checkout: { pathPrefix: '/guests/checkout' },
  sync: { pathPrefix: '/guests/sync' },
  list: { pathExact: '/guests' },
};

/** The room an entry is about, from its changes (check-in and move: the new room; check-out: the old one). */
function roomOfEntry(changes: unknown): string | null {
  const room = (changes as { roomNumber?: { from?: unknown; to?: unknown } } | null)?.roomNumber;
  if (!room) return null;
  const value = room.to ?? room.from;
  return typeof value === 'string' ? value : null;
}

function session(req: FastifyRequest): staff.StaffSession {
  if (!req.staff) throw new ApiError('NOT_AUTHENTICATED');
  return req.staff;
}

function staffActor(s: staff.StaffSession): Actor {
  return { type: 'staff', id: s.user.id, mode: null };
}

export function registerDashboardRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const { db } = deps;
  const rosterDeps = { db, bus: deps.bus, metrics: deps.metrics };

  app.addHook('onSend', async (req, reply, payload) => {
    if (req.routeOptions.config.dashboard || req.url.startsWith('/dashboard/')) void reply.headers(SECURITY_HEADERS);
    return payload;
  });

  registerDashboardAssets(app);

  /** Every API route but login and setup: a live session; CSRF on writes; admins only where `admin`. */
  const requireStaff =
    (role: 'any' | 'admin') =>
    async (req: FastifyRequest): Promise<void> => {
      const s = await loadSession(db, req);
      if (!s) throw new ApiError('NOT_AUTHENTICATED');
      req.staff = s;
      checkCsrf(req, s);
      if (role === 'admin' && s.user.role !== 'admin') throw new ApiError('FORBIDDEN');
    };
  const staffOnly = { config: { dashboard: true }, onRequest: requireStaff('any') };
  const adminOnly = { config: { dashboard: true }, onRequest: requireStaff('admin') };
  // Login and setup: open to anyone, so the per-IP limit counts them and their bodies are small.
  const unauthenticated = { config: { dashboard: true, ipLimited: true }, bodyLimit: 4 * 1024 };
  const hidden = { hide: true };

  const ctx: RouteContext = { app, deps, db, rosterDeps, staffOnly, adminOnly, unauthenticated, hidden };
  registerLoginRoutes(ctx);
  registerRosterRoutes(ctx);
  registerConsoleRoutes(ctx);
  registerStaffRoutes(ctx);
}

/** What every group of dashboard routes shares: the app, its dependencies and the route options of each kind of access. */
interface RouteContext {
  app: FastifyInstance;
  deps: DashboardDeps;
  db: Db;
  rosterDeps: { db: Db; bus: RosterEventBus; metrics?: Metrics };
  staffOnly: { config: { dashboard: boolean }; onRequest: (req: FastifyRequest) => Promise<void> };
  adminOnly: { config: { dashboard: boolean }; onRequest: (req: FastifyRequest) => Promise<void> };
  unauthenticated: { config: { dashboard: boolean; ipLimited: boolean }; bodyLimit: number };
  hidden: { hide: boolean };
}

/** First run, login, logout and the session. */
function registerLoginRoutes({ app, deps, db, staffOnly, unauthenticated, hidden }: RouteContext): void {
  app.get<{ Params: { token: string } }>(`${API}/setup/:token`, { ...unauthenticated, schema: hidden }, async (req) => {
    if (!deps.setupLink.matches(req.params.token) || (await staff.countHotels(db)) > 0) throw new ApiError('SETUP_LINK_INVALID');
    return { valid: true };
  });

  app.post<{ Body: SetupBody }>(
    `${API}/setup`,
    { ...unauthenticated, onRequest: async (req) => checkSameOrigin(req), schema: { ...hidden, body: refined(SetupBody, nonBlankHotelName) } },
    async (req, reply) => {
      const body = req.body;
      if (!deps.setupLink.take(body.token)) throw new ApiError('SETUP_LINK_INVALID');
      let created: Awaited<ReturnType<typeof setUpFirstHotel>>;
      try {
        created = await setUpFirstHotel(db, { slug: body.hotelSlug, name: body.hotelName, email: body.email, password: body.password });
      } catch (err) {
        // A taken slug or e-mail leaves the link usable for a corrected try; a hotel made meanwhile does not.
        if (!(err instanceof ApiError) || err.code !== 'SETUP_LINK_INVALID') deps.setupLink.restore(body.token);
        throw err;
      }
      const { user, hotel } = created;
      const { token, csrfToken } = await startSession(db, user);
      setSessionCookie(reply, token);
      req.log.info({ hotel: hotel.slug, userId: user.id }, 'first hotel and admin created through the setup link');
      return reply.code(201).send(sessionView({ user, hotel }, csrfToken));
    },
  );

  app.post<{ Body: LoginBody }>(
    `${API}/login`,
    { ...unauthenticated, onRequest: async (req) => checkSameOrigin(req), schema: { ...hidden, body: LoginBody } },
    async (req, reply) => {
      const email = req.body.email.trim().toLowerCase();
      const now = Date.now();
      const byEmail = LOGIN_FAILURE_LIMITS.email;
      const byIp = LOGIN_FAILURE_LIMITS.ip;
      // Every attempt is counted before the (slow) password check, atomically, so parallel
      // guesses cannot all slip in under the limit; a successful login takes its count back.
      const ipResult = await consume(deps.rateLimits, req.ip, byIp, now);
      const emailResult = await consume(deps.rateLimits, email, byEmail, now);
      if (!ipResult.allowed || !emailResult.allowed) {
        deps.metrics?.rateLimited('login');
        const retryAfter = Math.max(ipResult.allowed ? 0 : ipResult.retryAfterSeconds, emailResult.allowed ? 0 : emailResult.retryAfterSeconds, 1);
        throw new ApiError('RATE_LIMITED', {
          message: `Too many failed logins; try again in ${Math.ceil(retryAfter / 60)} minutes.`,
          extra: { retryAfter },
          headers: { 'retry-after': String(retryAfter) },
        });
      }
      const outcome = await authenticateStaff(db, email, req.body.password, req.body.hotel);
      if (outcome.kind === 'failed') {
        // Logged as a security event with the client's address (app.ts), never with the e-mail.
        throw new ApiError('LOGIN_FAILED');
      }
      // The password was right (one account, or several to choose from): not a failure.
      await deps.rateLimits.unhit(`${byIp.name}:${req.ip}`, byIp.windowMs, now);
      await deps.rateLimits.unhit(`${byEmail.name}:${email}`, byEmail.windowMs, now);
      // The same e-mail and password at several hotels: the form asks which, and sends the
      // login again with `hotel`. Only the hotels this password opened are named.
      if (outcome.kind === 'choose-hotel') throw new ApiError('HOTEL_CHOICE_REQUIRED', { extra: { hotels: outcome.hotels } });
      const { token, csrfToken } = await startSession(db, outcome.user);
      setSessionCookie(reply, token);
      return sessionView(outcome, csrfToken);
    },
  );

  app.post(`${API}/logout`, { ...staffOnly, schema: hidden }, async (req, reply) => {
    const s = session(req);
    await endSession(db, s);
    deps.streams.endSession(s.id);
    clearSessionCookie(reply);
    return { loggedOut: true };
  });

  app.get(`${API}/session`, { ...staffOnly, schema: hidden }, async (req) => {
    const s = session(req);
    return sessionView(s, s.csrfToken);
  });
}

/** The roster: guests, walk-ins, edits, check-outs, activity and live events. */
function registerRosterRoutes({ app, deps, db, rosterDeps, staffOnly, hidden }: RouteContext): void {
  app.get(`${API}/guests`, { ...staffOnly, schema: hidden }, async (req) => {
    const guests = await listGuests(db, session(req).hotel.id);
    return { guests: guests.map(guestView) };
  });

  app.get<{ Params: IdParams }>(`${API}/guests/:id`, { ...staffOnly, schema: { ...hidden, params: IdParams } }, async (req) => {
    const g = await findGuestById(db, session(req).hotel.id, req.params.id);
    if (!g) throw new ApiError('RECORD_NOT_FOUND', { message: 'No guest with this id in your hotel.' });
    return { guest: guestView(g), rooms: await listRoomHistory(db, g.id) };
  });

  app.post<{ Body: WalkInBody }>(`${API}/guests`, { ...staffOnly, schema: { ...hidden, body: refined(WalkInBody, guestFields) } }, async (req, reply) => {
    const s = session(req);
    const b = req.body;
    const guest = await createReceptionistGuest(rosterDeps, s.hotel.id, staffActor(s), {
      firstName: b.firstName ?? null,
      lastName: b.lastName,
      phone: b.phone ?? null,
      email: b.email ?? null,
      language: b.language ?? null,
      nationality: b.nationality ?? null,
      adults: b.adults ?? null,
      children: b.children ?? null,
      checkInDate: b.checkInDate,
      checkOutDate: b.checkOutDate,
      roomNumber: b.roomNumber,
    });
    return reply.code(201).send({ guest: guestView(guest) });
  });

  app.patch<{ Params: IdParams; Body: GuestPatchBody }>(
    `${API}/guests/:id`,
    { ...staffOnly, schema: { ...hidden, params: IdParams, body: refined(GuestPatchBody, guestFields) } },
    async (req) => {
      const s = session(req);
      const { guest, changes } = await updateReceptionistGuest(rosterDeps, s.hotel.id, staffActor(s), req.params.id, req.body);
      return { guest: guestView(guest), changes };
    },
  );

  app.post<{ Params: IdParams }>(`${API}/guests/:id/checkout`, { ...staffOnly, schema: { ...hidden, params: IdParams } }, async (req) => {
    const s = session(req);
    const body = req.body as { confirmPmsGuest?: unknown } | undefined;
    const { guest } = await checkOutGuestByStaff(rosterDeps, s.hotel.id, staffActor(s), req.params.id, body?.confirmPmsGuest === true);
    return { guest: guestView(guest) };
  });

  app.get<{ Querystring: ActivityQuery }>(`${API}/activity`, { ...staffOnly, schema: { ...hidden, querystring: ActivityQuery } }, async (req) => {
    const q = req.query;
    const limit = q.limit ? Number(q.limit) : 50;
    const rows = await listActivity(db, session(req).hotel.id, {
      actorType: q.actorType,
      action: q.action,
      guest: q.guest?.trim() || undefined,
      before: parseCursor(q.before),
      limit,
    });
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

  app.get(`${API}/events`, { ...staffOnly, schema: hidden }, async (req, reply: FastifyReply) => {
    // HEAD (which Fastify answers for every GET route) gets the headers, not a stream.
    if (req.method === 'HEAD') return reply.type('text/event-stream; charset=utf-8').send();
    const headers: Record<string, string> = { ...SECURITY_HEADERS };
    const hsts = reply.getHeader('strict-transport-security');
    if (typeof hsts === 'string') headers['strict-transport-security'] = hsts;
    const s = session(req);
    deps.streams.serve(req, reply, { hotelId: s.hotel.id, sessionId: s.id, userId: s.user.id }, headers);
  });
}

/** For admins: key pairs, the request log, and a guest's personal data (export, erase). */
function registerConsoleRoutes({ app, deps, db, adminOnly, hidden }: RouteContext): void {
  app.get(`${API}/keys`, { ...adminOnly, schema: hidden }, async (req) => {
    const pairs = await listKeyPairs(db, session(req).hotel.id);
    return {
      keys: pairs.map((p) => ({
        keyId: p.pairId,
        createdAt: p.createdAt,
        revokedAt: p.revokedAt,
        lastUsedAt:
          [p.liveLastUsedAt, p.testLastUsedAt]
            .filter((x): x is string => x !== null)
            .sort()
            .pop() ?? null,
      })),
    };
  });

  app.post(`${API}/keys`, { ...adminOnly, schema: hidden }, async (req, reply) => {
    const pair = await issueKeyPair(db, session(req).hotel.slug);
    return reply.code(201).send({ keyId: pair.keyId, live: pair.live, test: pair.test });
  });

  app.post<{ Params: { keyId: string } }>(`${API}/keys/:keyId/revoke`, { ...adminOnly, schema: hidden }, async (req) => {
    const s = session(req);
    const pairs = await listKeyPairs(db, s.hotel.id);
    if (!pairs.some((p) => p.pairId === req.params.keyId)) throw new ApiError('RECORD_NOT_FOUND', { message: 'No key pair with this id in your hotel.' });
    await revokeKeyPair(db, req.params.keyId, new Date().toISOString(), s.hotel.id);
    return { keyId: req.params.keyId, revoked: true };
  });

  app.get<{ Querystring: RequestsQuery }>(
    `${API}/requests`,
    { ...adminOnly, schema: { ...hidden, querystring: refined(RequestsQuery, existingTimes) } },
    async (req) => {
      const q = req.query;
      const limit = q.limit ? Number(q.limit) : 50;
      const rows = await listHotelRequests(db, session(req).hotel, {
        status: q.status,
        ...(q.endpoint ? ENDPOINT_PATHS[q.endpoint] : {}),
        mode: q.mode,
        since: q.since ? new Date(q.since).toISOString() : undefined,
        until: q.until ? new Date(q.until).toISOString() : undefined,
        before: parseCursor(q.before),
        limit,
      });
      return { requests: rows, next: nextCursor(rows, limit) };
    },
  );

  app.get<{ Params: IdParams }>(`${API}/requests/:id`, { ...adminOnly, schema: { ...hidden, params: IdParams } }, async (req) => {
    const row = await findHotelRequest(db, session(req).hotel, req.params.id);
    if (!row) throw new ApiError('RECORD_NOT_FOUND', { message: 'No request with this id in your hotel.' });
    return { request: row };
  });

  registerPrivacyRoutes(app, { db, requestLog: deps.requestLog }, adminOnly, API);
}

/** Staff users (admins). */
function registerStaffRoutes({ app, deps, db, adminOnly, hidden }: RouteContext): void {
  const userView = (u: staff.StaffUser) => ({ id: u.id, email: u.email, role: u.role, createdAt: u.createdAt, deactivatedAt: u.deactivatedAt });

  app.get(`${API}/users`, { ...adminOnly, schema: hidden }, async (req) => ({ users: (await staff.listUsers(db, session(req).hotel.id)).map(userView) }));

  app.post<{ Body: UserBody }>(`${API}/users`, { ...adminOnly, schema: { ...hidden, body: UserBody } }, async (req, reply) => {
    const user = await addStaffUser(db, session(req).hotel.id, req.body);
    return reply.code(201).send({ user: userView(user) });
  });

  app.post<{ Params: IdParams }>(`${API}/users/:id/deactivate`, { ...adminOnly, schema: { ...hidden, params: IdParams } }, async (req) => {
    const s = session(req);
    const user = await deactivateStaffUser(db, s.hotel.id, req.params.id, s.user.id);
    deps.streams.endUser(user.id);
    return { user: userView(user) };
  });
}
