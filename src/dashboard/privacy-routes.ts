import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import type { RequestLogWriter } from '../pms/request-log.js';
import type { StaffSession } from '../db/repositories/staff.repository.js';
import { ApiError } from '../errors.js';
import { eraseGuest, exportGuest } from '../privacy/guest-privacy.js';
import { IdParams } from './schemas.js';

/**
 * A guest's personal data, for admins (issue 10): "Export personal data" (Art. 15) as a
 * JSON download, and "Erase personal data" (Art. 17) of a checked-out guest.
 */
export function registerPrivacyRoutes(
  app: FastifyInstance,
  { db, requestLog }: { db: Db; requestLog?: Pick<RequestLogWriter, 'flush'> },
  adminOnly: { config: { dashboard: boolean }; onRequest: (req: FastifyRequest) => Promise<void> },
  api: string,
): void {
  const hotelOf = (req: FastifyRequest): StaffSession['hotel'] => {
    if (!req.staff) throw new ApiError('NOT_AUTHENTICATED');
    return req.staff.hotel;
  };

  app.get<{ Params: IdParams }>(`${api}/guests/:id/export`, { ...adminOnly, schema: { hide: true, params: IdParams } }, async (req, reply) => {
    const doc = await exportGuest(db, hotelOf(req), { guestId: req.params.id });
    req.log.info({ userId: req.staff?.user.id, guestId: req.params.id }, 'guest data exported');
    return reply
      .header('content-disposition', `attachment; filename="guest-${req.params.id.replace(/[^A-Za-z0-9_-]/g, '')}.json"`)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(doc, null, 2));
  });

  app.post<{ Params: IdParams }>(`${api}/guests/:id/erase`, { ...adminOnly, schema: { hide: true, params: IdParams } }, async (req) => {
    const user = req.staff?.user.id ?? null;
    // Rows of requests answered in the last moments are still queued: written first, so the erasure finds them.
    await requestLog?.flush(true);
    const result = await eraseGuest(db, hotelOf(req), { guestId: req.params.id }, { type: 'staff', id: user, mode: null });
    req.log.info({ userId: user, guestId: req.params.id, erased: result.erased }, 'guest personal data erased');
    return result;
  });
}
