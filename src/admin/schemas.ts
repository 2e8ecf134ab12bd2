import { Type, type Static } from '@sinclair/typebox';
import { HOTEL_NAME_MAX, SLUG_PATTERN, SLUG_RULE, TIME_ZONE_RULE } from '../domain/accounts.js';
import { fieldError, type FieldError } from '../errors.js';
import { refined } from '../http/validation.js';

// The provisioning API's requests and answers (docs/admin-api.md, "Hotels"). Unknown
// members and query parameters are refused (422), as in the PMS API.

// A pattern's description is its rule in a 422's message ("must be …").
const Slug = Type.String({ pattern: SLUG_PATTERN, description: SLUG_RULE });
// At least one character that is not white space: the name is stored trimmed.
const HotelName = Type.String({
  minLength: 1,
  maxLength: HOTEL_NAME_MAX,
  pattern: '\\S',
  description: `1 to ${HOTEL_NAME_MAX} characters, not only white space (stored trimmed)`,
});
const TimeZone = Type.String({ format: 'time-zone', description: `The hotel's day: ${TIME_ZONE_RULE}.` });

export const NewHotelInput = Type.Object(
  { slug: Slug, name: HotelName, timeZone: Type.Optional({ ...TimeZone, description: `${TimeZone.description} Default UTC.` }) },
  { additionalProperties: false, title: 'NewHotel' },
);
export type NewHotelInput = Static<typeof NewHotelInput>;

export const HotelPatchInput = Type.Object(
  { name: Type.Optional(HotelName), timeZone: Type.Optional(TimeZone) },
  { additionalProperties: false, title: 'HotelChanges' },
);
export type HotelPatchInput = Static<typeof HotelPatchInput>;

/** A page holds 1 to MAX_PAGE hotels. */
const MAX_PAGE = 200;
export const DEFAULT_PAGE = 50;

const HotelListQueryShape = Type.Object(
  {
    limit: Type.Optional(
      Type.String({ pattern: '^[0-9]{1,4}$', description: `a whole number of hotels per page, from 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE})` }),
    ),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The `nextCursor` of the page before.' })),
  },
  { additionalProperties: false },
);
export type HotelListQuery = Static<typeof HotelListQueryShape>;

/** A cursor is the last slug of the page before, base64url-encoded. */
export const encodeCursor = (slug: string): string => Buffer.from(slug, 'utf8').toString('base64url');

/** The slug a cursor names, or null when it names none. */
export function decodeCursor(cursor: string): string | null {
  const slug = Buffer.from(cursor, 'base64url').toString('utf8');
  return new RegExp(SLUG_PATTERN).test(slug) && encodeCursor(slug) === cursor ? slug : null;
}

function pageRules(q: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const limit = typeof q.limit === 'string' ? Number(q.limit) : DEFAULT_PAGE;
  if (limit < 1 || limit > MAX_PAGE) errors.push(fieldError('limit', 'OUT_OF_RANGE', `limit must be from 1 to ${MAX_PAGE}.`));
  if (typeof q.cursor === 'string' && decodeCursor(q.cursor) === null)
    errors.push(fieldError('cursor', 'INVALID_VALUE', 'cursor must be the nextCursor of an earlier page: start again without a cursor.'));
  return errors;
}

export const HotelListQuery = refined(HotelListQueryShape, pageRules);

export const SlugParams = Type.Object({ slug: Type.String({ description: 'The hotel slug.' }) });

const requestId = Type.String({ description: 'req_<id>: quote it when reporting a problem.' });
const ok = Type.Literal('ok');

const Hotel = Type.Object(
  {
    slug: Type.String(),
    name: Type.String(),
    timeZone: Type.String(),
    active: Type.Boolean({ description: 'Always true in this version.' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Hotel' },
);

const Usage = Type.Object(
  {
    guestsInHouse: Type.Integer({ description: 'Active stays now, of both sources.' }),
    pmsRequests24h: Type.Object(
      { '2xx': Type.Integer(), '4xx': Type.Integer(), '5xx': Type.Integer() },
      { description: "Requests of the hotel's API keys in the last 24 hours, by status class." },
    ),
    lastPmsRequestAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: "The last request of the hotel's API keys; null: none kept.",
    }),
    activeKeyPairs: Type.Integer({ description: 'Key pairs not revoked.' }),
    activeStaffAccounts: Type.Integer({ description: 'Staff accounts not deactivated.' }),
    webhookEndpoints: Type.Object({ enabled: Type.Integer(), disabled: Type.Integer() }),
  },
  { title: 'HotelUsage' },
);

export const HotelAnswer = Type.Object({
  status: ok,
  requestId,
  hotel: Hotel,
  _idempotent: Type.Optional(Type.Boolean({ description: 'true only on a replay.' })),
});
export const HotelWithUsageAnswer = Type.Object({ status: ok, requestId, hotel: Type.Object({ ...Hotel.properties, usage: Usage }) });
export const HotelListAnswer = Type.Object({
  status: ok,
  requestId,
  hotels: Type.Array(Hotel),
  nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Send it as `cursor` for the next page; null on the last page.' }),
});
