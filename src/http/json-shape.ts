import { ApiError, fieldError, validationError } from '../errors.js';
import { MAX_SYNC_GUESTS } from '../pms/schemas.js';

/** No request of this service nests deeper than this (a sync: body → guests → guest → value). */
export const MAX_JSON_DEPTH = 64;
/** No object of this service has more members than this (a guest has 12). */
export const MAX_OBJECT_MEMBERS = 64;
/** No list of this service has more items than this: a sync's guests. */
const MAX_LIST_ITEMS = MAX_SYNC_GUESTS;
/**
 * No body of this service has more values than this (members, items and containers):
 * a sync of 20,000 guests with every field has about 280,000. JSON.parse's time grows with
 * the count of values, not only with the bytes: a 16 MiB body of tiny ones would hold the
 * event loop for seconds.
 */
const MAX_JSON_VALUES = 400_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
/** A member name the refusal of a too long list may quote: plain ASCII, as every member of this API's bodies. */
const PLAIN_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const MAX_NAME_BYTES = 64;

const tooMany = (field: string, message: string): ApiError => validationError([fieldError(field, 'TOO_MANY', message)]);

/**
 * Where a list that is a member of the body's top-level object lies in the body's bytes:
 * the offsets of its `[`, of the commas between its items and of its `]` (http/json-body.ts
 * parses a long one a slice of items at a time).
 */
export interface ListBounds {
  /** The member's name (a plain name, given once in the object). */
  name: string;
  open: number;
  commas: number[];
  close: number;
}

/**
 * Watches a JSON body as its bytes arrive and refuses it the moment it nests deeper than
 * MAX_JSON_DEPTH (400 INVALID_JSON), an object gets more than MAX_OBJECT_MEMBERS members,
 * a list more than MAX_LIST_ITEMS items or the body more than MAX_JSON_VALUES values
 * (422 VALIDATION_ERROR): a hostile body costs what was read up to that point, not its
 * size, nothing after this recurses deeper than the limit, and JSON.parse never gets more
 * values than a full sync has. Memory is bounded by MAX_JSON_DEPTH. Works on UTF-8 bytes
 * (JSON's structural characters are ASCII and never part of a multi-byte character), so
 * chunks may split characters anywhere.
 * A body it lets through may still be invalid JSON: JSON.parse decides that.
 */
export class JsonShapeScanner {
  // members[d] counts the commas of the container open at depth d; objects[d] says whether it is an object.
  private readonly members: number[] = [];
  private readonly objects: boolean[] = [];
  private inString = false;
  /** The previous chunk ended with a backslash inside a string. */
  private escaped = false;
  /** Containers opened and commas read: the body's values, give or take one per container. */
  private values = 0;
  /** A member name of the top-level object is due next (after its `{` or a `,`). */
  private keyDue = false;
  /** The top-level member name being read (null once it is not a plain name), or undefined outside one. */
  private key: string | null | undefined = undefined;
  /** The last top-level member name read: the name of the list it opens, for the refusal. */
  private lastKey: string | null = null;
  /** The top-level member whose value is the list open at depth 2, if it is one. */
  private listName: string | null = null;
  /** Bytes scanned in the chunks before this one. */
  private offset = 0;
  /** The first top-level list under a plain name, while it is read and after. */
  private bounds: ListBounds | null = null;
  /** The tracked list is the one open at depth 2. */
  private inBounds = false;
  /** How often each plain top-level member name was given; null once a name was not plain. */
  private rootNames: Map<string, number> | null = new Map();

  /**
   * The bounds of the body's first top-level list under a plain name with at least
   * `minItems` items, when that name is the only one of its kind in the object (every
   * top-level name plain); else null. Valid once the whole body was pushed.
   */
  listBounds(minItems: number): ListBounds | null {
    const b = this.bounds;
    if (!b || b.close < 0 || this.members.length > 0 || b.commas.length + 1 < minItems) return null;
    return this.rootNames?.get(b.name) === 1 ? b : null;
  }

