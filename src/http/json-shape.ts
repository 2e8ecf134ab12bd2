import { ApiError, fieldError, validationError } from '../errors.js';

/** No request of this service nests deeper than this (a sync: body → guests → guest → value). */
export const MAX_JSON_DEPTH = 64;
/** No object of this service has more members than this (a guest has 12). */
export const MAX_OBJECT_MEMBERS = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

/**
 * Watches a JSON body as its bytes arrive and refuses it the moment it nests deeper than
 * MAX_JSON_DEPTH (400 INVALID_JSON) or an object gets more than MAX_OBJECT_MEMBERS members
 * (422 VALIDATION_ERROR): a hostile body costs what was read up to that point, not its
 * size, and nothing after this recurses deeper than the limit. Memory is bounded by
 * MAX_JSON_DEPTH. Works on UTF-8 bytes (JSON's structural characters are ASCII and never
 * part of a multi-byte character), so chunks may split characters anywhere.
 * A body it lets through may still be invalid JSON: JSON.parse decides that.
 */
export class JsonShapeScanner {
  // members[d] counts the commas of the container open at depth d; objects[d] says whether it is an object.
  private readonly members: number[] = [];
  private readonly objects: boolean[] = [];
  private inString = false;
  /** The previous chunk ended with a backslash inside a string. */
  private escaped = false;

  /** The refusal, as soon as `chunk` breaks a limit; null while the shape is acceptable. */
  push(chunk: Uint8Array): ApiError | null {
    const { members, objects } = this;
    let i = 0;
    if (this.escaped) {
      this.escaped = false;
      i = 1;
    }
    for (; i < chunk.length; i++) {
      const c = chunk[i];
      if (this.inString) {
        if (c === BACKSLASH) {
          if (i + 1 < chunk.length) i++;
          else this.escaped = true;
        } else if (c === QUOTE) this.inString = false;
        continue;
      }
      if (c === QUOTE) this.inString = true;
      else if (c === 0x7b || c === 0x5b) {
        if (members.length >= MAX_JSON_DEPTH) return new ApiError('INVALID_JSON', { message: `The request body nests deeper than ${MAX_JSON_DEPTH} levels.` });
        members.push(0);
        objects.push(c === 0x7b);
      } else if (c === 0x7d || c === 0x5d) {
        members.pop();
        objects.pop();
      } else if (c === COMMA && members.length > 0) {
        const d = members.length - 1;
        const n = (members[d] ?? 0) + 1;
        members[d] = n;
        if (objects[d] && n >= MAX_OBJECT_MEMBERS) {
          return validationError([
            fieldError(
              '(body)',
              'TOO_MANY',
              `An object in the body has more than ${MAX_OBJECT_MEMBERS} members; no request of this API has that many. Check the body's structure.`,
            ),
          ]);
        }
      }
    }
    return null;
  }
}
