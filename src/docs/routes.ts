import type { FastifyInstance } from 'fastify';
import { ERRORS, FIELD_ERRORS } from '../errors.js';
import { renderDocsPage } from './render.js';
import { EVENTS_DOC } from './events-doc.js';
import { withFallbacks } from '../http/fallbacks.js';
import { noStore } from '../http/no-store.js';

function errorTable(): string {
  const rows = Object.entries(ERRORS).map(([code, e]) => `| ${e.status} | \`${code}\` | ${e.meaning} |`);
  const fieldRows = Object.entries(FIELD_ERRORS).map(([code, m]) => `| \`${code}\` | ${m} |`);
  return [
    '## Errors',
    '',
    'Every error body: `status: "error"`, `code`, `message`, `requestId`; field errors add `errors: [{ field, code, message }]` listing every problem found. Each endpoint below shows an example body of every error it can answer.',
    '',
    '### Error codes',
    '',
    '| HTTP | code | meaning |',
    '|---|---|---|',
    ...rows,
    '',
    '### Codes inside `errors[]`',
    '',
    '| code | meaning |',
    '|---|---|',
    ...fieldRows,
  ].join('\n');
}

const RULES = `## Rules

- **Authentication**: \`Authorization: Bearer <key>\`. Keys come in pairs: \`pms_live_…\` and \`pms_test_…\`. The key must belong to the hotel of \`{slug}\`; every failure is the same 401 \`UNAUTHORIZED\`. A key issued now is the prefix, 32 base62 characters and a 6-character base62 CRC32 of all before it (secret scanners: \`pms_(live|test)_[0-9A-Za-z]{38}\`); one whose checksum is wrong is refused before the key is looked up.
- **Key pair limits**: a pair may be limited to networks (CIDR blocks; from elsewhere 403 \`KEY_NETWORK_REFUSED\`, the client's address as the server's \`TRUST_PROXY\` defines it), to a last day (after it, 401 \`UNAUTHORIZED\` as a revoked key) and to reading (only \`GET /guests\`; writes 403 \`KEY_READ_ONLY\`). The hotel's admin sets them on the dashboard's Keys page.
- **Test keys** validate exactly as live keys, then answer as if the roster were empty and the request succeeded: nothing is stored, identifiers are fake (\`test_…\`), \`requestId\` is \`req_test_…\`, check-in and checkout carry \`_sandbox: true\`, GET returns an empty list, a test checkout answers \`roomNumber: null\`. A test key's \`guestId\` for one \`pmsGuestId\` is the same in every answer of that key (derived from the key and the \`pmsGuestId\`, not stored), so your calls can be correlated; another key gives another.
- **Test-key trigger values** (below) make a test key answer the errors live can answer, so a PMS can rehearse its error handling before it goes live.
- **Idempotency**: every POST needs \`Idempotency-Key\` (1-255 characters, bare or quoted). The scope is the API key (live and test keys are separate scopes); the lifetime 24 h. Only 2xx responses are stored; a repeat with the same body within 24 h returns the stored response with \`_idempotent: true\` and the header \`Idempotent-Replayed: true\`. A replay counts against the rate limit like any request (it still costs the service a read) and has a request-log row of its own, marked as the replay of the original request. The same key with another endpoint or body is 422 \`IDEMPOTENCY_KEY_REUSED\`. A request with the key of one still in progress waits for it, then gets its stored response, or is processed if the first failed; if the first is still running after 5 s, the second gets 409 \`IDEMPOTENCY_KEY_IN_USE\`. The key's record is written in the same transaction as the change, so a request that fails or is cut off is either applied with its stored response or not at all: a 4xx or 5xx answer does not consume the key, and a retry is always safe.
- **Rate limits** per API key and endpoint, fixed windows: check-in, update, checkout 60/min; GET /guests 30/min; sync 10/hour. Requests without a valid key count against 100/min per client IP. Every response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\`, \`X-RateLimit-Reset\` (Unix seconds) and the IETF \`RateLimit-Policy\` / \`RateLimit\` fields; 429 adds \`Retry-After\` and \`retryAfter\`.
- **Fields**: absent keeps the stored value, \`null\` clears an optional field; unknown members are refused (422). Bodies: at most 1 MiB (16 MiB for sync); \`Content-Type: application/json\`; nested at most 64 levels deep (else 400 \`INVALID_JSON\`), no object with more than 64 members, no list with more than 20,000 items, at most 400,000 values in all (else 422, refused as the body arrives). A 422 lists at most 20 field errors; \`errorsNotShown\` counts the rest found: the check stops after 50 problems, and its message then says so.
- **Order of checks**: HTTPS → route and method → authentication (key, networks, read-only) → rate limit → idempotency header → content type, size, JSON → field validation → state.
- **503 and retries**: \`SERVICE_UNAVAILABLE\` (with \`Retry-After\`) means storage was unreachable or too busy. Send the same request again with the same \`Idempotency-Key\`: you get the stored response if it was applied after all, else it is processed now.
- **Transport**: HTTPS only (TLS 1.2 or newer). Plain HTTP is answered 403 \`HTTPS_REQUIRED\`.
- **Logging**: every request is logged for 90 days with payload, status, response, client IP, User-Agent, duration and idempotency key; the key is recorded by its id, never in plain text. A body over 64 KiB is kept as its first 64 KiB, a marker, its full size and SHA-256; a \`GET /guests\` answer as its \`count\` and guest ids; a request without a valid key keeps its metadata and body sizes only.
- **Personal data**: guests checked out longer ago than the operator's retention period (90 days by default) are anonymised; a hotel can erase or export one guest's data on request (GDPR Art. 17 and 15).

### Test keys: trigger values

Values beginning with the reserved prefix \`innsync-test-\` make a test key answer exactly what a live key gets in that situation: the same status, body members and headers, with made-up data and \`req_test_…\` ids; nothing is stored. They are checked after validation (a body with field errors gets its 422 first). With a live key they are ordinary values, and any other value beginning with the prefix is answered as usual.

| send with the test key | on | answer |
|---|---|---|
| \`roomNumber: "innsync-test-409"\` | check-in, update (a move), a sync list item | 409 \`ROOM_OCCUPIED\` with \`currentGuest\` \`{ pmsGuestId: "innsync-test-holder", lastName: "Sandbox", checkInDate: <today> }\` (sync: \`pmsGuestId: null\`, a guest entered by hotel staff, as live's sync conflict) |
| \`pmsGuestId: "innsync-test-409"\` | check-in | 409 \`GUEST_ALREADY_CHECKED_IN\` with the key's \`guestId\` of that pmsGuestId and the \`roomNumber\` sent |
| \`pmsGuestId: "innsync-test-404"\` | update, checkout | 404 \`GUEST_NOT_FOUND\` |
| \`pmsGuestId: "innsync-test-429"\` | every POST (in a sync: any list item), \`GET /guests?pmsGuestId=innsync-test-429\` | 429 \`RATE_LIMITED\` with \`retryAfter\`, \`Retry-After\` and the endpoint's rate-limit headers showing none remaining (the request counts once against the key's limit, as any request does; the limit itself is not used up) |
| \`pmsGuestId: "innsync-test-503"\` | every POST (in a sync: any list item), \`GET /guests?pmsGuestId=innsync-test-503\` | 503 \`SERVICE_UNAVAILABLE\` with \`Retry-After: 5\` and, as live's when storage does not answer, no rate-limit headers |

The 409s and the 404 come after the \`Idempotency-Key\` is claimed, as live's do: the key is not consumed, and one already used for another body is 422 \`IDEMPOTENCY_KEY_REUSED\` first; 429 and 503 come before it. A check-in with both 409 triggers gets \`GUEST_ALREADY_CHECKED_IN\`. The go-live checklist's "Handling a 409" can be shown with the test key this way: after the 409, send the request corrected (another room, another guest).`;

