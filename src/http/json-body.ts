import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { BODY_CAP_BYTES } from '../pms/request-log-body.js';
import { JsonShapeScanner, type ListBounds } from './json-shape.js';
import { wasCut } from './transport.js';

type Done = (err: Error | null, body?: unknown) => void;

/**
 * A top-level list with at least this many items (a sync's guests) is parsed this many
 * items at a time, a turn of the event loop between two parts: a 4 MB body is not one
 * JSON.parse that holds every other request (docs/architecture.md, SQLite: long work
 * beside short requests).
 */
export const SLICED_LIST_ITEMS = 1000;

/**
 * JSON.parse of a body whose top-level object has the list `b` (the scanner's bounds, in
 * `bytes`): the object with that list empty, then the list SLICED_LIST_ITEMS items at a
 * time. The same value as JSON.parse of the whole (its member order too), and invalid where
 * it is: the object around the list is valid with the list empty, and the list is valid
 * when each part of its items is. The parts are cut at commas, which never split a character.
 */
export async function parseListInParts(bytes: Buffer, b: ListBounds): Promise<Record<string, unknown>> {
  const root = JSON.parse(bytes.toString('utf8', 0, b.open + 1) + bytes.toString('utf8', b.close)) as Record<string, unknown>;
  const items: unknown[] = [];
  const ends = [...b.commas, b.close];
  let start = b.open + 1;
  for (let i = 0; i < ends.length; i += SLICED_LIST_ITEMS) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const end = ends[Math.min(i + SLICED_LIST_ITEMS, ends.length) - 1] as number;
    for (const item of JSON.parse(`[${bytes.toString('utf8', start, end)}]`) as unknown[]) items.push(item);
    start = end + 1;
  }
  // A plain name (a letter first): an own member, never the prototype.
  root[b.name] = items;
  return root;
}

/**
 * The JSON body parser (docs/pms-interface.md, "Request bodies": JSON objects only).
 * Reads the body as it arrives and refuses it at the first byte that breaks a rule,
 * without reading the rest: over the route's body limit (413, at once when Content-Length
 * says so), nested too deep (400) or an object too wide (422). What the client still
 * sends is read and discarded by the connection's close (http/transport.ts
 * lingerOnClose), never buffered.
 */
export function parseJsonBody(req: FastifyRequest, payload: IncomingMessage, done: Done): void {
  const limit = req.routeOptions.bodyLimit;
  if (Number(req.headers['content-length']) > limit) {
    done(new ApiError('PAYLOAD_TOO_LARGE'));
    return;
  }
  const scanner = new JsonShapeScanner();
  // Decoded as it arrives, a chunk per event: a 4 MB sync body is not copied and decoded
  // in one block at its end (docs/architecture.md, SQLite: long work beside short requests).
  const decoder = new StringDecoder('utf8');
  let text = '';
  // The bytes too: a long top-level list is parsed from them a part at a time.
  const chunks: Buffer[] = [];
  let received = 0;
  // A body longer than the request log keeps has the SHA-256 of its bytes taken chunk by
  // chunk as they arrive, for the log's cut marker (pms/request-log-body.ts): hashed at the
  // end, a 4 MB sync body was one block of 10-35 ms on the event loop.
  let hash: Hash | null = null;
  const finish = (err: Error | null, body?: unknown): void => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', finish);
    // Cut off by its request timeout and answered 408 already (HTTP/2): nothing more to say.
    if (!wasCut(req.raw)) done(err, body);
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > limit) return finish(new ApiError('PAYLOAD_TOO_LARGE'));
    text += decoder.write(chunk);
    chunks.push(chunk);
    if (hash) hash.update(chunk);
    else if (received > BODY_CAP_BYTES) {
      hash = createHash('sha256');
      for (const c of chunks) hash.update(c);
    }
    const refusal = scanner.push(chunk);
    if (refusal) {
      // The request log keeps what was read of a refused body.
      req.rawBody = text + decoder.end();
      finish(refusal);
    }
  };
  const onEnd = (): void => {
    text += decoder.end();
    req.rawBody = text;
    if (hash) req.rawBodySha256 = hash.digest('hex');
    const invalid = (): ApiError => new ApiError('INVALID_JSON', { message: 'The request body is not parseable JSON.' });
    const list = scanner.listBounds(SLICED_LIST_ITEMS);
    if (list) {
      parseListInParts(Buffer.concat(chunks), list).then(
        (parsed) => finish(null, parsed),
        () => finish(invalid()),
      );
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return finish(invalid());
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      return finish(new ApiError('INVALID_JSON', { message: 'The request body must be a JSON object.' }));
    }
    finish(null, parsed);
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', finish);
}
