// Writes docs/openapi.json from the route schemas: `npm run openapi` (or the file given as
// the first argument).
import fs from 'node:fs';
import { generateOpenApiDocument } from '../src/docs/openapi-document.js';

const target = process.argv[2] ? new URL(process.argv[2], `file://${process.cwd()}/`) : new URL('../../docs/openapi.json', import.meta.url);
fs.writeFileSync(target, await generateOpenApiDocument());
process.stdout.write(`wrote ${target.pathname}\n`);
