import type { ApiKeyIdentity } from '../db/repositories/api-key.repository.js';
import type { IdempotencyScope } from '../pms/idempotency.js';
import type { PmsEndpoint } from '../rate-limit/limits.js';
import type { StaffSession } from '../db/repositories/staff.repository.js';
import type { IpLimit } from './ip-limit.js';
import type { OperatorToken } from '../db/repositories/operator.repository.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The per-IP limit of requests no API key answers for (http/ip-limit.ts), as an onRequest hook. */
    limitByIp: IpLimit;
    /** Calls `listener` for each request whose client went away before its answer (no onResponse follows). */
    onEndedEarly(listener: (req: FastifyRequest) => void): void;
  }
  interface FastifyRequest {
    /** The API key that authenticated this request; null before or without one. */
    auth: ApiKeyIdentity | null;
    idempotencyKey: string | null;
    /** Set on a POST with a valid key once authenticated: what its claim and record hold. */
    idempotency: IdempotencyScope | null;
    rawBody: string | null;
    /** The SHA-256 (hex) of a long JSON body's bytes, taken as they arrived (null: not taken; http/json-body.ts). */
    rawBodySha256: string | null;
    responsePayload: string | null;
    /** The size in bytes and SHA-256 (hex) of an answer sent in pieces, taken piece by piece as sent (null: not taken; pms/idempotency.ts sendAnswerText). */
    responseDigest: { bytes: number; sha256: string } | null;
    /** Answered from the idempotency store: the id of the request whose stored answer this is. */
    replayOf: string | null;
    /** req.ip as read in onRequest, for the request log (the socket may be gone by then). */
    clientIp: string | null;
    /** The staff session of a dashboard request; null before or without one. */
    staff: StaffSession | null;
    /** The operator token of a provisioning API request (docs/admin-api.md); null before or without one. */
    operator: OperatorToken | null;
  }
  interface FastifyContextConfig {
    /** The PMS API endpoint a route serves: its rate limit (docs/pms-interface.md, "Rate limits"). */
    endpoint?: PmsEndpoint;
    /**
     * A page for people: over plain HTTP its GET and HEAD are redirected to HTTPS instead
     * of refused (docs/pms-interface.md, "Transport": the dashboard may
     * redirect GET; API paths never).
     */
    httpsRedirect?: boolean;
    /** A dashboard route a front-desk display session may use (dashboard/session.ts checkDisplay). */
    display?: boolean;
    /** The sign-in stages, besides a full session, that may use the route (dashboard/session.ts checkStage). */
    stages?: ReadonlyArray<'second_factor' | 'enrol'>;
  }
}
