import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody } from '../../src/http/error-reply.js';
import { errorResponses } from '../../src/pms/route-options.js';
import { alreadyCheckedInError, roomOccupiedError } from '../../src/roster/roster-service.js';
import type { ApiError } from '../../src/errors.js';

// docs/pms-interface.md, "Errors": a 409's members are sent as the error holds them. The PMS
// routes declare their error answers with the API reference's schema, and Fastify serializes
// every answer with the schema of its status: a member the schema types too narrowly would be
// changed on the way out (a null holder sent as {}, a null id as "").

describe('a 409 whose holder is gone, through the error schema the PMS routes declare', () => {
  const app = Fastify();
  const errors: Record<string, ApiError> = {
    room: roomOccupiedError('A listed room was taken by a concurrent request; nothing was changed. Retry the sync.', null),
    stay: alreadyCheckedInError('P-1', null),
  };
  beforeAll(async () => {
    app.get<{ Params: { which: string } }>(
      '/:which',
      { schema: { response: errorResponses(['ROOM_OCCUPIED', 'GUEST_ALREADY_CHECKED_IN']) } },
      async (req, reply) => {
        const err = errors[req.params.which] as ApiError;
        return reply.code(err.status).send(errorBody(err, 'req_test'));
      },
    );
    await app.ready();
  });
  afterAll(() => app.close());

  it('ROOM_OCCUPIED with no nameable holder answers currentGuest: null', async () => {
    const res = await app.inject({ method: 'GET', url: '/room' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'ROOM_OCCUPIED', currentGuest: null });
  });

  it('GUEST_ALREADY_CHECKED_IN after the stay ended answers guestId and roomNumber null', async () => {
    const res = await app.inject({ method: 'GET', url: '/stay' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'GUEST_ALREADY_CHECKED_IN', guestId: null, roomNumber: null });
  });
});
