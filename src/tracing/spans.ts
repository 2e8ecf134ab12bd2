import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type SpanContext } from '@opentelemetry/api';

// docs/architecture.md, "Traces": the service's own spans, through the OpenTelemetry API
// alone. Without the SDK (tracing/start.ts, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT
// is set) every helper here runs its work directly: no span, no context, no hook.

let on = false;
let shutdown: () => Promise<void> = async () => undefined;

/** Called once by tracing/start.ts after the SDK is registered; `stop` flushes and ends it. */
export function markTracingOn(stop: () => Promise<void>): void {
  on = true;
  shutdown = stop;
}

export function tracingOn(): boolean {
  return on;
}

/** Sends the spans still waiting (the server's close calls it last). */
export function flushTracing(): Promise<void> {
  return shutdown();
}

export function tracer() {
  return trace.getTracer('innsync');
}

/**
 * Runs `work` inside a span (when tracing is on) and ends it; a thrown error marks it
 * failed by the error's class and code only (a message may quote data).
 */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | null) => Promise<T>,
  options: { kind?: SpanKind; parent?: Context; onlyInside?: boolean } = {},
): Promise<T> {
  if (!on) return work(null);
  const parent = options.parent ?? context.active();
  // A part of something traced (onlyInside): without a span around it, no span of its own.
  if (options.onlyInside && !trace.getSpan(parent)) return work(null);
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (err) {
    markFailed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

function markFailed(span: Span, err: unknown): void {
  const code = (err as { code?: unknown } | null)?.code;
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
  if (typeof code === 'string') span.setAttribute('error.type', code);
}

/**
 * Which trace wrote each recent outgoing event: its webhook deliveries, sent later by the
 * sender, join that trace when this instance sends them. Bounded; an event sent by
 * another instance or after a restart starts a trace of its own.
 */
const eventTraces = new Map<string, SpanContext>();
const REMEMBERED_EVENTS = 10_000;

export function rememberEventTrace(eventIds: string[]): void {
  if (!on) return;
  const current = trace.getSpanContext(context.active());
  if (!current) return;
  for (const id of eventIds) {
    if (eventTraces.size >= REMEMBERED_EVENTS) eventTraces.delete(eventTraces.keys().next().value as string);
    eventTraces.set(id, current);
  }
}

/** The context a delivery of `eventId` starts its span in. */
export function eventTraceContext(eventId: string): Context {
  const sc = eventTraces.get(eventId);
  return sc ? trace.setSpanContext(ROOT_CONTEXT, sc) : ROOT_CONTEXT;
}

/** Runs `work` outside the caller's trace (background work that a request only woke). */
export function detached<T>(work: () => T): T {
  return on ? context.with(ROOT_CONTEXT, work) : work();
}

/** pino's mixin while tracing is on: each log line written inside a span names it. */
export function traceLogFields(): Record<string, string> {
  const sc = trace.getSpanContext(context.active());
  return sc ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}
