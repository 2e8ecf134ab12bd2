// Writes docs/openapi.json from the route schemas: `npm run openapi`.
import fs from 'node:fs';
import { generateOpenApiDocument } from '../src/docs/openapi-document.js';

const target = new URL('../../docs/openapi.json', import.meta.url);
fs.writeFileSync(target, await generateOpenApiDocument());
process.stdout.write(`wrote ${target.pathname}\n`);
