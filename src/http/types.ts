import type { ApiKeyIdentity } from '../db/repositories/api-key.repository.js';
import type { IdempotencyScope } from '../pms/idempotency.js';
import type { PmsEndpoint } from '../pms/rate-limit.js';
import type { StaffSession } from '../db/repositories/staff.repository.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key that authenticated this request; null before or without one. */
    auth: ApiKeyIdentity | null;
    idempotencyKey: string | null;
    /** Set on a POST with a valid key once authenticated: what its claim and record hold. */
    idempotency: IdempotencyScope | null;
    rawBody: string | null;
    responsePayload: string | null;
    /** req.ip as read in onRequest, for the request log (the socket may be gone by then). */
    clientIp: string | null;
    /** The staff session of a dashboard request; null before or without one. */
    staff: StaffSession | null;
  }
  interface FastifyContextConfig {
    /** Set on PMS API routes: the endpoint whose rate limit applies. */
    endpoint?: PmsEndpoint;
    /** Set on the staff dashboard's routes: cookie sessions, no PMS hooks. */
    dashboard?: boolean;
    /** Set on /healthz and /readyz: no rate limit, no request log. */
    probe?: boolean;
    /** Set on the API reference (docs page, openapi.json): not a PMS call, not in the request log. */
    docs?: boolean;
    /** Set on dashboard routes open without a session (login, setup): the per-IP limit applies. */
    ipLimited?: boolean;
  }
}
