import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** `public/dashboard` of this package, from src/ (tests) or dist/src/ (built). */
export function dashboardPublicDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'public', 'dashboard');
    dir = path.dirname(dir);
  }
  throw new Error('package root not found from the dashboard module');
}

/** Every file under `dir`, read once at start: a fixed set, so no path from a URL reaches the file system. */
function loadAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (sub: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(rel);
      else {
        const type = TYPES[path.extname(entry.name)];
        if (!type) continue;
        const body = fs.readFileSync(path.join(dir, rel));
        assets.set(rel, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
      }
    }
  };
  walk('');
  return assets;
}

/** GET /dashboard/ (the app's page) and /dashboard/assets/* from the package itself: no CDN. */
export function registerDashboardAssets(app: FastifyInstance): void {
  const assets = loadAssets(dashboardPublicDir());
  const send = (name: string) => async (req: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
    const asset = assets.get(name);
    if (!asset) throw new ApiError('NOT_FOUND');
    // Revalidated on every load (no-cache + ETag): a new release is picked up at once.
    void reply.header('etag', asset.etag).header('cache-control', 'no-cache');
    if (req.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.type(asset.type).send(asset.body);
  };
  const config = { dashboard: true };
  app.get('/dashboard', { config, schema: { hide: true } }, async (_req, reply) => reply.redirect('/dashboard/'));
  app.get('/dashboard/', { config, schema: { hide: true } }, send('index.html'));
  app.get('/dashboard/assets/*', { config, schema: { hide: true } }, async (req, reply) => {
    const rest = (req.params as { '*': string })['*'];
    return send(`assets/${rest}`)(req, reply);
  });
}
