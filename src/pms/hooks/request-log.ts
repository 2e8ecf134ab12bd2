import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LoggedRequest } from '../../db/repositories/request-log.repository.js';
import { answerUndelivered } from '../../http/transport.js';
import { loggedBodies } from '../request-log-body.js';
import { capOptional, capTarget, SLUG_CAP_BYTES } from '../request-log-fields.js';
import type { RequestLogWriter } from '../request-log.js';

/**
 * docs/pms-interface.md, "Request and activity logs": every request of `scope` (refused
 * ones, unknown paths and methods included) gets a request-log row, written off the
 * request path; the service's shutdown waits for the rows of requests still being
 * answered. Requests no valid key sent get theirs within a budget per address
 * (pms/request-log-budget.ts, README.md "Logs").
 */
export function logRequests(scope: FastifyInstance, requestLog: RequestLogWriter): void {
  scope.addHook('onRequest', async (req) => requestLog.begin(req));
  scope.addHook('onSend', async (req, _reply, payload) => {
    if (typeof payload === 'string') req.responsePayload = payload;
    return payload;
  });
  scope.addHook('onResponse', async (req, reply) => {
    try {
      // An HTTP/2 stream the client reset before its answer was sent whole "finishes" too
      // (Node's compatibility layer ends the response when its stream closes): no answer
      // reached the client, so it has no row, like an HTTP/1.1 request whose client went away.
      if (!answerUndelivered(req.raw)) requestLog.write(loggedRequest(req, reply), req.auth?.keyId);
    } finally {
      requestLog.end(req);
    }
  });
  // A request whose client went away has no answer and no row; it is not waited for.
  scope.onEndedEarly((req) => requestLog.end(req));
}

/** A request header as sent (repeated headers joined), or null when absent. */
function givenHeader(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

function loggedRequest(req: FastifyRequest, reply: FastifyReply): LoggedRequest {
  // The client's own text beside the bodies is capped too, with its full size (pms/request-log-fields.ts).
  const target = capTarget(req.url);
  const userAgent = capOptional(req.headers['user-agent'] ?? null);
  // The idempotency key when given (docs/pms-interface.md, "Request and activity logs"),
  // also when the request was refused before the key was read (401, 429) or the key
  // itself was refused (400).
  const idempotencyKey = capOptional(req.idempotencyKey ?? givenHeader(req.headers['idempotency-key']));
  return {
    id: req.id,
    at: new Date().toISOString(),
    hotelId: req.auth?.hotelId ?? null,
    slug: capOptional((req.params as { slug?: string } | undefined)?.slug ?? null, SLUG_CAP_BYTES).text,
    keyId: req.auth?.pairId ?? null,
    mode: req.auth?.mode ?? null,
    method: req.method,
    path: target.text,
    pathBytes: target.bytes,
    statusCode: reply.statusCode,
    // Capped, GET /guests as its count and ids, none when unattributed (pms/request-log-body.ts).
    ...loggedBodies({
      attributed: Boolean(req.auth),
      route: req.routeOptions.url,
      statusCode: reply.statusCode,
      requestBody: req.rawBody,
      requestSha256: req.rawBodySha256,
      contentLength: req.headers['content-length'],
      responseBody: req.responsePayload,
      responseDigest: req.responseDigest,
    }),
    clientIp: req.clientIp ?? req.ip ?? 'unknown',
    userAgent: userAgent.text,
    userAgentBytes: userAgent.bytes,
    durationMs: reply.elapsedTime,
    idempotencyKey: idempotencyKey.text,
    idempotencyKeyBytes: idempotencyKey.bytes,
    endpoint: req.routeOptions.config?.endpoint ?? null,
    replayed: reply.getHeader('idempotent-replayed') === 'true',
    replayOf: req.replayOf,
  };
}
