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

/** A staff account's e-mail as it is stored and compared: trimmed, in lower case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export const STAFF_ROLES = ['admin', 'receptionist'] as const;

/**
 * A new staff account's rules (docs/dashboard.md, "Staff accounts and login"), checked in
 * this order: the role is admin or receptionist; the e-mail, trimmed and in lower case, is
 * an e-mail address of at most EMAIL_MAX characters; the password keeps isStaffPassword.
 * The account as it is stored (e-mail normalised), or the first rule it breaks.
 */
export function checkStaffAccount(input: {
  email: string;
  role: string;
  password: string;
}): { ok: true; email: string; role: (typeof STAFF_ROLES)[number] } | { ok: false; problem: 'role' | 'email' | 'password' } {
  const role = STAFF_ROLES.find((r) => r === input.role);
  if (role === undefined) return { ok: false, problem: 'role' };
  const email = normalizeEmail(input.email);
  if (!isEmailAddress(email) || email.length > EMAIL_MAX) return { ok: false, problem: 'email' };
  if (!isStaffPassword(input.password)) return { ok: false, problem: 'password' };
  return { ok: true, email, role };
}

/** A staff password's rule: PASSWORD_MIN to PASSWORD_MAX characters (Unicode code points, as the schemas count a length). */
export function isStaffPassword(password: string): boolean {
  const length = [...password].length;
  return length >= PASSWORD_MIN && length <= PASSWORD_MAX;
}

/** The IANA time zones this runtime knows (and UTC), for a hotel's "today". */
const TIME_ZONES: readonly string[] = [...new Set(['UTC', ...Intl.supportedValuesOf('timeZone')])].sort();
const ZONES = new Set(TIME_ZONES);

export function isTimeZone(name: string): boolean {
  return ZONES.has(name);
}

export const TIME_ZONE_RULE = 'an IANA time zone name such as "Europe/Berlin" or "America/New_York"';