  /** The refusal, as soon as `chunk` breaks a limit; null while the shape is acceptable. */
  push(chunk: Uint8Array): ApiError | null {
    const { members, objects } = this;
    let i = 0;
    if (this.escaped) {
      this.escaped = false;
      if (this.key !== undefined) this.key = null;
      i = 1;
    }
    for (; i < chunk.length; i++) {
      const c = chunk[i] as number;
      if (this.inString) {
        if (c === BACKSLASH) {
          // An escaped member name is not a plain one.
          if (this.key !== undefined) this.key = null;
          if (i + 1 < chunk.length) i++;
          else this.escaped = true;
        } else if (c === QUOTE) {
          this.inString = false;
          if (this.key !== undefined) {
            this.lastKey = this.key !== null && PLAIN_NAME.test(this.key) ? this.key : null;
            this.key = undefined;
            if (this.rootNames) {
              if (this.lastKey === null) this.rootNames = null;
              else this.rootNames.set(this.lastKey, (this.rootNames.get(this.lastKey) ?? 0) + 1);
            }
          }
        } else if (typeof this.key === 'string') {
          this.key = this.key.length < MAX_NAME_BYTES ? this.key + String.fromCharCode(c) : null;
        }
        continue;
      }
      if (c === QUOTE) {
        this.inString = true;
        if (this.keyDue) {
          this.keyDue = false;
          this.key = '';
        }
      } else if (c === 0x7b || c === 0x5b) {
        if (members.length >= MAX_JSON_DEPTH) return new ApiError('INVALID_JSON', { message: `The request body nests deeper than ${MAX_JSON_DEPTH} levels.` });
        if (++this.values > MAX_JSON_VALUES) return this.tooManyValues();
        if (members.length === 0) this.keyDue = c === 0x7b;
        if (members.length === 1) {
          this.listName = c === 0x5b && objects[0] ? this.lastKey : null;
          if (this.listName !== null && this.bounds === null) {
            this.bounds = { name: this.listName, open: this.offset + i, commas: [], close: -1 };
            this.inBounds = true;
          }
        }
        members.push(0);
        objects.push(c === 0x7b);
      } else if (c === 0x7d || c === 0x5d) {
        if (members.length === 2 && this.inBounds && this.bounds) {
          this.bounds.close = this.offset + i;
          this.inBounds = false;
        }
        members.pop();
        objects.pop();
      } else if (c === COMMA && members.length > 0) {
        if (++this.values > MAX_JSON_VALUES) return this.tooManyValues();
        if (members.length === 2 && this.inBounds) this.bounds?.commas.push(this.offset + i);
        const d = members.length - 1;
        const n = (members[d] ?? 0) + 1;
        members[d] = n;
        if (objects[d]) {
          if (d === 0) this.keyDue = true;
          if (n >= MAX_OBJECT_MEMBERS) {
            return tooMany(
              '(body)',
              `An object in the body has more than ${MAX_OBJECT_MEMBERS} members; no request of this API has that many. Check the body's structure.`,
            );
          }
        } else if (n >= MAX_LIST_ITEMS) {
          // n commas: n + 1 items at least.
          const name = d === 1 ? this.listName : null;
          return name
            ? tooMany(name, `${name} must have at most ${MAX_LIST_ITEMS.toLocaleString('en-US')} items.`)
            : tooMany('(body)', `A list in the body has more than ${MAX_LIST_ITEMS.toLocaleString('en-US')} items; no request of this API has that many.`);
        }
      }
    }
    this.offset += chunk.length;
    return null;
  }

  private tooManyValues(): ApiError {
    return tooMany(
      '(body)',
      `The body has more than ${MAX_JSON_VALUES.toLocaleString('en-US')} values; no request of this API has that many. Check the body's structure.`,
    );
  }
}
