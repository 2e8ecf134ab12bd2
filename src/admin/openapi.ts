import type { FastifyInstance, RouteOptions } from 'fastify';
import { ERRORS, type ErrorCode } from '../errors.js';
import { errorExample } from '../docs/examples.js';
import { OPERATOR_TOKEN_LIMIT } from '../rate-limit/limits.js';
import { OPERATOR_TOKEN_REFUSED } from './hooks.js';

// The provisioning API's own OpenAPI document (docs/admin-api.md, "API reference"),
// written from its route schemas: kept apart from the PMS API's (its routes carry no tag,
// so the PMS document leaves them out).

type Json = Record<string, unknown>;

const HOTEL = { slug: 'seaside-inn', name: 'Seaside Inn', timeZone: 'Europe/Lisbon', active: true, createdAt: '2026-11-27T09:14:03.512Z' };
const REQUEST_ID = 'req_4k9x2m7q1w8e3r5t6y0u';

/** The request and 2xx examples of each operation, by `method path`. */
const EXAMPLES: Record<string, { request?: unknown; answer: unknown }> = {
  'post /api/admin/v1/hotels': {
    request: { slug: 'seaside-inn', name: 'Seaside Inn', timeZone: 'Europe/Lisbon' },
    answer: { status: 'ok', requestId: REQUEST_ID, hotel: HOTEL },
  },
  'get /api/admin/v1/hotels': { answer: { status: 'ok', requestId: REQUEST_ID, hotels: [HOTEL], nextCursor: 'c2Vhc2lkZS1pbm4' } },
  'get /api/admin/v1/hotels/{slug}': {
    answer: {
      status: 'ok',
      requestId: REQUEST_ID,
      hotel: {
        ...HOTEL,
        usage: {
          guestsInHouse: 42,
          pmsRequests24h: { '2xx': 1180, '4xx': 7, '5xx': 0 },
          lastPmsRequestAt: '2026-11-27T21:02:44.118Z',
          activeKeyPairs: 1,
          activeStaffAccounts: 6,
          webhookEndpoints: { enabled: 1, disabled: 0 },
        },
      },
    },
  },
  'patch /api/admin/v1/hotels/{slug}': {
    request: { name: 'Seaside Inn & Spa' },
    answer: { status: 'ok', requestId: REQUEST_ID, hotel: { ...HOTEL, name: 'Seaside Inn & Spa' } },
  },
};

const DESCRIPTION = `Provisioning for operators (a PMS vendor running innsync for many hotels); never for hotels.

- **Authentication**: \`Authorization: Bearer op_…\`, a token from \`innsync operator token create\`. A missing, unknown, revoked or malformed token, or a hotel's PMS key, is 401 \`UNAUTHORIZED\`, counted against the per-IP limit of 100 requests a minute. An operator token opens nothing else: not the PMS API, not the dashboard.
- **Rate limit**: ${OPERATOR_TOKEN_LIMIT.limit} requests a minute per token, with the PMS API's headers (\`X-RateLimit-*\`, \`RateLimit-Policy\`, \`RateLimit\`; 429 adds \`Retry-After\`).
- **Idempotency**: every POST needs \`Idempotency-Key\`, with the PMS API's rules; its scope is the operator token.
- **Answers**: the PMS API's envelope: \`status\` and \`requestId\` on every answer, errors with \`code\` and \`message\`; unknown members are 422 \`VALIDATION_ERROR\`.`;

const pathOf = (url: string): string => url.replace(/:([A-Za-z]+)/g, '{$1}');

/** Query or path parameters from an object schema's members. */
function parameters(where: 'query' | 'path', schema: unknown): Json[] {
  const s = schema as { properties?: Record<string, Json>; required?: string[] } | undefined;
  return Object.entries(s?.properties ?? {}).map(([name, p]) => ({
    name,
    in: where,
    required: where === 'path' || (s?.required ?? []).includes(name),
    schema: p,
    description: p.description,
  }));
}

/** A code's example, as this API words it (its 401 names the operator token). */
function example(code: ErrorCode): Json {
  const e = errorExample(code);
  return code === 'UNAUTHORIZED' ? { ...e, value: { ...(e.value as Json), message: OPERATOR_TOKEN_REFUSED } } : { ...e };
}

/** The codes a response lists in its description ("UNAUTHORIZED, RATE_LIMITED"). */
const codesOf = (description: unknown): ErrorCode[] =>
  String(description)
    .split(', ')
    .filter((c): c is ErrorCode => c in ERRORS);

function responses(schema: Json, examples: { answer: unknown } | undefined): Json {
  const out: Json = {};
  for (const [status, r] of Object.entries((schema.response ?? {}) as Record<string, Json>)) {
    const codes = codesOf(r.description);
    const content = codes.length
      ? { 'application/json': { schema: r, examples: Object.fromEntries(codes.map((c) => [c, example(c)])) } }
      : { 'application/json': { schema: r, example: examples?.answer } };
    out[status] = { description: codes.length ? codes.join(', ') : 'OK', content };
  }
  return out;
}

function operation(route: RouteOptions): [string, string, Json] {
  const method = String(route.method).toLowerCase();
  const path = pathOf(route.url);
  const schema = (route.schema ?? {}) as Json;
  const examples = EXAMPLES[`${method} ${path}`];
  const op: Json = {
    tags: ['hotels'],
    summary: schema.summary,
    description: schema.description,
    security: [{ operatorToken: [] }],
    parameters: [...parameters('path', schema.params), ...parameters('query', schema.querystring)],
    responses: responses(schema, examples),
  };
  if (schema.headers)
    op.parameters = [
      ...(op.parameters as Json[]),
      { name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 } },
    ];
  if (schema.body) op.requestBody = { required: true, content: { 'application/json': { schema: schema.body, example: examples?.request } } };
  return [path, method, op];
}

/** Collects the routes `scope` registers from now on; `document()` is their OpenAPI document. */
export function adminOpenApi(scope: FastifyInstance): { document: () => Json } {
  const routes: RouteOptions[] = [];
  scope.addHook('onRoute', (route) => {
    // A GET's HEAD route, added by Fastify, is not an operation of its own.
    if (route.schema && !route.schema.hide && typeof route.method === 'string' && route.method !== 'HEAD') routes.push(route);
  });
  let doc: Json | null = null;
  const document = (): Json => {
    if (doc) return doc;
    const paths: Record<string, Json> = {};
    for (const [path, method, op] of routes.map(operation)) paths[path] = { ...paths[path], [method]: op };
    doc = {
      openapi: '3.1.0',
      info: { title: 'innsync provisioning API', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: '/', description: 'This service' }],
      tags: [{ name: 'hotels', description: "An operator's hotels" }],
      components: { securitySchemes: { operatorToken: { type: 'http', scheme: 'bearer', description: 'op_… token' } } },
      paths,
    };
    return doc;
  };
  return { document };
}