export const OPENAPI_INFO = {
  openapi: '3.1.0',
  info: {
    title: 'innsync PMS API',
    version: '1.0.0',
    description: `The interface through which a hotel property management system (PMS) reports in-house guests: check-in, update (including room moves), check-out and full-list sync.\n\n${RULES}\n\n${EVENTS_DOC}\n\n${errorTable()}`,
  },
  servers: [{ url: '/', description: 'This service' }],
  tags: [{ name: 'guests', description: 'Guest events and the current roster' }],
  components: {
    securitySchemes: {
      bearer: { type: 'http' as const, scheme: 'bearer', description: 'pms_live_… or pms_test_… key' },
    },
  },
};

/**
 * The API reference (GET /api/pms/v1/openapi.json and the page /api/pms/v1/docs) and the
 * service's front door (/ leads staff to the dashboard). Open to anyone within the per-IP
 * limit; not PMS calls, so not written to the request log (README.md, Personal data).
 */
export async function docs(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', noStore);
  await withFallbacks(app, async (routes) => docsRoutes(routes, () => app.swagger() as unknown as Record<string, unknown>), { notFound: false });
}

function docsRoutes(app: FastifyInstance, document: () => Record<string, unknown>): void {
  let page: string | null = null;
  const reference = { schema: { hide: true }, onRequest: app.limitByIp };
  app.get('/api/pms/v1/openapi.json', reference, async (_req, reply) => {
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(document(), null, 2));
  });
  app.get('/api/pms/v1/docs', reference, async (_req, reply) => {
    page ??= renderDocsPage(document());
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(page);
  });
  // Staff arrive at the dashboard (over plain HTTP too: sent to HTTPS first); the API
  // reference is linked from it and lives at /api/pms/v1/docs, refused over plain HTTP like the API.
  app.get('/', { schema: { hide: true }, config: { httpsRedirect: true } }, async (_req, reply) => reply.redirect('/dashboard/'));
}
