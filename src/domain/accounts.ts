// The rules of hotels and staff accounts, one copy for the dashboard's schemas and the
// command line alike (operations.md: slugs; docs/dashboard.md: setup and users).

/** operations.md: 2-63 characters of a-z, 0-9 and -, starting with a letter. */
export const SLUG_PATTERN = '^[a-z][a-z0-9-]{1,62}$';
export const SLUG_RULE = '2-63 characters of a-z, 0-9 and "-", starting with a letter';
export const HOTEL_NAME_MAX = 100;
export const EMAIL_MAX = 254;
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;
