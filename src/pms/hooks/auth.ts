import type { FastifyInstance } from 'fastify';
import type { Db } from '../../db/database.js';
import { ApiError } from '../../errors.js';
import { allowedFrom } from '../../keys/restrictions.js';
import { authenticate } from '../auth.js';

/** The methods a read-only pair may use: GET /guests (and its HEAD). */
const READS = new Set(['GET', 'HEAD']);

/**
 * Every route of `scope` answers only to an API key of the slug's hotel
 * (docs/pms-interface.md, "Keys and authentication"), used from one of its pair's
 * networks (403 KEY_NETWORK_REFUSED: the client's address as TRUST_PROXY defines it) and,
 * for a read-only pair, only to read (403 KEY_READ_ONLY). A refused key counts against
 * the per-IP limit; a key refused by its pair's rules is logged as that key's request. A
 * test key's requests get `req_test_…` ids (docs/pms-interface.md, "Answers").
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
    if (!allowedFrom(auth.restrictions.networks, req.ip)) {
      await scope.limitByIp(req, reply);
      throw new ApiError('KEY_NETWORK_REFUSED');
    }
    if (auth.restrictions.readOnly && !READS.has(req.method)) throw new ApiError('KEY_READ_ONLY');
  });
}
