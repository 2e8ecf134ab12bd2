import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RosterDeps } from '../../roster/roster-service.js';
import { pmsMode } from '../modes.js';
import { GuestListQuery, GuestListResponse, SlugParams } from '../schemas.js';
import { COMMON_ERRORS, errorResponses } from '../route-options.js';

export type PmsRouteDeps = RosterDeps;

/** docs/pms-interface.md, "Guest list": the current roster. */
export const guestListRoutes: FastifyPluginAsyncTypebox<PmsRouteDeps> = async (api, deps) => {
  api.get(
    '/guests',
    {
      config: { endpoint: 'list' },
      schema: {
        tags: ['guests'],
        summary: 'List current guests',
        description:
          'Active guests of both sources, ordered by roomNumber in natural order (2 before 10). Optional filters; an unknown query parameter is 422. Test keys: always an empty list.',
        params: SlugParams,
        querystring: GuestListQuery,
        response: { 200: GuestListResponse, ...errorResponses([...COMMON_ERRORS, 'VALIDATION_ERROR']) },
        security: [{ bearer: [] }],
      },
    },
    (req) => pmsMode(deps, req).list(req.query),
  );
};
