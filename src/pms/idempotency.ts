import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { isLockTimeout, runTransaction, type Db, type DbOrTrx } from '../db/database.js';
import * as repo from '../db/repositories/idempotency.repository.js';
import { sha256Hex } from '../domain/ids.js';
import { NO_HOOKS, type TransactionHooks } from '../roster/roster-service.js';

/** docs/pms-interface.md, "Idempotency": a key lives 24 hours. */
const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Identifies a request for idempotency (docs/pms-interface.md, "Idempotency"): the key,
 * scoped to one API key, and the fingerprint (method, path, canonical body) its record
 * must match.
 */
export interface IdempotencyScope {
  /** The scope of the key: an API key's id, or an operator token's (docs/admin-api.md). */
  apiKeyId: string;
  key: string;
  fingerprint: string;
  /** The JSON text of the 2xx answer stored on the record, once the change's transaction has stored it. */
  answer?: string;
}

/**
 * Thrown inside a transaction when the key already has a committed response: the
 * transaction rolls back and the route answers with the stored response
 * (docs/pms-interface.md, "Idempotency").
 */
export class StoredResponse extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: string,
  ) {
    super('idempotent replay');
  }
}

/**
 * The key from the header (docs/pms-interface.md, "Idempotency"): bare (`abc`) or a
 * structured-field string (`"abc"`) name the same key; 1 to 255 characters.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) throw new ApiError('IDEMPOTENCY_KEY_REQUIRED');
  const raw = Array.isArray(header) ? header.join(', ') : header;
  let key = raw;
  const quoted = /^"((?:[^"\\]|\\["\\])*)"$/.exec(raw);
  if (quoted) key = (quoted[1] ?? '').replace(/\\(["\\])/g, '$1');
  if (key.length < 1 || key.length > 255) throw new ApiError('IDEMPOTENCY_KEY_INVALID');
  return key;
}

/**
 * JSON with object members sorted, so member order and white space do not matter.
 * A sorted copy written by the native JSON.stringify (twice as fast on a 20,000-guest
 * sync as writing member by member). Copies have no prototype, so a `__proto__` member
 * stays an ordinary member. Deterministic for any parsed JSON body.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortedCopy(value)) ?? 'null';
}

function sortedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedCopy);
  if (value === null || typeof value !== 'object') return value;
  const out = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(value).sort()) out[k] = sortedCopy((value as Record<string, unknown>)[k]);
  return out;
}

/** The fingerprint (docs/pms-interface.md, "Idempotency"): method, path and a hash of the canonical body. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return `${method} ${path} ${sha256Hex(canonicalJson(body))}`;
}

/** List items hashed per turn of the event loop by requestFingerprintInSlices. */
const FINGERPRINT_SLICE = 500;

/**
 * The same fingerprint as requestFingerprint, hashed piece by piece: a list of a body's top
 * level (a sync's guests) is written to the hash FINGERPRINT_SLICE items at a time, the
 * event loop free between, so a 20,000-guest body does not hold every other request for the
 * whole of its canonical JSON (about 120 ms in one block on this project's machines). The
 * bytes hashed are exactly canonicalJson(body)'s.
 */
export async function requestFingerprintInSlices(method: string, path: string, body: unknown): Promise<string> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return requestFingerprint(method, path, body);
  const hash = createHash('sha256');
  const members = body as Record<string, unknown>;
  hash.update('{');
  // The members in the order canonicalJson writes them: its sorted copy's own key order
  // (integer-like names first, as every JavaScript object orders them).
  const order = Object.keys(
    Object.fromEntries(
      Object.keys(members)
        .sort()
        .map((k) => [k, null]),
    ),
  );
  for (const [i, key] of order.entries()) {
    hash.update(`${i === 0 ? '' : ','}${JSON.stringify(key)}:`);
    const value = members[key];
    if (!Array.isArray(value) || value.length <= FINGERPRINT_SLICE) {
      hash.update(canonicalJson(value));
      continue;
    }
    hash.update('[');
    for (let start = 0; start < value.length; start += FINGERPRINT_SLICE) {
      if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const slice = value.slice(start, start + FINGERPRINT_SLICE).map((item) => canonicalJson(item));
      hash.update(`${start === 0 ? '' : ','}${slice.join(',')}`);
    }
    hash.update(']');
  }
  hash.update('}');
  return `${method} ${path} ${hash.digest('hex')}`;
}

/**
 * Claims the key inside the change's transaction, as its first statement
 * (docs/pms-interface.md, "Idempotency": the record is written in the same transaction as
 * the change). The claim lives and dies with that transaction: a 4xx or a crash rolls it
 * back, so there is nothing to release and nothing to take over. A concurrent duplicate
 * waits here for the first to end (on PostgreSQL at most LOCK_TIMEOUT_MS: then 409
 * IDEMPOTENCY_KEY_IN_USE; on SQLite transactions are serial), then finds the committed
 * response or a free key.
 *
 * Throws StoredResponse (replay) or 422 IDEMPOTENCY_KEY_REUSED when the key has a live
 * record; the caller's transaction then rolls back.
 */
