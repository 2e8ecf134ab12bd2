import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listRooms } from '../../db/repositories/room.repository.js';
import { MAX_ROOMS_PER_HOTEL } from '../../domain/room-list.js';
import { addRoom, adoptRooms, editRoom, importRooms, removeRoom, roomsToAdopt } from '../../rooms/room-list.js';
import type { DashboardDeps } from '../deps.js';
import {
  AdoptedRoomsAnswer,
  IdParams,
  RoomAdoptBody,
  RoomAnswer,
  RoomBody,
  RoomImportAnswer,
  RoomImportBody,
  RoomListAnswer,
  RoomPatchBody,
  RoomRemovedAnswer,
  UnlistedRoomsAnswer,
} from '../schemas.js';
import { sessionOf } from '../session.js';

const hidden = { hide: true };

/** The room list as the board reads it: every signed-in user and front-desk displays. */
export const roomRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, { db }) => {
  app.get('/rooms', { config: { display: true }, schema: { ...hidden, response: { 200: RoomListAnswer } } }, async (req) => ({
    rooms: await listRooms(db, sessionOf(req).hotel.id),
    max: MAX_ROOMS_PER_HOTEL,
  }));
};

/** The Rooms page, for admins: import, add, edit, remove, and adopt the rooms the PMS has used. */
export const roomAdminRoutes: FastifyPluginAsyncTypebox<DashboardDeps> = async (app, { db, bus }) => {
  const deps = { db, bus };

  app.post('/rooms/import', { schema: { ...hidden, body: RoomImportBody, response: { 200: RoomImportAnswer } } }, async (req) => {
    const s = sessionOf(req);
    const result = await importRooms(deps, s.hotel.id, req.body.csv);
    req.log.info({ userId: s.user.id, ...result }, 'room list imported');
    return result;
  });

  app.post('/rooms', { schema: { ...hidden, body: RoomBody, response: { 201: RoomAnswer } } }, async (req, reply) => {
    const room = await addRoom(deps, sessionOf(req).hotel.id, req.body);
    return reply.code(201).send({ room });
  });

  app.patch('/rooms/:id', { schema: { ...hidden, params: IdParams, body: RoomPatchBody, response: { 200: RoomAnswer } } }, async (req) => ({
    room: await editRoom(deps, sessionOf(req).hotel.id, req.params.id, req.body),
  }));

  app.post('/rooms/:id/remove', { schema: { ...hidden, params: IdParams, response: { 200: RoomRemovedAnswer } } }, async (req) => {
    await removeRoom(deps, sessionOf(req).hotel.id, req.params.id);
    return { id: req.params.id, removed: true as const };
  });

  // Rooms the roster has held that the list lacks: listed first, then added as shown.
  app.get('/rooms/unlisted', { schema: { ...hidden, response: { 200: UnlistedRoomsAnswer } } }, async (req) => ({
    roomNumbers: await roomsToAdopt(db, sessionOf(req).hotel.id),
    max: MAX_ROOMS_PER_HOTEL,
  }));

  app.post('/rooms/adopt', { schema: { ...hidden, body: RoomAdoptBody, response: { 200: AdoptedRoomsAnswer } } }, async (req) =>
    adoptRooms(deps, sessionOf(req).hotel.id, req.body.roomNumbers),
  );
};
