import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { runTransaction, uniqueViolation, type Db } from '../db/database.js';
import { hotelUsage } from '../db/repositories/hotel-usage.repository.js';
import { findHotelBySlug, hotelsAfter, insertHotel, updateHotel, type Hotel } from '../db/repositories/hotel.repository.js';
import { ApiError, type ErrorCode } from '../errors.js';
import { idempotencyHooks } from '../pms/idempotency.js';
import { errorResponses } from '../pms/route-options.js';
import {
  decodeCursor,
  DEFAULT_PAGE,
  encodeCursor,
  HotelAnswer,
  HotelListAnswer,
  HotelListQuery,
  HotelPatchInput,
  HotelWithUsageAnswer,
  type HotelListQuery as HotelListQueryType,
  NewHotelInput,
  SlugParams,
} from './schemas.js';

// docs/admin-api.md, "Hotels": an operator's hotels, created, listed, read with their
// usage and changed. The same rules as `innsync hotel create` (domain/accounts.ts), as a
// 422 per field.

/** What every route may answer, besides its own errors. */
const COMMON: ErrorCode[] = ['UNAUTHORIZED', 'HTTPS_REQUIRED', 'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];
const WRITES: ErrorCode[] = ['INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'VALIDATION_ERROR'];

const hotelView = (h: Hotel) => ({ slug: h.slug, name: h.name, timeZone: h.timeZone, active: true, createdAt: h.createdAt });

async function hotelOr404(db: Db, slug: string): Promise<Hotel> {
  const hotel = await findHotelBySlug(db, slug);
  if (!hotel) throw new ApiError('UNKNOWN_HOTEL');
  return hotel;
}

/** POST /hotels: the hotel and the Idempotency-Key's record in one transaction (docs/pms-interface.md, "Idempotency"). */
async function createHotelAnswer(db: Db, req: FastifyRequest, body: NewHotelInput, reply: FastifyReply) {
  const { slug, name, timeZone = 'UTC' } = body;
  const answer = (hotel: Hotel) => ({ status: 'ok' as const, requestId: req.id, hotel: hotelView(hotel) });
  const hooks = idempotencyHooks(req, answer, 201);
  try {
    const hotel = await runTransaction(db, async (trx) => {
      await hooks.begin(trx);
      if (await findHotelBySlug(trx, slug)) throw new ApiError('SLUG_TAKEN');
      const created = await insertHotel(trx, slug, name.trim(), new Date().toISOString(), timeZone);
      await hooks.end(trx, created);
      return created;
    });
    return reply.code(201).send(answer(hotel));
  } catch (err) {
    // A hotel of this slug committed by another request in the meantime.
    if (uniqueViolation(err) === 'other') throw new ApiError('SLUG_TAKEN');
    throw err;
  }
}

/** One page of hotels by slug, after the cursor's; `nextCursor` null on the last page (one more row is read to know). */
async function hotelPage(db: Db, query: HotelListQueryType) {
  const limit = query.limit === undefined ? DEFAULT_PAGE : Number(query.limit);
  const rows = await hotelsAfter(db, query.cursor === undefined ? null : decodeCursor(query.cursor), limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { hotels: page.map(hotelView), nextCursor: rows.length > limit && last ? encodeCursor(last.slug) : null };
}

/** PATCH /hotels/{slug}: the name (trimmed) and time zone, each kept when absent. */
async function changeHotel(db: Db, slug: string, body: HotelPatchInput) {
  const hotel = await hotelOr404(db, slug);
  const changes = { name: body.name?.trim(), timeZone: body.timeZone };
  await updateHotel(db, hotel.id, changes);
  return hotelView({ ...hotel, name: changes.name ?? hotel.name, timeZone: changes.timeZone ?? hotel.timeZone });
}

/** The write routes: POST /hotels (registered where Idempotency-Key is required). */
export const hotelCreateRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (api, { db }) => {
  api.post(
    '/hotels',
    {
      schema: {
        summary: 'Create a hotel',
        description: "A new hotel with no staff, keys or guests. Idempotency-Key required; the slug is the hotel's name in every URL and never changes.",
        headers: {
          type: 'object',
          properties: { 'idempotency-key': { type: 'string', description: 'Required: 1-255 characters. Scope: this operator token; lifetime 24 h.' } },
        },
        body: NewHotelInput,
        response: {
          201: HotelAnswer,
          ...errorResponses([
            ...COMMON,
            ...WRITES,
            'IDEMPOTENCY_KEY_REQUIRED',
            'IDEMPOTENCY_KEY_INVALID',
            'IDEMPOTENCY_KEY_IN_USE',
            'IDEMPOTENCY_KEY_REUSED',
            'SLUG_TAKEN',
          ]),
        },
      },
    },
    (req, reply) => createHotelAnswer(db, req, req.body, reply),
  );
};

/** The other routes: list, read with usage, change. */
export const hotelRoutes: FastifyPluginAsyncTypebox<{ db: Db }> = async (api, { db }) => {
  api.get(
    '/hotels',
    {
      schema: {
        summary: 'List hotels',
        description: 'Every hotel, by slug, a page at a time: send `nextCursor` as `cursor` for the next page.',
        querystring: HotelListQuery,
        response: { 200: HotelListAnswer, ...errorResponses([...COMMON, 'VALIDATION_ERROR']) },
      },
    },
    async (req) => ({ status: 'ok' as const, requestId: req.id, ...(await hotelPage(db, req.query)) }),
  );

  api.get(
    '/hotels/:slug',
    {
      schema: {
        summary: 'Read a hotel and its usage',
        description:
          'The hotel and a summary of its use: guests in house, its PMS requests of the last 24 hours, key pairs, staff accounts and webhook endpoints.',
        params: SlugParams,
        response: { 200: HotelWithUsageAnswer, ...errorResponses([...COMMON, 'UNKNOWN_HOTEL']) },
      },
    },
    async (req) => {
      const hotel = await hotelOr404(db, req.params.slug);
      return { status: 'ok' as const, requestId: req.id, hotel: { ...hotelView(hotel), usage: await hotelUsage(db, hotel.id, Date.now()) } };
    },
  );

  api.patch(
    '/hotels/:slug',
    {
      schema: {
        summary: 'Change a hotel',
        description: 'Its name or time zone (the hotel\'s "today" on the board); an absent member keeps its value.',
        params: SlugParams,
        body: HotelPatchInput,
        response: { 200: HotelAnswer, ...errorResponses([...COMMON, ...WRITES, 'UNKNOWN_HOTEL']) },
      },
    },
    async (req) => ({ status: 'ok' as const, requestId: req.id, hotel: await changeHotel(db, req.params.slug, req.body) }),
  );
};