async function claimIdempotencyKey(trx: DbOrTrx, scope: IdempotencyScope, nowMs: number): Promise<void> {
  const now = new Date(nowMs).toISOString();
  let inserted: boolean;
  try {
    inserted = await repo.insertRecord(trx, {
      apiKeyId: scope.apiKeyId,
      key: scope.key,
      fingerprint: scope.fingerprint,
      now,
      expiresAt: new Date(nowMs + IDEMPOTENCY_TTL_MS).toISOString(),
    });
  } catch (err) {
    if (isLockTimeout(err)) throw new ApiError('IDEMPOTENCY_KEY_IN_USE');
    throw err;
  }
  if (inserted) return;
  const existing = await repo.findRecord(trx, scope.apiKeyId, scope.key);
  // Defensive: the conflicting row is locked by the insert above and was committed with its response.
  if (!existing || existing.response === null) throw new ApiError('IDEMPOTENCY_KEY_IN_USE');
  if (existing.fingerprint !== scope.fingerprint) throw new ApiError('IDEMPOTENCY_KEY_REUSED');
  throw new StoredResponse(existing.statusCode ?? 200, existing.response);
}

/** Stores the 2xx response on the record claimed earlier in the same transaction (docs/pms-interface.md, "Idempotency": only 2xx are stored). */
async function storeIdempotentResponse(trx: DbOrTrx, scope: IdempotencyScope, statusCode: number, body: string, nowMs: number): Promise<void> {
  await repo.storeResponse(trx, {
    apiKeyId: scope.apiKeyId,
    key: scope.key,
    statusCode,
    body,
    now: new Date(nowMs).toISOString(),
    expiresAt: new Date(nowMs + IDEMPOTENCY_TTL_MS).toISOString(),
  });
}

/**
 * The hooks that make a use case idempotent: the claim is the transaction's first
 * statement, the 2xx response (`respond(result)`, what the route answers) its last.
 * Without a key (GET) there is nothing to do. `statusCode`: the answer's (201 for a creation).
 */
export function idempotencyHooks<T>(req: FastifyRequest, respond: (result: T) => object, statusCode = 200): TransactionHooks<T> {
  const scope = req.idempotency;
  if (!scope) return NO_HOOKS;
  return {
    begin: (trx) => claimIdempotencyKey(trx, scope, Date.now()),
    end: async (trx, result) => {
      const answer = JSON.stringify(respond(result));
      await storeIdempotentResponse(trx, scope, statusCode, answer, Date.now());
      scope.answer = answer;
    },
  };
}

/**
 * docs/pms-interface.md, "Test mode": nothing is read or written but the key's record,
 * with the same semantics as live (claim and response in one transaction). Returns
 * `response`; or, for a trigger value (pms/sandbox-triggers.ts), throws `refusal` after
 * the claim, which rolls the claim back as a live refusal does.
 */
export async function answerInSandbox<T extends object>(db: Db, req: FastifyRequest, response: T, refusal: Error | null = null): Promise<T> {
  const hooks = idempotencyHooks(req, () => response);
  await runTransaction(db, async (trx) => {
    await hooks.begin(trx);
    if (refusal) throw refusal;
    await hooks.end(trx, null);
  });
  return response;
}

/** An answer longer than this is sent in pieces (sendAnswerText). */
const ANSWER_IN_PIECES_CHARS = 256 * 1024;
const ANSWER_PIECE_BYTES = 64 * 1024;

/**
 * Sends an answer's JSON text as it is: the route's serialiser does not write it a second
 * time. A long one (a 20,000-guest sync's answer is megabytes) goes in pieces of 64 KiB,
 * each encrypted as the connection takes it, with turns of the event loop between them
 * (docs/architecture.md, SQLite: long work beside short requests); in one write, TLS
 * encrypted it all in one block. The request log keeps its text all the same.
 */
export function sendAnswerText(reply: FastifyReply, text: string): FastifyReply {
  reply.type('application/json; charset=utf-8');
  if (text.length <= ANSWER_IN_PIECES_CHARS) return reply.send(text);
  const bytes = Buffer.from(text);
  reply.request.responsePayload = text;
  return reply.header('content-length', bytes.length).send(Readable.from(pieces(reply.request, bytes), { objectMode: false }));
}

/** The answer's pieces; its SHA-256 for the request log is taken a piece at a time, as they are sent. */
function* pieces(req: FastifyRequest, bytes: Buffer): Generator<Buffer> {
  const hash = createHash('sha256');
  for (let at = 0; at < bytes.length; at += ANSWER_PIECE_BYTES) {
    const piece = bytes.subarray(at, at + ANSWER_PIECE_BYTES);
    hash.update(piece);
    yield piece;
  }
  req.responseDigest = { bytes: bytes.length, sha256: hash.digest('hex') };
}

/**
 * A replay (docs/pms-interface.md, "Idempotency"): the stored status, body and requestId,
 * with `_idempotent: true`, and the header. The request is noted as the replay of the
 * stored answer's request (its requestId), for the request log.
 */
export function sendStoredResponse(reply: FastifyReply, stored: StoredResponse): FastifyReply {
  const body = JSON.parse(stored.body) as Record<string, unknown>;
  if (typeof body.requestId === 'string') reply.request.replayOf = body.requestId;
  return sendAnswerText(reply.code(stored.statusCode).header('idempotent-replayed', 'true'), JSON.stringify({ ...body, _idempotent: true }));
}
