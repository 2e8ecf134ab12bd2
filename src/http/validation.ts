import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler, SafePromiseLike } from 'fastify';
import { ApiError, fieldError, validationError, type FieldError, type FieldErrorCode } from '../errors.js';
import { isCalendarDate } from '../domain/guest.js';
import { COUNTRY_CODES, LANGUAGE_CODES } from '../domain/iso-codes.js';
import { isEmailAddress, isTimeZone, TIME_ZONE_RULE } from '../domain/accounts.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats: string[]) => Ajv;

const LANGUAGE_FORMAT = 'iso-639-1';
const COUNTRY_FORMAT = 'iso-3166-1-alpha-2';
const TIME_ZONE_FORMAT = 'time-zone';

/**
 * The formats of the service's own (beyond Ajv's): named to the answers' serializer too,
 * which reads the same schemas but never checks a format (without the names it warns of
 * an unknown format on every route that answers a guest).
 */
export const OWN_FORMATS: Record<string, true> = { [LANGUAGE_FORMAT]: true, [COUNTRY_FORMAT]: true, [TIME_ZONE_FORMAT]: true };

/** Extra rules for one route's body or query, run after the schema (cross-field, trimming). */
export type Refinement = (data: Record<string, unknown>) => FieldError[];

/**
 * Extra rules for the items of a body's list, one item at a time (its index names it):
 * made afresh for each check, so that it may remember the items before (no value twice).
 */
export type ItemRefinement = () => (item: Record<string, unknown>, index: number) => FieldError[];

const REFINEMENTS = new WeakMap<object, Refinement>();
const ITEM_REFINEMENTS = new WeakMap<object, { list: string; rule: ItemRefinement }>();

/**
 * The schema, for one route, with the cross-field rules a JSON Schema cannot say (date
 * order, a trimmed room number): declared with the route it refines, checked after the
 * schema, every failure in the same 422. A copy, so each route's schema carries its own.
 */
export function refined<T extends object>(schema: T, refine: Refinement): T {
  const copy = { ...schema };
  REFINEMENTS.set(copy, refine);
  return copy;
}

/**
 * The schema with rules for each item of its list member `list` (a sync's guests), checked
 * after the item's schema, a slice of the list at a time like the schema; their failures
 * follow the schema's in the same 422.
 */
export function refinedItems<T extends object>(schema: T, list: string, rule: ItemRefinement): T {
  const copy = { ...schema };
  ITEM_REFINEMENTS.set(copy, { list, rule });
  return copy;
}

/** allErrors: every problem of a value (docs/pms-interface.md, "Errors"), or only whether there is one (the cheap check of a list's item). */
function createAjv(allErrors: boolean): Ajv {
  // No coercion and no removal: "5" is not 5, and unknown members are refused.
  const ajv = new Ajv({ verbose: true, allErrors, coerceTypes: false, removeAdditional: false, useDefaults: false, strict: false });
  addFormats(ajv, ['date-time']);
  ajv.addFormat('email', isEmailAddress);
  ajv.addFormat('date', isCalendarDate); // a real calendar date, not only the shape
  ajv.addFormat(LANGUAGE_FORMAT, (v: string) => LANGUAGE_CODES.has(v));
  ajv.addFormat(COUNTRY_FORMAT, (v: string) => COUNTRY_CODES.has(v));
  ajv.addFormat(TIME_ZONE_FORMAT, isTimeZone);
  return ajv;
}

function fieldPath(instancePath: string, member?: string): string {
  const parts = instancePath.split('/').filter(Boolean);
  if (member !== undefined) parts.push(member);
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  return out || '(body)';
}

const isDateField = (field: string): boolean => /Date$/.test(field);

/** "must be 1-100 characters", stated from the schema rather than Ajv's wording. */
function lengthRule(e: ErrorObject): string {
  const s = e.parentSchema as { minLength?: number; maxLength?: number } | undefined;
  if (s?.minLength !== undefined && s.maxLength !== undefined) return `must be ${s.minLength}-${s.maxLength} characters`;
  if (s?.maxLength !== undefined) return `must be at most ${s.maxLength} characters`;
  return `must be at least ${s?.minLength ?? 1} characters (an empty string is not "absent")`;
}

