import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { eraseGuest, exportGuest } from '../../privacy/guest-privacy.js';
import type { DashboardDeps } from '../deps.js';
import { ErasureAnswer, GuestExportAnswer, IdParams } from '../schemas.js';
import { sessionOf, staffActor } from '../session.js';
import { accessBy, recordAccess } from '../access-trail.js';

/**
 * A guest's personal data, for admins (README.md, Personal data): "Export personal data" (Art. 15) as a
 * JSON download, and "Erase personal data" (Art. 17) of a checked-out guest.
 */
export const privacyRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, { db, requestLog }) => {
  app.get('/guests/:id/export', { schema: { hide: true, params: IdParams, response: { 200: GuestExportAnswer } } }, async (req, reply) => {
    const s = sessionOf(req);
    const doc = await exportGuest(db, s.hotel, { guestId: req.params.id });
    await recordAccess(db, req, { action: 'guest.exported', guestId: req.params.id });
    req.log.info({ userId: s.user.id, guestId: req.params.id }, 'guest data exported');
    return reply
      .header('content-disposition', `attachment; filename="guest-${req.params.id.replace(/[^A-Za-z0-9_-]/g, '')}.json"`)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(doc, null, 2));
  });

  app.post('/guests/:id/erase', { schema: { hide: true, params: IdParams, response: { 200: ErasureAnswer } } }, async (req) => {
    const s = sessionOf(req);
    // Rows of requests answered in the last moments are still queued: written first, so the erasure finds them.
    await requestLog?.flush(true);
    const result = await eraseGuest(db, s.hotel, { guestId: req.params.id }, staffActor(s), accessBy(req));
    req.log.info({ userId: s.user.id, guestId: req.params.id, erased: result.erased }, 'guest personal data erased');
    return result;
  });
};
