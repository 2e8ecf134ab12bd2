import { createHash } from 'node:crypto';
import path from 'node:path';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { withFallbacks } from '../http/fallbacks.js';
import { noStore } from '../http/no-store.js';
import { accountRoutes } from './routes/account.js';
import { consoleRoutes } from './routes/console.js';
import { accountFactorRoutes, factorAdminRoutes } from './routes/factors.js';
import { openRoutes, sessionRoutes } from './routes/login.js';
import { accountPasskeyRoutes, passkeyLoginRoutes } from './routes/passkeys.js';
import { privacyRoutes } from './routes/privacy.js';
import { activityRoutes, rosterRoutes } from './routes/roster.js';
import { roomAdminRoutes, roomRoutes } from './routes/rooms.js';
import { staffRoutes } from './routes/staff.js';
import { webhookRoutes } from './routes/webhooks.js';
import { trailRoutes } from './routes/trail.js';
import { guestRulesModule } from './guest-rules.js';
import { packageRoot } from '../package-info.js';
import { checkCsrf, checkStage, loadSession } from './session.js';
import type { Db } from '../db/database.js';
import type { DashboardDeps } from './deps.js';
import type { StaffSession } from '../db/repositories/staff.repository.js';
import { insertSecurityEvent } from '../db/repositories/security.repository.js';
import { clientOf } from '../http/ip-limit.js';

/** docs/dashboard.md: only this origin, no inline script or style, never framed. */
const CONTENT_SECURITY_POLICY = {
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
};

/** `public/dashboard` of this package. */
function dashboardPublicDir(): string {
  return path.join(packageRoot(), 'public', 'dashboard');
}

/**
 * The staff dashboard, registered under /dashboard: its page and assets from the
 * package itself (no CDN), and its JSON API under /dashboard/api, guarded by cookie
 * sessions (docs/dashboard.md). Every answer carries the security headers and none is
 * stored by a cache.
 */
export async function dashboard(app: FastifyInstance, opts: DashboardDeps): Promise<void> {
  const { db, bus, rateLimits, setupLink, streams, metrics, requestLog, webhooks, maxKeyPairsPerHotel } = opts;
  const deps: DashboardDeps = { db, bus, rateLimits, setupLink, streams, metrics, requestLog, webhooks, maxKeyPairsPerHotel };
  // HSTS comes from the transport, for every answer of the service.
  await app.register(helmet, {
    contentSecurityPolicy: CONTENT_SECURITY_POLICY,
    hsts: false,
    referrerPolicy: { policy: 'same-origin' },
    xFrameOptions: { action: 'deny' },
  });
  // The page and assets say no-cache themselves (revalidated with their ETag).
  app.addHook('onSend', noStore);
  await withFallbacks(
    app,
    async (known) => {
      await known.register(pages);
      await known.register(async (scope) => api(scope, deps), { prefix: '/api' });
    },
    { notFound: true },
  );
}

/**
 * GET /dashboard/ (the app's page) and /dashboard/assets/…, revalidated on every load
 * (no-cache + ETag) so a new release is picked up at once. Over plain HTTP a browser is
 * sent to them on HTTPS; the JSON API under /dashboard/api is refused there, like any API.
 */
async function pages(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, httpsRedirect: true };
  });
  const root = dashboardPublicDir();
  // The files present at start, each its own route: no path from a URL reaches the file system.
  await app.register(fastifyStatic, {
    root: path.join(root, 'assets'),
    prefix: '/assets/',
    wildcard: false,
    index: false,
    cacheControl: false,
    schemaHide: true,
    setHeaders: (reply: { header(name: string, value: string): unknown }) => reply.header('cache-control', 'no-cache'),
  });
  app.get('/', { prefixTrailingSlash: 'slash', schema: { hide: true } }, (_req, reply) => reply.sendFile('index.html', root));
  // The guest forms' field rules, from the schema the server validates them with (no copy in the browser).
  const rules = guestRulesModule();
  const rulesTag = `"${createHash('sha256').update(rules).digest('base64url').slice(0, 22)}"`;
  app.get('/assets/guest-rules.js', { schema: { hide: true } }, async (req, reply) => {
    void reply.header('cache-control', 'no-cache').header('etag', rulesTag);
    if (req.headers['if-none-match'] === rulesTag) return reply.code(304).send();
    return reply.type('text/javascript; charset=utf-8').send(rules);
  });
  // Relative URLs of the page resolve under /dashboard/ only.
  app.get('/', { prefixTrailingSlash: 'no-slash', schema: { hide: true } }, async (_req, reply) => reply.redirect('/dashboard/'));
}

/** Every API route but login and setup: a live session; CSRF on writes; admins only where `admin`. */
function requireStaff(app: FastifyInstance, db: Db, role: 'any' | 'admin'): void {
  app.addHook('onRequest', async (req: FastifyRequest) => {
    const s = await loadSession(db, req);
    if (!s) throw new ApiError('NOT_AUTHENTICATED');
    req.staff = s;
    await refusingCsrf(db, req, s);
    checkStage(req, s);
    if (role === 'admin' && s.user.role !== 'admin') throw new ApiError('FORBIDDEN');
  });
}

/**
 * checkCsrf, and a refusal of a signed-in session kept as a security event of its account
 * (docs/dashboard.md, "Access trail"): whoever sent it, the cookie was that account's.
 */
async function refusingCsrf(db: Db, req: FastifyRequest, s: StaffSession): Promise<void> {
  try {
    checkCsrf(req, s);
  } catch (err) {
    const detail = { method: req.method, route: req.routeOptions.url ?? null };
    await insertSecurityEvent(db, {
      hotelId: s.hotel.id,
      kind: 'csrf.refused',
      actor: { type: 'anonymous' },
      subjectUserId: s.user.id,
      clientIp: clientOf(req),
      detail,
    });
    throw err;
  }
}

async function api(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  await app.register(openRoutes, deps);
  await app.register(passkeyLoginRoutes, deps);
  await app.register(async (signedIn) => {
    requireStaff(signedIn, deps.db, 'any');
    await signedIn.register(sessionRoutes, deps);
    await signedIn.register(accountPasskeyRoutes, deps);
    await signedIn.register(accountRoutes, deps);
    await signedIn.register(accountFactorRoutes, deps);
    await signedIn.register(rosterRoutes, deps);
    await signedIn.register(activityRoutes, deps);
    await signedIn.register(roomRoutes, deps);
  });
  await app.register(async (admin) => {
    requireStaff(admin, deps.db, 'admin');
    await admin.register(consoleRoutes, deps);
    await admin.register(staffRoutes, deps);
    await admin.register(factorAdminRoutes, deps);
    await admin.register(privacyRoutes, deps);
    await admin.register(webhookRoutes, deps);
    await admin.register(roomAdminRoutes, deps);
    await admin.register(trailRoutes, deps);
  });
}
