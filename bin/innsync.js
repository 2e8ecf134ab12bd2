#!/usr/bin/env node
// The `innsync` command. `npm ci` builds dist/ (the prepare script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('innsync: not built yet; run `npm run build` (npm ci does it for you)\n');
  process.exit(1);
}
// docs/architecture.md, "Traces": the tracing SDK starts before any module of the service
// loads, and only for `serve` with OTEL_EXPORTER_OTLP_ENDPOINT set; otherwise it is never loaded.
if (process.argv[2] === 'serve' && process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  await import(new URL('../dist/src/tracing/start.js', import.meta.url).href);
}
const { main } = await import(entry.href);
await main(process.argv);
