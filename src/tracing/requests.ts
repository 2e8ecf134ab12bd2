import type http from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { routeForLog } from '../http/error-reply.js';
import { tracer, tracingOn } from './spans.js';

// docs/architecture.md, "Traces": one SERVER span per request, started where the listener
// hands the request to Fastify (HTTP/2 and HTTP/1.1 alike), named and described by the
// route pattern only: never the path's values (slug, guest ids) or the query.

const serverSpans = new WeakMap<object, Span>();

type Listener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** The listener's handler, each request in its span (a W3C traceparent from the client is its parent); the handler itself when tracing is off. */
export function tracedHandler<H>(handler: H): H {
  if (!tracingOn()) return handler;
  const serve = handler as unknown as Listener;
  const traced: Listener = (req, res) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer().startSpan(
      req.method ?? 'HTTP',
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'network.protocol.version': req.httpVersion } },
      parent,
    );
    serverSpans.set(req, span);
    res.once('close', () => {
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (!res.writableFinished) span.setAttribute('innsync.ended_early', true);
      span.end();
    });
    context.with(trace.setSpan(parent, span), () => serve(req, res));
  };
  return traced as unknown as H;
}

/** Names each request's span by its route and adds what the request turned out to be: hotel, key mode, replay. */
export function traceRequests(app: FastifyInstance): void {
  if (!tracingOn()) return;
  app.addHook('onRequest', async (req) => {
    const span = serverSpans.get(req.raw);
    if (!span) return;
    const route = routeForLog(req);
    span.updateName(`${req.method} ${route}`);
    span.setAttributes({ 'http.route': route, 'url.path': route, 'url.scheme': req.protocol });
  });
  app.addHook('onSend', async (req, _reply, payload) => {
    const span = serverSpans.get(req.raw);
    if (span && req.auth) {
      span.setAttributes({ 'innsync.hotel': req.auth.hotelSlug, 'innsync.mode': req.auth.mode, 'innsync.idempotent_replay': req.replayOf !== null });
    }
    return payload;
  });
}
