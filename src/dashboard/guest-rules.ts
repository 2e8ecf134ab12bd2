import type { TSchema } from '@sinclair/typebox';
import { PASSWORD_MAX, PASSWORD_MIN } from '../domain/accounts.js';
import { ROOM_NUMBER_MAX } from '../domain/guest-schema.js';
import { COUNTRY_CODES, LANGUAGE_CODES } from '../domain/iso-codes.js';
import { WalkInBody } from './schemas.js';

/** What the browser's guest forms need of a field's rule: whether it is required and the input's limits. */
interface FieldRule {
  required: boolean;
  /** The input's type: text, email, date or number. */
  input: 'text' | 'email' | 'date' | 'number';
  maxLength?: number;
  min?: number;
  max?: number;
  /** The codes the field accepts (languages, countries), for the form's searchable list. */
  codes?: string[];
}

/** Codes of two letters (ISO 639-1 languages, ISO 3166-1 countries). */
const TWO_LETTER_FORMATS: Record<string, ReadonlySet<string>> = { 'iso-639-1': LANGUAGE_CODES, 'iso-3166-1-alpha-2': COUNTRY_CODES };

function ruleOf(schema: TSchema, required: boolean): FieldRule {
  const s = schema as { type?: string | string[]; format?: string; maxLength?: number; minimum?: number; maximum?: number };
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('integer')) return { required, input: 'number', min: s.minimum, max: s.maximum };
  if (s.format === 'date') return { required, input: 'date' };
  if (s.format === 'email') return { required, input: 'email', maxLength: s.maxLength };
  const codes = s.format ? TWO_LETTER_FORMATS[s.format] : undefined;
  // No length limit: a person may type the name ("Germany"), which the form turns into its code.
  if (codes) return { required, input: 'text', codes: [...codes].sort() };
  return { required, input: 'text', maxLength: s.maxLength };
}

/** The walk-in form's rules, per field, from the schema the server validates it with. */
function guestFieldRules(): Record<string, FieldRule> {
  const required = new Set<string>(WalkInBody.required ?? []);
  const rules = Object.fromEntries(Object.entries(WalkInBody.properties).map(([name, schema]) => [name, ruleOf(schema, required.has(name))]));
  // "1-20 characters after trimming": a limit on what is typed, which the schema cannot state.
  rules.roomNumber = { ...(rules.roomNumber as FieldRule), maxLength: ROOM_NUMBER_MAX };
  return rules;
}

/** The password's length (setup and staff forms), so a form states the limit the server applies. */
const PASSWORD_RULE = { minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX };

/** The rules as the ES module the dashboard imports (`/dashboard/assets/guest-rules.js`). */
export function guestRulesModule(): string {
  return [
    '// Served by innsync from the schemas it validates guests and accounts with: do not edit.',
    `export const GUEST_RULES = ${JSON.stringify(guestFieldRules(), null, 2)};`,
    `export const PASSWORD_RULE = ${JSON.stringify(PASSWORD_RULE)};`,
    '',
  ].join('\n');
}