/** The rule a value broke, in words an integrator can act on. */
function describeRule(e: ErrorObject, field: string, code: FieldErrorCode): string {
  const format = String((e.params as { format?: unknown }).format);
  if (code === 'INVALID_DATE_FORMAT') return 'must be a real calendar date in YYYY-MM-DD format';
  if (e.keyword === 'format' && format === 'iso-639-1') return 'must be an assigned ISO 639-1 language code in lower case (e.g. "en")';
  if (e.keyword === 'format' && format === TIME_ZONE_FORMAT) return `must be ${TIME_ZONE_RULE}`;
  if (e.keyword === 'format' && format === 'email') return 'must be an e-mail address such as name@example.com';
  if (e.keyword === 'format' && format === 'iso-3166-1-alpha-2') return 'must be an assigned ISO 3166-1 alpha-2 country code in upper case (e.g. "DE")';
  if (e.keyword === 'const') return `must be ${JSON.stringify((e.params as { allowedValue?: unknown }).allowedValue)}`;
  if (e.keyword === 'type') return typeRule(e);
  if (e.keyword === 'minLength' || e.keyword === 'maxLength') return lengthRule(e);
  if (e.keyword === 'minimum' || e.keyword === 'maximum') return rangeRule(e);
  if (e.keyword === 'maxItems') return `must have at most ${Number((e.params as { limit?: unknown }).limit).toLocaleString('en-US')} items`;
  if (e.keyword === 'pattern') {
    if (field.endsWith('phone')) return 'must be E.164: "+" then 2-15 digits, the first not 0';
    // Other patterns state their rule in the schema's description ("2-63 characters of …").
    const described = (e.parentSchema as { description?: unknown } | undefined)?.description;
    return typeof described === 'string' && !String((e.parentSchema as { pattern?: unknown }).pattern).startsWith('^[^\\u0000')
      ? `must be ${described}`
      : 'must not contain control characters or invisible format characters (such as zero-width spaces or direction marks)';
  }
  return e.message ?? 'is invalid';
}

