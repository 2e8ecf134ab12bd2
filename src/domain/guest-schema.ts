import { Type, type Static, type TSchema } from '@sinclair/typebox';

// docs/pms-interface.md, "Guest fields". The one definition of a guest's fields: each field's
// TypeBox schema gives validation, types and the OpenAPI document; the PMS API's
// check-in, update and sync item, the dashboard's walk-in and edit forms (and the
// browser's field rules served from them), the domain's GuestData and the answers'
// guest object are all composed from it.

/** docs/pms-interface.md, "Guest fields": a room number is 1-20 characters once trimmed (the route schema cannot say "after trimming"; refineGuestFields does). */
export const ROOM_NUMBER_MAX = 20;

/**
 * The white space String.prototype.trim removes, less the control and format characters
 * (refused anyway; U+FEFF is a format character).
 */
const TRIMMED_SPACE = '\\u0020\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000';
/**
 * Characters no identifier may hold (docs/identifiers.md): control characters, and format
 * characters (Unicode category Cf: zero-width spaces and joiners, the soft hyphen, direction
 * marks and overrides), which are invisible and would make "311" and "311\u200b" two rooms.
 */
const CONTROL = '\\u0000-\\u001F\\u007F-\\u009F\\p{Cf}';
/** An identifier's characters: no control or format characters. */
const IDENTIFIER_CHARS = `^[^${CONTROL}]*$`;

/**
 * The room number rule as one pattern, for the OpenAPI document: no control or format
 * characters and 1-20 characters (code points) between the white space a trim removes. The
 * service checks the same in two steps (IDENTIFIER_CHARS here, the length in
 * refineGuestFields), which name the broken rule in the 422. The service counts the length
 * of the normalised form (NFKC, docs/identifiers.md), which is the same length for every
 * room number but those holding a character NFKC spells with several (such as "㎡").
 */
export const ROOM_NUMBER_PATTERN = `^[${TRIMMED_SPACE}]*[^${CONTROL}${TRIMMED_SPACE}](?:[^${CONTROL}]{0,${ROOM_NUMBER_MAX - 2}}[^${CONTROL}${TRIMMED_SPACE}])?[${TRIMMED_SPACE}]*$`;

/** `T` or `null`: optional fields may be sent as null (null clears; docs/pms-interface.md, "Guest fields"); the dashboard's answers' nullable members too. */
export function nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

/** A field a stay may lack: a request may leave it out (absent keeps) or send null (null clears); stored, it is null. */
function optional<T extends TSchema>(schema: T) {
  return Type.Optional(nullable(schema));
}

/** The PMS's own identifier for a guest; with a stay's fields it makes the check-in field set (docs/pms-interface.md, "Guest fields"). */
export const PmsGuestId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: IDENTIFIER_CHARS,
  description:
    'The PMS\'s own identifier for the guest: 1-128 characters, no control or format characters (such as zero-width spaces or direction marks). Compared and stored in Unicode\'s NFKC form, so full-width "Ｇ-１" is "G-1".',
});

/**
 * A new stay's fields as a request sends them (check-in, sync item, walk-in), each once, in
 * the order of docs/pms-interface.md, "Guest fields", which is the order of answers and
 * change sets too. Every other shape of a guest's data is derived from this one, so a new
 * field is one line here (and a column).
 */
export const NewGuestDataSchema = Type.Object({
  firstName: optional(Type.String({ minLength: 1, maxLength: 100, description: '1-100 characters. An empty string is not "absent".' })),
  lastName: Type.String({ minLength: 1, maxLength: 100, description: '1-100 characters.' }),
  phone: optional(Type.String({ pattern: '^\\+[1-9][0-9]{1,14}$', description: 'E.164: "+" then 2-15 digits, the first not 0.' })),
  roomNumber: Type.String({
    pattern: IDENTIFIER_CHARS,
    description: `Room number, 1-${ROOM_NUMBER_MAX} characters after trimming (" 305 " is stored as "305"; blanks only are refused), no control or format characters (such as zero-width spaces or direction marks). Compared and stored in Unicode's NFKC form, so full-width "３１１" is "311" and a decomposed "é" is "é". A room holds at most one active guest.`,
  }),
  checkInDate: Type.String({ format: 'date', description: 'YYYY-MM-DD, a real calendar date.' }),
  checkOutDate: Type.String({ format: 'date', description: 'YYYY-MM-DD, a real calendar date, not before checkInDate.' }),
  language: optional(Type.String({ format: 'iso-639-1', description: 'An assigned ISO 639-1 code in lower case ("en", "de").' })),
  adults: optional(Type.Integer({ minimum: 0, maximum: 99, description: 'Integer 0-99.' })),
  children: optional(Type.Integer({ minimum: 0, maximum: 99, description: 'Integer 0-99.' })),
  nationality: optional(Type.String({ format: 'iso-3166-1-alpha-2', description: 'An assigned ISO 3166-1 alpha-2 code in upper case ("DE", "US").' })),
  email: optional(Type.String({ format: 'email', maxLength: 254, description: 'E-mail address, at most 254 characters.' })),
});

/** A change to a stay (update, staff edit): every field may be absent; absent keeps, null clears (docs/pms-interface.md, "Guest fields"). */
export const GuestPatchSchema = Type.Partial(NewGuestDataSchema);

/** A stay's data as stored and answered: every field present, the optional ones null when unknown. */
export const GuestDataSchema = Type.Required(NewGuestDataSchema);
