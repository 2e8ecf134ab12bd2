import type { IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { JsonShapeScanner } from './json-shape.js';
import { wasCut } from './transport.js';

type Done = (err: Error | null, body?: unknown) => void;

/**
 * The JSON body parser (decisions.md: JSON objects only). Reads the body as it arrives
 * and refuses it at the first byte that breaks a rule, without reading the rest: over
 * the route's body limit (413, at once when Content-Length says so), nested too deep
 * (400) or an object too wide (422). What the client still sends is read and discarded
 * by the connection's close (http/transport.ts lingerOnClose), never buffered.
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
  let received = 0;
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
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return finish(new ApiError('INVALID_JSON', { message: 'The request body is not parseable JSON.' }));
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
