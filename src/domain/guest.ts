import type { Static } from '@sinclair/typebox';
import { fieldError, type FieldError } from '../errors.js';
import { GuestDataSchema, GuestPatchSchema, NewGuestDataSchema, ROOM_NUMBER_MAX } from './guest-schema.js';

// The domain's types are the schema's (guest-schema.ts): what validation lets through is what they say.

/** A stay's data: the guest's 11 fields besides `pmsGuestId` (docs/pms-interface.md, "Guest fields"). */
export type GuestData = Static<typeof GuestDataSchema>;

/** A new stay as submitted (check-in, sync item, walk-in): the required fields, the others absent or null. */
export type NewGuestData = Static<typeof NewGuestDataSchema>;

export type GuestDataField = keyof GuestData;

/** The 11 data fields, in the order answers and change sets list them. */
export const GUEST_DATA_FIELDS = Object.keys(GuestDataSchema.properties) as GuestDataField[];

/** A submitted partial change: absent keeps the stored value, `null` clears it (docs/pms-interface.md, "Guest fields"). */
export type GuestPatch = Static<typeof GuestPatchSchema>;

interface FieldChange {
  from: unknown;
  to: unknown;
}

/** docs/pms-interface.md, "Update and room moves": one member per modified field, `{from, to}`; empty when nothing changed. */
export type ChangeSet = Partial<Record<GuestDataField, FieldChange>>;

export type GuestSource = 'pms' | 'receptionist';

/**
 * An identifier (pmsGuestId, roomNumber) in the one form it is compared and stored in
 * (docs/identifiers.md): Unicode's NFKC, so a compatibility form is its plain character
 * (full-width "３１１" is "311") and a decomposed "é" is the composed one.
 */
export function normalizeIdentifier(raw: string): string {
  return raw.normalize('NFKC');
}

/** A room number in its stored form: normalised, then trimmed (`" 305 "` is `"305"`; docs/identifiers.md). */
export function normalizeRoomNumber(raw: string): string {
  return normalizeIdentifier(raw).trim();
}

/** Control and format characters, which the schemas refuse in identifiers (guest-schema.ts IDENTIFIER_CHARS). */
const REFUSED_IN_IDENTIFIERS = /[\u0000-\u001f\u007f-\u009f\p{Cf}]/u;

/** pmsGuestId's length limit, for the normalised form too (a few characters spell as several in NFKC). */
const PMS_GUEST_ID_MAX = 128;

/** The rule the schema cannot say of a pmsGuestId: at most 128 characters in its normalised form. */
export function refinePmsGuestId(input: Record<string, unknown>, prefix = ''): FieldError[] {
  const id = input.pmsGuestId;
  if (typeof id !== 'string' || REFUSED_IN_IDENTIFIERS.test(id) || [...id].length > PMS_GUEST_ID_MAX) return [];
  if ([...normalizeIdentifier(id)].length <= PMS_GUEST_ID_MAX) return [];
  return [
    fieldError(
      `${prefix}pmsGuestId`,
      'TOO_LONG',
      `pmsGuestId must be at most ${PMS_GUEST_ID_MAX} characters in Unicode's NFKC form, which spells some characters with several.`,
    ),
  ];
}

/**
 * Rules a JSON schema cannot say, checked after the schema: the trimmed room number
 * and checkOutDate not before checkInDate. `prefix` names
 * the field's place (`guests[3].`). `stored` gives the dates an update does not send.
 */
export function refineGuestFields(input: Record<string, unknown>, prefix = '', stored?: Pick<GuestData, 'checkInDate' | 'checkOutDate'>): FieldError[] {
  const errors: FieldError[] = refinePmsGuestId(input, prefix);
  const room = input.roomNumber;
  if (typeof room === 'string' && !REFUSED_IN_IDENTIFIERS.test(room)) {
    const trimmed = normalizeRoomNumber(room);
    if (trimmed.length === 0) {
      errors.push(fieldError(`${prefix}roomNumber`, 'TOO_SHORT', 'roomNumber must not be blank.'));
    } else if ([...trimmed].length > ROOM_NUMBER_MAX) {
      // Characters are counted as JSON Schema counts them (code points), so the OpenAPI document's pattern says the same.
      errors.push(fieldError(`${prefix}roomNumber`, 'TOO_LONG', `roomNumber must be at most ${ROOM_NUMBER_MAX} characters after trimming.`));
    }
  }
  const checkIn = input.checkInDate === undefined ? stored?.checkInDate : input.checkInDate;
  const checkOut = input.checkOutDate === undefined ? stored?.checkOutDate : input.checkOutDate;
  if (typeof checkIn === 'string' && typeof checkOut === 'string' && isCalendarDate(checkIn) && isCalendarDate(checkOut) && checkOut < checkIn) {
    errors.push(fieldError(`${prefix}checkOutDate`, 'DATE_ORDER', `checkOutDate ${checkOut} is before checkInDate ${checkIn}.`));
  }
  return errors;
}

/** docs/pms-interface.md, "Guest fields": `YYYY-MM-DD`, a real calendar date (`2026-02-30` is invalid). */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

/**
 * The fields of `patch` whose value differs from `stored`. Absent fields are not compared
 * (docs/pms-interface.md, "Guest fields": absent keeps the stored value). `from` is null
 * when unset.
 */
export function diffGuest(stored: GuestData, patch: GuestPatch): ChangeSet {
  const changes: ChangeSet = {};
  for (const field of GUEST_DATA_FIELDS) {
    if (!(field in patch)) continue;
    const raw = patch[field];
    if (raw === undefined) continue;
    const to = field === 'roomNumber' && typeof raw === 'string' ? normalizeRoomNumber(raw) : raw;
    const from = stored[field];
    if (from !== to) changes[field] = { from: from ?? null, to };
  }
  return changes;
}

/** The stored guest after applying a change set. */
export function applyChanges(stored: GuestData, changes: ChangeSet): GuestData {
  const next: Record<string, unknown> = { ...stored };
  for (const [field, change] of Object.entries(changes)) next[field] = change.to;
  return next as unknown as GuestData;
}

/** Full data of a new stay from a validated check-in body; optional absent fields become null. */
export function guestDataFromCheckin(body: NewGuestData): GuestData {
  // One object literal, in GUEST_DATA_FIELDS' order (a sync builds 20,000 of these; a copy
  // through Object.fromEntries and a spread costs V8 many times more).
  return {
    firstName: body.firstName ?? null,
    lastName: body.lastName,
    phone: body.phone ?? null,
    roomNumber: normalizeRoomNumber(body.roomNumber),
    checkInDate: body.checkInDate,
    checkOutDate: body.checkOutDate,
    language: body.language ?? null,
    adults: body.adults ?? null,
    children: body.children ?? null,
    nationality: body.nationality ?? null,
    email: body.email ?? null,
  };
}

/** Natural order of room numbers (docs/pms-interface.md, "Guest list": `2` before `10`). */
export const compareRoomNumbers = new Intl.Collator('en', { numeric: true, sensitivity: 'base' }).compare;
