import { ERRORS, type ErrorCode } from '../errors.js';
import { ErrorResponse, SlugParams } from './schemas.js';

// What the PMS API's routes (routes/) declare alike: their body limits, and the parts of
// their schema option, the OpenAPI operation, that they share (tag, slug, Idempotency-Key
// header, bearer key, error answers).

/** docs/pms-interface.md, "Request bodies": 1 MiB for events, 16 MiB for sync. */
export const EVENT_BODY_LIMIT = 1024 * 1024;
export const SYNC_BODY_LIMIT = 16 * 1024 * 1024;

/** The error answers a route documents, grouped by HTTP status (the API reference lists their codes). */
export function errorResponses(codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(ERRORS[c].status, [...(byStatus.get(ERRORS[c].status) ?? []), c]);
  const out: Record<number, unknown> = {};
  for (const [status, list] of byStatus) out[status] = { ...ErrorResponse, description: list.join(', ') };
  return out;
}

export const COMMON_ERRORS: ErrorCode[] = ['UNAUTHORIZED', 'KEY_NETWORK_REFUSED', 'HTTPS_REQUIRED', 'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE'];

/** What any write may answer, whatever its own errors. */
const POST_ERRORS: ErrorCode[] = [
  ...COMMON_ERRORS,
  'KEY_READ_ONLY',
  'IDEMPOTENCY_KEY_REQUIRED',
  'IDEMPOTENCY_KEY_INVALID',
  'INVALID_JSON',
  'IDEMPOTENCY_KEY_IN_USE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'VALIDATION_ERROR',
  'IDEMPOTENCY_KEY_REUSED',
];

const idempotencyHeader = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      description: 'Required on POST: 1-255 characters, bare or as a quoted structured-field string. Scope: this API key; lifetime 24 h.',
    },
  },
};

/** The OpenAPI parts every write shares: its tag, the slug, the Idempotency-Key header, the bearer key and its answers. */
export function writeSchema<B, R>(o: { summary: string; description: string; body: B; response: R; errors: ErrorCode[] }) {
  return {
    tags: ['guests'],
    summary: o.summary,
    description: o.description,
    params: SlugParams,
    headers: idempotencyHeader,
    body: o.body,
    response: { 200: o.response, ...errorResponses([...POST_ERRORS, ...o.errors]) },
    security: [{ bearer: [] }],
  };
}
