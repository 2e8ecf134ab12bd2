import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { fieldError, validationError, type FieldError, type FieldErrorCode } from '../errors.js';
import { isCalendarDate } from '../domain/guest.js';
import { COUNTRY_CODES, LANGUAGE_CODES } from '../domain/iso-codes.js';
import { isTimeZone, TIME_ZONE_RULE } from '../domain/accounts.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats: string[]) => Ajv;

/** Extra rules for one route's body or query, run after the schema (cross-field, trimming). */
const LANGUAGE_FORMAT = 'iso-639-1';
const COUNTRY_FORMAT = 'iso-3166-1-alpha-2';
const TIME_ZONE_FORMAT = 'time-zone';

/**
 * The formats of the service's own (beyond Ajv's): named to the answers' serializer too,
 * which reads the same schemas but never checks a format (without the names it warns of
 * an unknown format on every route that answers a guest).
 */
export const OWN_FORMATS: Record<string, true> = { [LANGUAGE_FORMAT]: true, [COUNTRY_FORMAT]: true, [TIME_ZONE_FORMAT]: true };

export type Refinement = (data: Record<string, unknown>) => FieldError[];

const REFINEMENTS = new WeakMap<object, Refinement>();

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

function createAjv(): Ajv {
  // allErrors: decisions.md asks for every problem, not only the first.
  // No coercion and no removal: "5" is not 5, and unknown members are refused.
  const ajv = new Ajv({ verbose: true, allErrors: true, coerceTypes: false, removeAdditional: false, useDefaults: false, strict: false });
  addFormats(ajv, ['email', 'date-time']);
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
export function toFieldErrors(errors: ErrorObject[] | null | undefined, part: Part = 'body'): FieldError[] {
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
 * A NUL character (U+0000) anywhere in a string: PostgreSQL cannot store it in text, and
 * no field of ours means it. Refused on both engines alike, naming the field.
 */
function nulCharacters(data: unknown, at = ''): FieldError[] {
  if (typeof data === 'string')
    return data.includes('\u0000') ? [fieldError(at || '(body)', 'INVALID_FORMAT', `${at || 'The value'} must not contain the NUL character (\\u0000).`)] : [];
  if (data === null || typeof data !== 'object') return [];
  const out: FieldError[] = [];
  if (Array.isArray(data)) data.forEach((v, i) => out.push(...nulCharacters(v, `${at}[${i}]`)));
  else for (const [k, v] of Object.entries(data)) out.push(...nulCharacters(v, at ? `${at}.${k}` : k));
  return out;
}

/**
 * Fastify's validator compiler: the route's TypeBox schema (the same one the OpenAPI
 * document shows), then the route's refinement; every failure becomes one 422 ApiError.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const ajv = createAjv();
  return ({ schema, httpPart }) => {
    const validate = ajv.compile(schema as object);
    const refine = REFINEMENTS.get(schema as object);
    const part = (httpPart ?? 'body') as Part;
    return (data: unknown) => {
      const ok = validate(data);
      const errors = ok ? [] : toFieldErrors(validate.errors, part);
      // (A field whose schema already refused control characters is not named twice.)
      for (const e of nulCharacters(data)) if (!errors.some((x) => x.field === e.field)) errors.push(e);
      if (refine && data !== null && typeof data === 'object') errors.push(...refine(data as Record<string, unknown>));
      if (errors.length > 0) return { error: validationError(errors) };
      return { value: data };
    };
  };
}
