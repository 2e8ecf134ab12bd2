import { EMAIL_ADDRESS } from '../domain/accounts.js';
import { ROOM_NUMBER_PATTERN } from '../domain/guest-schema.js';
import { COUNTRY_CODES, LANGUAGE_CODES } from '../domain/iso-codes.js';
import type { ErrorCode } from '../errors.js';
import { curlCommand, errorExample, OPERATION_EXAMPLES, type Example } from './examples.js';

// What the OpenAPI document says beyond the route schemas, so that generic tools agree
// with what the service enforces: operation ids and links between operations, the
// Idempotency-Key rule, every response header, and the assigned language and country
// codes, the e-mail rule and the trimmed room number written out (the service checks them
// as formats and after the schema), and examples of every request and answer (examples.ts).

type Json = Record<string, unknown>;

const OPERATIONS: Record<string, string> = {
  'post /api/pms/v1/{slug}/guests/checkin': 'checkInGuest',
  'post /api/pms/v1/{slug}/guests/update': 'updateGuest',
  'post /api/pms/v1/{slug}/guests/checkout': 'checkOutGuest',
  'post /api/pms/v1/{slug}/guests/sync': 'syncGuests',
  'get /api/pms/v1/{slug}/guests': 'listGuests',
};

const integer = { type: 'integer' };
const RATE_LIMIT_HEADERS: Json = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the window of this endpoint and key (or client address).', schema: integer },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: integer },
  'X-RateLimit-Reset': { description: 'When the window ends, in Unix seconds.', schema: integer },
  'RateLimit-Policy': { description: 'The limit as an IETF RateLimit-Policy field: `"<name>";q=<limit>;w=<seconds>`.', schema: { type: 'string' } },
  RateLimit: { description: 'The window now as an IETF RateLimit field: `"<name>";r=<remaining>;t=<seconds to reset>`.', schema: { type: 'string' } },
};
const RETRY_AFTER: Json = { 'Retry-After': { description: 'Seconds to wait before sending again.', schema: integer } };
const REPLAYED: Json = {
  'Idempotent-Replayed': { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
};

/** An e-mail address as the service's check accepts it (ajv-formats' full rule; letters of either case). */
const EMAIL_PATTERN = EMAIL_ADDRESS.source.replaceAll('a-z', 'a-zA-Z');

const LANGUAGES = [...LANGUAGE_CODES].sort();
const COUNTRIES = [...COUNTRY_CODES].sort();

/** Writes out, in every schema of the document, the rules the service checks as formats. */
function spellOutFormats(node: unknown): void {
  if (Array.isArray(node)) {
    for (const n of node) spellOutFormats(n);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const s = node as Json;
  const nullable = Array.isArray(s.type) && s.type.includes('null');
  const codes = s.format === 'iso-639-1' ? LANGUAGES : s.format === 'iso-3166-1-alpha-2' ? COUNTRIES : null;
  if (codes) s.enum = nullable ? [...codes, null] : codes;
  if (s.format === 'email') s.pattern = EMAIL_PATTERN;
  const room = (s.properties as Json | undefined)?.roomNumber as Json | undefined;
  // A guest's room number (the list's filter and the answers' echo have no pattern: other rules).
  if (typeof room?.pattern === 'string') room.pattern = ROOM_NUMBER_PATTERN;
  for (const v of Object.values(s)) spellOutFormats(v);
}

/** The codes a response documents (its description lists them: "ROOM_OCCUPIED, GUEST_ALREADY_CHECKED_IN"). */
const codesOf = (response: Json): ErrorCode[] => (/^[A-Z_]+(, [A-Z_]+)*$/.test(String(response.description)) ? (String(response.description).split(', ') as ErrorCode[]) : []);

/** The operation's examples, request and answers, every code of every response with one, and its curl command. */
function addExamples(id: string, op: Json): void {
  const examples = OPERATION_EXAMPLES[id];
  if (!examples) return;
  const body = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as Json | undefined;
  if (body) body.examples = examples.requests;
  for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
    const content = response.content as Record<string, Json> | undefined;
    const media = content?.['application/json'];
    if (!content || !media) continue;
    const own: Record<string, Example> = examples.responses[status] ?? {};
    const covered = new Set(Object.values(own).map((e) => (e.value as { code?: string }).code));
    const others = codesOf(response).filter((c) => !covered.has(c));
    content['application/json'] = { ...media, examples: { ...own, ...Object.fromEntries(others.map((c) => [c, errorExample(c)])) } };
  }
  op['x-codeSamples'] = [{ lang: 'Shell', label: 'curl', source: curlCommand(examples) }];
}

function addLinks(operations: Record<string, Json>): void {
  const byGuest = (target: string, description: string) => ({ operationId: target, requestBody: '$response.body#/pmsGuestId', description });
  const checkIn = operations.checkInGuest?.responses as Record<string, Json> | undefined;
  if (checkIn?.['200'])
    checkIn['200'].links = {
      updateGuest: byGuest('updateGuest', 'Update or move the guest just checked in: send its `pmsGuestId` with the fields that changed.'),
      checkOutGuest: byGuest('checkOutGuest', 'Check the guest out: send its `pmsGuestId`.'),
    };
  const update = operations.updateGuest?.responses as Record<string, Json> | undefined;
  if (update?.['200']) update['200'].links = { checkOutGuest: byGuest('checkOutGuest', 'Check the guest out.') };
  const sync = operations.syncGuests?.responses as Record<string, Json> | undefined;
  if (sync?.['200']) sync['200'].links = { listGuests: { operationId: 'listGuests', description: 'The roster after the sync.' } };
}

/** `transformObject` of @fastify/swagger: the document as served and committed. */
export function completeOpenApi({ openapiObject }: { openapiObject: Json }): Json {
  const operations: Record<string, Json> = {};
  for (const [path, item] of Object.entries((openapiObject.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      const id = OPERATIONS[`${method} ${path}`];
      if (!id) continue;
      op.operationId = id;
      operations[id] = op;
      addExamples(id, op);
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in === 'header' && p.name === 'idempotency-key') {
          p.required = true;
          p.schema = { type: 'string', minLength: 1, maxLength: 257, description: '1-255 characters; quoted ("…", a structured-field string) it may be 257 with the quotes.' };
        }
      }
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        response.headers = {
          ...RATE_LIMIT_HEADERS,
          ...(status === '429' || status === '503' ? RETRY_AFTER : {}),
          ...(method === 'post' && status === '200' ? REPLAYED : {}),
        };
      }
    }
  }
  addLinks(operations);
  spellOutFormats(openapiObject.paths);
  return openapiObject;
}
