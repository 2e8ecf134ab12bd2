import formats from 'ajv-formats/dist/formats.js';

// The rules of hotels and staff accounts, one copy for the dashboard's schemas and the
// command line alike (docs/pms-interface.md, "Hotel slugs"; docs/dashboard.md: setup and users).

/** docs/pms-interface.md, "Hotel slugs": 2-63 characters of a-z, 0-9 and -, starting with a letter. */
export const SLUG_PATTERN = '^[a-z][a-z0-9-]{1,62}$';
export const SLUG_RULE = '2-63 characters of a-z, 0-9 and "-", starting with a letter';
export const HOTEL_NAME_MAX = 100;
export const EMAIL_MAX = 254;

/**
 * The one e-mail rule, of staff accounts and of guests alike: ajv-formats' full "email"
 * format. The schemas check it as their `email` format (http/validation.ts), the command
 * line calls isEmailAddress, and the OpenAPI document states it as a pattern.
 */
export const EMAIL_ADDRESS = formats.fullFormats.email as RegExp;

export function isEmailAddress(value: string): boolean {
  return EMAIL_ADDRESS.test(value);
}
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

/** The IANA time zones this runtime knows (and UTC), for a hotel's "today". */
const TIME_ZONES: readonly string[] = [...new Set(['UTC', ...Intl.supportedValuesOf('timeZone')])].sort();
const ZONES = new Set(TIME_ZONES);

export function isTimeZone(name: string): boolean {
  return ZONES.has(name);
}

export const TIME_ZONE_RULE = 'an IANA time zone name such as "Europe/Berlin" or "America/New_York"';
