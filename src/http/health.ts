import type { FastifyInstance } from 'fastify';
import { pingDatabase, storageErrorKind, type Db } from '../db/database.js';
import type { Metrics } from './metrics.js';
import { ApiError } from '../errors.js';
import { withFallbacks } from './fallbacks.js';
import { noStore } from './no-store.js';
import { packageVersion } from '../package-info.js';

/**
 * README.md, "Probes": unauthenticated probes on the HTTPS port for load balancers and
 * orchestrators. Not rate-limited, not written to the request log.
 * - GET /healthz: 200 while the process runs, with the running version (which instance runs what, during a rollout).
 * - GET /readyz: 200 when the database answers, else 503 SERVICE_UNAVAILABLE.
 */
export async function probes(app: FastifyInstance, { db, metrics }: { db: Db; metrics?: Metrics }): Promise<void> {
  app.addHook('onSend', noStore);
  await withFallbacks(app, async (routes) => probeRoutes(routes, db, metrics), { notFound: false });
}

function probeRoutes(app: FastifyInstance, db: Db, metrics?: Metrics): void {
  const probe = { schema: { hide: true } };
  const alive = { status: 'ok', version: packageVersion() };
  app.get('/healthz', probe, async () => alive);
  app.get('/readyz', probe, async () => {
    try {
      await pingDatabase(db);
    } catch (err) {
      metrics?.databaseError(storageErrorKind(err) ?? 'unavailable');
      throw new ApiError('SERVICE_UNAVAILABLE', { message: 'The database does not answer; this instance is not ready.', headers: { 'retry-after': '5' } });
    }
    return { status: 'ok' };
  });
}
