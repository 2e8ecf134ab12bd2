import { register } from 'node:module';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { loadTracingSettings, type TracingSettings } from '../config.js';
import { markTracingOn } from './spans.js';

// docs/architecture.md, "Traces": loaded by bin/innsync.js before any module of the
// service, and only when OTEL_EXPORTER_OTLP_ENDPOINT is set. The exporter reads the
// endpoint and protocol, the provider the sampler (OTEL_TRACES_SAMPLER and its
// argument) and the batch processor its OTEL_BSP_* settings from the environment.

// pg is a CommonJS package imported from ES modules: its instrumentation sees that
// import only through the loader hook, registered before the service's modules load
// and limited to pg (every other module loads as it would without tracing).
register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: ['pg'] } });

// (config.js loads no database module: pg is still to be loaded here.)
let settings: TracingSettings;
try {
  settings = loadTracingSettings();
} catch (err) {
  process.stderr.write(`innsync: ${(err as Error).message}\n`);
  process.exit(1);
}
const exporter = settings.protocol === 'http/json' ? new JsonExporter() : new ProtoExporter();
const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
  spanProcessors: [new BatchSpanProcessor(exporter)],
});
provider.register();
registerInstrumentations({
  tracerProvider: provider,
  // Statement text only, as Kysely sends it (values are parameters): never the values.
  instrumentations: [new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false })],
});
markTracingOn(() => provider.shutdown());
