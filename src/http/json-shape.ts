import { ApiError, fieldError, validationError } from '../errors.js';

/** No request of this service nests deeper than this (a sync: body → guests → guest → value). */
export const MAX_JSON_DEPTH = 64;
/** No object of this service has more members than this (a guest has 12). */
export const MAX_OBJECT_MEMBERS = 64;

/**
 * Refuses a JSON text that nests deeper than MAX_JSON_DEPTH (400 INVALID_JSON) or holds an
 * object with more than MAX_OBJECT_MEMBERS members (422 VALIDATION_ERROR), before it is
 * parsed: one pass over the characters, memory bounded by MAX_JSON_DEPTH, so a hostile
 * body costs no more than reading it, and nothing after it recurses deeper than the limit.
 * Returns null when the shape is acceptable (the text may still be invalid JSON).
 */
export function jsonShapeError(text: string): ApiError | null {
  // members[d] counts the commas of the container open at depth d; objects[d] says whether it is an object.
  const members: number[] = [];
  const objects: boolean[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (members.length >= MAX_JSON_DEPTH) return new ApiError('INVALID_JSON', { message: `The request body nests deeper than ${MAX_JSON_DEPTH} levels.` });
      members.push(0);
      objects.push(c === 0x7b);
    } else if (c === 0x7d || c === 0x5d) {
      members.pop();
      objects.pop();
    } else if (c === 0x2c && members.length > 0) {
      const d = members.length - 1;
      members[d] = (members[d] ?? 0) + 1;
      if (objects[d] && (members[d] ?? 0) >= MAX_OBJECT_MEMBERS) {
        return validationError([fieldError('(body)', 'TOO_MANY', `An object in the body has more than ${MAX_OBJECT_MEMBERS} members; no request of this API has that many. Check the body's structure.`)]);
      }
    }
  }
  return null;
}
