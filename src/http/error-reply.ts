import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isStorageBusy, isStorageUnavailable, isTransientConflict, storageErrorKind } from '../db/database.js';
import { ApiError, type ErrorCode } from '../errors.js';
import type { Metrics } from './metrics.js';
import type { SecurityLog } from './security-log.js';

/** Maps anything thrown to the registry's error; unknown failures become 500 (logged, never shown). */
export function toApiError(err: FastifyError | Error, req: FastifyRequest, metrics: Metrics | undefined): ApiError {
  if (err instanceof ApiError) return err;
  const code = (err as FastifyError).code;
  const status = (err as FastifyError).statusCode;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) return new ApiError('PAYLOAD_TOO_LARGE');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) return new ApiError('UNSUPPORTED_MEDIA_TYPE');
  if (err instanceof SyntaxError || code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') {
    return new ApiError('INVALID_JSON');
  }
  // PostgreSQL refuses a NUL character in text (22021) where no schema caught it first.
  if ((err as { code?: unknown }).code === '22021') {
    return new ApiError('VALIDATION_ERROR', { message: 'Text must not contain the NUL character (\\u0000).' });
  }
  const storageError = storageErrorKind(err);
  if (storageError) metrics?.databaseError(storageError);
  if (isStorageUnavailable(err)) {
    req.log.error({ err }, 'storage unavailable');
    return new ApiError('SERVICE_UNAVAILABLE', { headers: { 'retry-after': '5' } });
  }
  // A transaction that kept losing races (retried already), or storage too busy to
  // finish in time (a lock held past the lock timeout): rolled back; a retry will do.
  if (isTransientConflict(err) || isStorageBusy(err)) {
    req.log.warn({ err }, 'storage busy');
    return new ApiError('SERVICE_UNAVAILABLE', {
      message: 'The database was too busy to complete this request; nothing was changed. Send it again (with the same Idempotency-Key, if it had one).',
      headers: { 'retry-after': '1' },
    });
  }
  if (typeof status === 'number' && status >= 400 && status < 500) {
    req.log.warn({ err }, 'client error without a registry code');
    return new ApiError(status === 404 ? 'NOT_FOUND' : status === 405 ? 'METHOD_NOT_ALLOWED' : 'INVALID_JSON');
  }
  req.log.error({ err }, 'unhandled error');
  return new ApiError('INTERNAL_ERROR');
}

/** Refusals an operator watches for (guessing, forging, flooding): each gets its own log line with the client's address. */
const SECURITY_EVENTS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'UNAUTHORIZED',
  'KEY_NETWORK_REFUSED',
  'LOGIN_FAILED',
  'SECOND_FACTOR_INVALID',
  'PASSWORD_INCORRECT',
  'PAIRING_CODE_INVALID',
  'CSRF_REJECTED',
  'FORBIDDEN',
  'RATE_LIMITED',
  'SETUP_LINK_INVALID',
  'PASSKEY_INVALID',
]);

/**
 * What the log says a request was for: its route pattern (`/api/pms/v1/:slug/guests`),
 * never the URL as sent, whose path and query the client chooses (e-mails, setup tokens).
 */
export function routeForLog(req: FastifyRequest): string {
  return req.routeOptions.url ?? 'unmatched';
}

/** The error envelope every answer of the service uses (docs/pms-interface.md, "Errors"), with the error's headers. */
export function sendError(err: ApiError, req: FastifyRequest, reply: FastifyReply, security: SecurityLog): FastifyReply {
  if (SECURITY_EVENTS.has(err.code) && !err.rehearsal) {
    security.note(req.log, err.code, req.clientIp ?? req.ip, { method: req.method, route: routeForLog(req) }, `security: ${err.code} refused`);
  }
  for (const [k, v] of Object.entries(err.headers)) void (v === null ? reply.removeHeader(k) : reply.header(k, v));
  return reply.code(err.status).type('application/json; charset=utf-8').send(errorBody(err, req.id));
}

/** The body of an error answer (docs/pms-interface.md, "Errors": `status`, `code`, `message`, `requestId`, and the error's own members). */
export function errorBody(err: ApiError, requestId: string) {
  return { status: 'error' as const, code: err.code, message: err.message, requestId, ...err.extra };
}
