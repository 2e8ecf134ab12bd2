import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { authenticate } from '../auth.js';

/**
 * Every route of `scope` answers only to an API key of the slug's hotel
 * (docs/pms-interface.md, "Keys and authentication"); a refused request counts against
 * the per-IP limit. A test key's requests get `req_test_…` ids (docs/pms-interface.md,
 * "Answers").
 */
export function requireApiKey(scope: FastifyInstance, db: Db): void {
  scope.addHook('onRequest', async (req, reply) => {
    const slug = (req.params as { slug?: string }).slug ?? '';
    const auth = await authenticate(db, req.headers.authorization, slug);
    if (!auth) {
      await scope.limitByIp(req, reply);
      throw new ApiError('UNAUTHORIZED');
    }
    req.auth = auth;
    if (auth.mode === 'test') req.id = req.id.replace(/^req_/, 'req_test_');
  });
}
