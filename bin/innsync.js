#!/usr/bin/env node
// The `innsync` command. `npm ci` builds dist/ (the prepare script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('innsync: not built yet; run `npm run build` (npm ci does it for you)\n');
  process.exit(1);
}
const { main } = await import(entry.href);
await main(process.argv);