function rangeRule(e: ErrorObject): string {
  const s = e.parentSchema as { minimum?: number; maximum?: number } | undefined;
  return `must be a whole number from ${s?.minimum ?? '-∞'} to ${s?.maximum ?? '∞'}`;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

/** What a JSON value is, in words ("a number", "text", "null"). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isInteger(value) ? 'a whole number' : 'a number with a fraction';
  if (typeof value === 'string') return 'text';
  if (typeof value === 'boolean') return String(value);
  return 'an object';
}

/** "must be text, got a number"; "must be a whole number or null, got text". */
function typeRule(e: ErrorObject): string {
  const wanted = [(e.params as { type?: unknown }).type].flat().map(String);
  const words = wanted.map((t) => TYPE_WORDS[t] ?? t).join(' or ');
  return `must be ${words}, got ${kindOf(e.data)}`;
}

/** What the checked value's parts are called: a body's members, a query's parameters. */
type Part = 'body' | 'querystring' | 'params' | 'headers';

function toFieldError(e: ErrorObject, part: Part): FieldError {
  const params = e.params as Record<string, unknown>;
  const member = part === 'querystring' ? 'parameter' : 'member';
  if (e.keyword === 'required') {
    const f = fieldPath(e.instancePath, String(params.missingProperty));
    return fieldError(f, 'REQUIRED', `${f} is required.`);
  }
  if (e.keyword === 'additionalProperties') {
    const f = fieldPath(e.instancePath, String(params.additionalProperty));
    return fieldError(f, 'UNKNOWN_FIELD', `${f} is not a known ${member}; check its spelling.`);
  }
  const f = fieldPath(e.instancePath);
  let code: FieldErrorCode;
  switch (e.keyword) {
    case 'type':
      code = isDateField(f) ? 'INVALID_DATE_FORMAT' : 'INVALID_TYPE';
      break;
    case 'format':
      code =
        params.format === 'date'
          ? 'INVALID_DATE_FORMAT'
          : String(params.format).startsWith('iso-') || params.format === TIME_ZONE_FORMAT
            ? 'INVALID_VALUE'
            : 'INVALID_FORMAT';
      break;
    case 'pattern':
      code = 'INVALID_FORMAT';
      break;
    case 'minLength':
      code = 'TOO_SHORT';
      break;
    case 'maxLength':
      code = 'TOO_LONG';
      break;
    case 'minimum':
    case 'maximum':
      code = 'OUT_OF_RANGE';
      break;
    case 'maxItems':
      code = 'TOO_MANY';
      break;
    default:
      code = 'INVALID_VALUE';
  }
  const detail = describeRule(e, f, code);
  return fieldError(f, code, `${f} ${detail}.`);
}

/** Ajv errors of one value as field errors, one per (field, code). */
function toFieldErrors(errors: ErrorObject[] | null | undefined, part: Part = 'body'): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  const allowed = allowedValues(errors ?? []);
  for (const e of errors ?? []) {
    // anyOf/oneOf wrappers repeat what their branches said.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const fe = toFieldError(e, part);
    // A value that matches none of several allowed ones: name them all.
    const all = e.keyword === 'const' ? allowed.get(e.instancePath) : undefined;
    if (all && all.length > 1)
      fe.message = `${fe.field} must be ${all
        .map((v) => JSON.stringify(v))
        .slice(0, -1)
        .join(', ')} or ${JSON.stringify(all.at(-1))}.`;
    const k = `${fe.field}|${fe.code}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push(fe);
    }
  }
  return out;
}

/** Per value (instance path), every constant its union allowed: `source` is "pms" or "receptionist". */
function allowedValues(errors: ErrorObject[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  for (const e of errors) {
    if (e.keyword !== 'const') continue;
    out.set(e.instancePath, [...(out.get(e.instancePath) ?? []), (e.params as { allowedValue?: unknown }).allowedValue]);
  }
  return out;
}

/**
 * Validation stops once it has found more problems than this: a body of 20,000 broken
 * guests costs what its first few cost, and its 422 says that the check stopped there
 * (the answer lists the first MAX_LISTED_ERRORS of them).
 */
const MAX_FOUND_ERRORS = 50;
/** A list is checked this many items at a time, the event loop free between the slices. */
const SLICE_ITEMS = 250;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether a NUL character is in any string of `data`: a walk that builds nothing. */
function hasNul(data: unknown, skip?: ReadonlySet<string>): boolean {
  if (typeof data === 'string') return data.includes('\u0000');
  if (data === null || typeof data !== 'object') return false;
  if (Array.isArray(data)) {
    for (const v of data) if (hasNul(v)) return true;
    return false;
  }
  for (const k in data) if (Object.hasOwn(data, k) && !skip?.has(k) && hasNul((data as Record<string, unknown>)[k])) return true;
  return false;
}

/**
 * A NUL character (U+0000) anywhere in a string: PostgreSQL cannot store it in text, and
 * no field of ours means it. Refused on both engines alike, naming the field. Appends to
 * `out` until it holds `limit` errors; `skip` names the members checked elsewhere.
 */
function nulCharacters(data: unknown, at: string, out: FieldError[], limit: number, skip?: ReadonlySet<string>): void {
  if (out.length >= limit || !hasNul(data, skip)) return;
  if (typeof data === 'string') {
    out.push(fieldError(at || '(body)', 'INVALID_FORMAT', `${at || 'The value'} must not contain the NUL character (\\u0000).`));
    return;
  }
  if (Array.isArray(data)) {
    for (let i = 0; i < data.length && out.length < limit; i++) nulCharacters(data[i], `${at}[${i}]`, out, limit);
    return;
  }
  for (const k in data as object) {
    if (out.length >= limit) return;
    if (!Object.hasOwn(data as object, k) || skip?.has(k)) continue;
    nulCharacters((data as Record<string, unknown>)[k], at ? `${at}.${k}` : k, out, limit);
  }
}

/** A top-level member whose value is a list of checked items: its items are checked one by one. */
interface ListRule {
  key: string;
  maxItems: number;
  /** The list's item refinement, if it has one. */
  refine?: ItemRefinement;
  /** Stops at an item's first problem: the cheap check of an item. */
  valid: ValidateFunction;
  /** Every problem of one item, for the items `valid` refused. */
  explain: ValidateFunction;
}

/**
 * An object schema's list members (`guests`) taken out of it: the shell checks the body
 * without walking the lists' items; each item is then checked on its own, so a long list
 * of broken items is explained only as far as its first problems, and a list longer than
 * its maxItems is refused without looking at its items.
 */
function splitLists(schema: object): { shell: object; lists: { key: string; maxItems: number; items: object }[] } | null {
  const s = schema as { type?: unknown; properties?: Record<string, unknown> };
  if (s.type !== 'object' || !isObject(s.properties)) return null;
  const properties: Record<string, unknown> = { ...s.properties };
  const lists: { key: string; maxItems: number; items: object }[] = [];
  for (const [key, p] of Object.entries(s.properties)) {
    const list = p as { type?: unknown; items?: unknown; maxItems?: number };
    if (list.type !== 'array' || !isObject(list.items)) continue;
    const { items, ...rest } = list;
    properties[key] = rest;
    lists.push({ key, maxItems: list.maxItems ?? Infinity, items: items as object });
  }
  return lists.length > 0 ? { shell: { ...schema, properties }, lists } : null;
}

/** An item's errors as if the whole body had been checked: `/guests/3/lastName`. */
const under = (prefix: string, errors: ErrorObject[] | null | undefined): ErrorObject[] =>
  (errors ?? []).map((e) => ({ ...e, instancePath: prefix + e.instancePath }));

/** The problems a check found, and whether it stopped before it had looked at everything. */
interface Found {
  errors: FieldError[];
  stopped: boolean;
}

/**
 * One value's check, step by step: it yields after each slice of a long list, so that the
 * caller can let other requests run in between. Finds at most MAX_FOUND_ERRORS + 1 problems.
 */
function* checkValue(data: unknown, part: Part, shell: ValidateFunction, lists: ListRule[], refine: Refinement | undefined): Generator<void, Found, void> {
  const limit = MAX_FOUND_ERRORS + 1;
  const schemaErrors: FieldError[] = shell(data) ? [] : toFieldErrors(shell.errors, part);
  const nuls: FieldError[] = [];
  const refined: FieldError[] = [];
  const listed = new Set(lists.map((l) => l.key));
  const found = (): number => schemaErrors.length + nuls.length + refined.length;
  nulCharacters(data, '', nuls, limit, isObject(data) ? listed : undefined);
  for (const list of lists) {
    const items = isObject(data) ? data[list.key] : undefined;
    // Too long: the shell's maxItems said so; its items are not looked at.
    if (!Array.isArray(items) || items.length > list.maxItems) continue;
    const rule = list.refine?.();
    for (let i = 0; i < items.length && found() < limit; i++) {
      if (i > 0 && i % SLICE_ITEMS === 0) yield;
      const item: unknown = items[i];
      if (!list.valid(item)) {
        list.explain(item);
        schemaErrors.push(...toFieldErrors(under(`/${list.key}/${i}`, list.explain.errors), part));
      }
      nulCharacters(item, `${list.key}[${i}]`, nuls, limit - schemaErrors.length - refined.length);
      if (rule && isObject(item)) refined.push(...rule(item, i));
    }
  }
  // (A field whose schema already refused control characters is not named twice.)
  const named = new Set(schemaErrors.map((e) => e.field));
  const errors = [...schemaErrors, ...nuls.filter((e) => !named.has(e.field)), ...refined];
  if (errors.length < limit && refine && isObject(data)) errors.push(...refine(data));
  const stopped = errors.length >= limit;
  return { errors: stopped ? errors.slice(0, MAX_FOUND_ERRORS) : errors, stopped };
}

/** The check's answer to Fastify: the value, or the 422. */
function verdict(data: unknown, found: Found): { value: unknown } | { error: ApiError } {
  return found.errors.length > 0 ? { error: validationError(found.errors, { stopped: found.stopped }) } : { value: data };
}

/**
 * Runs a check to its end: at once when it never yields (every ordinary request), else a
 * slice per turn of the event loop, resolved with the value or rejected with the 422 (an
 * asynchronous validator's answer to Fastify).
 */
function run(data: unknown, steps: Generator<void, Found, void>): { value: unknown } | { error: ApiError } | SafePromiseLike<unknown> {
  const first = steps.next();
  if (first.done) return verdict(data, first.value);
  const rest = new Promise((resolve, reject) => {
    const step = (): void => {
      try {
        const next = steps.next();
        if (!next.done) return void setImmediate(step);
        const answer = verdict(data, next.value);
        if ('error' in answer) reject(answer.error);
        else resolve(answer.value);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    };
    setImmediate(step);
  });
  // Fastify awaits an asynchronous validator: it resolves when the value passed, and a rejection is the error.
  return rest as unknown as SafePromiseLike<unknown>;
}

/**
 * Fastify's validator compiler: the route's TypeBox schema (the same one the OpenAPI
 * document shows), then the route's refinement; every failure becomes one 422 ApiError.
 * Lists are checked item by item, a slice per turn of the event loop, and the check stops
 * after MAX_FOUND_ERRORS problems: no body holds the service for long.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const ajv = createAjv(true);
  const quick = createAjv(false);
  return ({ schema, httpPart }) => {
    const split = splitLists(schema as object);
    const shell = ajv.compile(split?.shell ?? (schema as object));
    const itemRules = ITEM_REFINEMENTS.get(schema as object);
    const lists: ListRule[] = (split?.lists ?? []).map((l) => ({
      key: l.key,
      maxItems: l.maxItems,
      refine: itemRules?.list === l.key ? itemRules.rule : undefined,
      valid: quick.compile(l.items),
      explain: ajv.compile(l.items),
    }));
    const refine = REFINEMENTS.get(schema as object);
    const part = (httpPart ?? 'body') as Part;
    return (data: unknown) => run(data, checkValue(data, part, shell, lists, refine));
  };
}
