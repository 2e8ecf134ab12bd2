import { CliError } from '../errors.js';
import type { KeyRestrictions, RestrictionChanges } from '../keys/restrictions.js';

// The options of `innsync key issue` and `innsync key set` (README.md, "Operating it"): what a
// key pair may do, as the command line writes it.

export interface KeyRestrictionOptions {
  networks?: string;
  expires?: string;
  readOnly?: boolean;
  readWrite?: boolean;
}

/** The changes the options name (checked later, by the use case): `none` and `never` clear. */
export function restrictionChanges(o: KeyRestrictionOptions): RestrictionChanges {
  if (o.readOnly && o.readWrite) throw new CliError('INVALID_ARGUMENT', 'give --read-only or --read-write, not both');
  const changes: RestrictionChanges = {};
  if (o.networks !== undefined) {
    const list = o.networks
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    changes.networks = o.networks.trim().toLowerCase() === 'none' ? null : list;
  }
  if (o.expires !== undefined) changes.expiresOn = o.expires.trim().toLowerCase() === 'never' ? null : o.expires.trim();
  if (o.readOnly) changes.readOnly = true;
  if (o.readWrite) changes.readOnly = false;
  return changes;
}

/** What a pair may do, in a line's words: `networks any  expires never  read-write`. */
export function restrictionWords(r: KeyRestrictions): string {
  return `networks ${r.networks ? r.networks.join(',') : 'any'}  expires ${r.expiresOn ?? 'never'}  ${r.readOnly ? 'read-only' : 'read-write'}`;
}
