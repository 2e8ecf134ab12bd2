import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/** A random id of `length` base-36 characters (about 5.2 bits each). */
export function randomId(length = 20): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[(bytes[i] ?? 0) % 36];
  return out;
}

export const newId = (prefix: string, length = 20): string => `${prefix}_${randomId(length)}`;

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
