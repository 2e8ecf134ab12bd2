import { Type, type Static, type TSchema } from '@sinclair/typebox';

// decisions.md: Guest fields. The one definition of a guest's fields: each field's
// TypeBox schema gives validation, types and the OpenAPI document; the PMS API's
// check-in, update and sync item, the dashboard's walk-in and edit forms (and the
// browser's field rules served from them), the domain's GuestData and the answers'
// guest object are all composed from it.

const NO_CONTROL_CHARS = '^[^\\u0000-\\u001F\\u007F-\\u009F]*$';

/** decisions.md: a room number is 1-20 characters once trimmed (the schema cannot say "after trimming"; refineGuestFields does). */
export const ROOM_NUMBER_MAX = 20;

/** `T` or `null`: decisions.md lets optional fields be sent as null (null clears). */
export function nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

/** Each field of a guest, once. */
export const Fields = {
  pmsGuestId: Type.String({
    minLength: 1,
    maxLength: 128,
    pattern: NO_CONTROL_CHARS,
    description: "The PMS's own identifier for the guest: 1-128 characters, no control characters.",
  }),
  roomNumber: Type.String({
    pattern: NO_CONTROL_CHARS,
    description: `Room number, 1-${ROOM_NUMBER_MAX} characters after trimming (" 305 " is stored as "305"; blanks only are refused), no control characters. A room holds at most one active guest.`,
  }),
  lastName: Type.String({ minLength: 1, maxLength: 100, description: '1-100 characters.' }),
  firstName: Type.String({ minLength: 1, maxLength: 100, description: '1-100 characters. An empty string is not "absent".' }),
  checkInDate: Type.String({ format: 'date', description: 'YYYY-MM-DD, a real calendar date.' }),
  checkOutDate: Type.String({ format: 'date', description: 'YYYY-MM-DD, a real calendar date, not before checkInDate.' }),
  phone: Type.String({ pattern: '^\\+[1-9][0-9]{1,14}$', description: 'E.164: "+" then 2-15 digits, the first not 0.' }),
  email: Type.String({ format: 'email', maxLength: 254, description: 'E-mail address, at most 254 characters.' }),
  language: Type.String({ format: 'iso-639-1', description: 'An assigned ISO 639-1 code in lower case ("en", "de").' }),
  nationality: Type.String({ format: 'iso-3166-1-alpha-2', description: 'An assigned ISO 3166-1 alpha-2 code in upper case ("DE", "US").' }),
  adults: Type.Integer({ minimum: 0, maximum: 99, description: 'Integer 0-99.' }),
  children: Type.Integer({ minimum: 0, maximum: 99, description: 'Integer 0-99.' }),
};

/** The fields every stay has. */
export const requiredGuestFields = {
  lastName: Fields.lastName,
  roomNumber: Fields.roomNumber,
  checkInDate: Fields.checkInDate,
  checkOutDate: Fields.checkOutDate,
};

/** The optional fields as a request sends them: absent keeps, null clears (decisions.md). */
export const optionalGuestFields = {
  firstName: Type.Optional(nullable(Fields.firstName)),
  phone: Type.Optional(nullable(Fields.phone)),
  email: Type.Optional(nullable(Fields.email)),
  language: Type.Optional(nullable(Fields.language)),
  nationality: Type.Optional(nullable(Fields.nationality)),
  adults: Type.Optional(nullable(Fields.adults)),
  children: Type.Optional(nullable(Fields.children)),
};

/** The required fields, each optional: a partial update. */
export const partialRequiredGuestFields = {
  lastName: Type.Optional(Fields.lastName),
  roomNumber: Type.Optional(Fields.roomNumber),
  checkInDate: Type.Optional(Fields.checkInDate),
  checkOutDate: Type.Optional(Fields.checkOutDate),
};

/**
 * A stay's data as stored and answered: every field present, the optional ones null when
 * unknown. The order of the members is the order of a guest's fields everywhere (answers,
 * change sets).
 */
export const GuestDataSchema = Type.Object({
  firstName: nullable(Fields.firstName),
  lastName: Fields.lastName,
  phone: nullable(Fields.phone),
  roomNumber: Fields.roomNumber,
  checkInDate: Fields.checkInDate,
  checkOutDate: Fields.checkOutDate,
  language: nullable(Fields.language),
  adults: nullable(Fields.adults),
  children: nullable(Fields.children),
  nationality: nullable(Fields.nationality),
  email: nullable(Fields.email),
});
