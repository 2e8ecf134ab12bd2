import type { TObject } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { GuestPatchBody, WalkInBody } from '../../src/dashboard/schemas.js';
import { GUEST_DATA_FIELDS } from '../../src/domain/guest.js';
import { GuestDataSchema } from '../../src/domain/guest-schema.js';
import { GuestInput, GuestObject, SyncInput, UpdateInput } from '../../src/pms/schemas.js';

// A guest's fields are defined once (domain/guest-schema.ts); every request and
// answer that carries them is composed from that definition, so they cannot drift apart.

/** A schema as JSON: what Ajv and the OpenAPI document see (TypeBox's symbols left out). */
const json = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as unknown;
const REQUIRED = ['lastName', 'roomNumber', 'checkInDate', 'checkOutDate'];

describe('the one definition of a guest’s fields', () => {
  it('lists the 11 data fields in their documented order, the order of answers and change sets', () => {
    expect(GUEST_DATA_FIELDS).toEqual([
      'firstName',
      'lastName',
      'phone',
      'roomNumber',
      'checkInDate',
      'checkOutDate',
      'language',
      'adults',
      'children',
      'nationality',
      'email',
    ]);
  });

  it('stored and answered, every field is present; exactly the optional ones may be null', () => {
    expect(GuestDataSchema.required).toEqual(GUEST_DATA_FIELDS);
    for (const f of GUEST_DATA_FIELDS) expect([GuestDataSchema.properties[f].type].flat().includes('null'), f).toBe(!REQUIRED.includes(f));
    for (const f of GUEST_DATA_FIELDS) expect(json(GuestObject.properties[f]), f).toEqual(json(GuestDataSchema.properties[f]));
  });

  const bodies: [string, TObject, string[], string[]][] = [
    ['check-in', GuestInput, ['pmsGuestId'], ['pmsGuestId', ...REQUIRED]],
    ['sync item', SyncInput.properties.guests.items, ['pmsGuestId'], ['pmsGuestId', ...REQUIRED]],
    ['update', UpdateInput, ['pmsGuestId'], ['pmsGuestId']],
    ['walk-in', WalkInBody, [], REQUIRED],
    ['staff edit', GuestPatchBody, [], []],
  ];
  it.each(bodies)('the %s body carries every field with the same rule, and refuses unknown members', (_, body, extra, required) => {
    expect(Object.keys(body.properties)).toEqual([...extra, ...GUEST_DATA_FIELDS]);
    for (const f of GUEST_DATA_FIELDS) expect(json(body.properties[f]), f).toEqual(json(GuestDataSchema.properties[f]));
    expect(body.required ?? []).toEqual(required);
    expect(body.additionalProperties).toBe(false);
  });
});
