import http from 'node:http';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { ApiError } from '../errors.js';
import { noStore } from './no-store.js';

/** Every method Node's parser accepts but CONNECT (a tunnel, never a route): a known path answers each it does not serve with 405. */
export const ALL_METHODS = http.METHODS.filter((m) => m !== 'CONNECT');

/**
 * Registers `routes` in `scope`, then answers what they do not serve
 * (docs/pms-interface.md, "Order of checks": route and method are checked before
 * authentication and before the body is read): 405 with `Allow` for a path they serve
 * with other methods, and, with `notFound`, 404 for any other path under the scope's
 * prefix. Both are counted against the per-IP limit and pass through the scope's own
 * hooks (the PMS API logs them), not those of `routes`.
 */
export async function withFallbacks(scope: FastifyInstance, routes: FastifyPluginAsync, opts: { notFound: boolean }): Promise<void> {
  const methodsByUrl = new Map<string, Set<string>>();
  let collecting = true;
  scope.addHook('onRoute', (route) => {
    if (!collecting) return;
    const set = methodsByUrl.get(route.url) ?? new Set<string>();
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) set.add(m);
    methodsByUrl.set(route.url, set);
  });
  await scope.register(routes);
  collecting = false;

  await scope.register(async (notAllowed) => {
    notAllowed.addHook('onRequest', scope.limitByIp);
    for (const [url, methods] of methodsByUrl) {
      const allowed = ALL_METHODS.filter((m) => methods.has(m));
      const others = ALL_METHODS.filter((m) => !methods.has(m));
      if (others.length === 0) continue;
      const refuse = () => Promise.reject(new ApiError('METHOD_NOT_ALLOWED', { headers: { allow: allowed.join(', ') } }));
      // Refused in onRequest, before the body is read. The prefix's own path ('/dashboard' and
      // '/dashboard/') are two routes: each is matched exactly.
      const rest = url.slice(scope.prefix.length);
      const path = rest === '' || rest === '/' ? { url: '/', prefixTrailingSlash: rest === '' ? ('no-slash' as const) : ('slash' as const) } : { url: rest };
      notAllowed.route({ method: others, ...path, schema: { hide: true }, onRequest: refuse, handler: refuse });
    }
  });

  if (opts.notFound) await registerNotFound(scope);
}

/**
 * 404 for a path under `scope`'s prefix that no route serves, before its body is read (an
 * unparsable or huge body does not change the answer), counted against the per-IP limit;
 * never kept by a cache (`Cache-Control: no-store`, outside the API's prefix too).
 */
export async function registerNotFound(scope: FastifyInstance): Promise<void> {
  await scope.register(async (unknown) => {
    unknown.addHook('onSend', noStore);
    unknown.addHook('onRequest', async (req, reply) => {
      await scope.limitByIp(req, reply);
      throw new ApiError('NOT_FOUND');
    });
    unknown.setNotFoundHandler(() => Promise.reject(new ApiError('NOT_FOUND')));
  });
}
