import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { fieldError, type FieldError } from '../errors.js';
import { normalise } from '../http/client-address.js';

// docs/pms-interface.md, "Keys and authentication": what a key pair may do. The networks
// it may be used from (none listed: any), the last day it works (UTC, inclusive; none:
// until revoked) and whether it may only read.

export interface KeyRestrictions {
  networks: string[] | null;
  expiresOn: string | null;
  readOnly: boolean;
}

/** What a change sets; an absent member keeps the pair's value. */
export type RestrictionChanges = Partial<KeyRestrictions>;

export const NO_RESTRICTIONS: KeyRestrictions = { networks: null, expiresOn: null, readOnly: false };

/** At most this many networks per pair. */
const MAX_NETWORKS = 50;

const NETWORK_EXAMPLE = 'an IPv4 or IPv6 network in CIDR notation such as 203.0.113.0/24 or 2001:db8::/32';

/** The network in its one stored form (its network address and prefix length), or null when `text` is not one. */
function canonicalNetwork(text: string): string | null {
  const [address = '', bits, ...rest] = text.trim().split('/');
  const family = net.isIP(address);
  if (family === 0 || rest.length > 0 || bits === undefined || !/^\d{1,3}$/.test(bits)) return null;
  const prefix = Number(bits);
  if (prefix > (family === 4 ? 32 : 128)) return null;
  const cidr = `${address}/${prefix}`;
  const first = family === 4 ? ipaddr.IPv4.networkAddressFromCIDR(cidr) : ipaddr.IPv6.networkAddressFromCIDR(cidr);
  return `${first.toString()}/${prefix}`;
}

/** The list checked and in stored form; an empty list is null (any address). */
function checkNetworks(list: string[]): { networks: string[] | null; errors: FieldError[] } {
  const errors: FieldError[] = [];
  if (list.length > MAX_NETWORKS)
    errors.push(fieldError('networks', 'TOO_MANY', `List at most ${MAX_NETWORKS} networks: join neighbouring ones into a wider block.`));
  const networks: string[] = [];
  for (const text of list) {
    const canonical = canonicalNetwork(text);
    if (canonical === null) errors.push(fieldError('networks', 'INVALID_FORMAT', `"${text.slice(0, 60)}" is not a network: write ${NETWORK_EXAMPLE}.`));
    else if (!networks.includes(canonical)) networks.push(canonical);
  }
  return { networks: networks.length === 0 ? null : networks, errors };
}

/** Today's date, UTC. */
const todayUtc = (): string => new Date().toISOString().slice(0, 10);

function checkExpiry(date: string): FieldError[] {
  const time = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : NaN;
  const real = !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === date;
  if (!real)
    return [
      fieldError('expiresOn', 'INVALID_DATE_FORMAT', `"${date.slice(0, 40)}" is not a date: write the last day the keys work as YYYY-MM-DD, e.g. 2027-06-30.`),
    ];
  if (date < todayUtc()) return [fieldError('expiresOn', 'OUT_OF_RANGE', `${date} has passed: choose today or a later day, or revoke the key pair instead.`)];
  return [];
}

/** The changes checked and in stored form (networks canonical, none listed as null), or every problem found. */
export function checkRestrictionChanges(c: RestrictionChanges): { ok: true; changes: RestrictionChanges } | { ok: false; errors: FieldError[] } {
  const changes: RestrictionChanges = { ...c };
  const errors: FieldError[] = [];
  if (c.networks) {
    const checked = checkNetworks(c.networks);
    changes.networks = checked.networks;
    errors.push(...checked.errors);
  }
  if (typeof c.expiresOn === 'string') errors.push(...checkExpiry(c.expiresOn));
  return errors.length === 0 ? { ok: true, changes } : { ok: false, errors };
}

/** True when the pair's last day has passed (UTC). */
export function hasExpired(expiresOn: string | null): boolean {
  return expiresOn !== null && expiresOn < todayUtc();
}

/** True when `address` (the client as TRUST_PROXY defines it) is inside one of `networks`, or none are set. */
export function allowedFrom(networks: string[] | null, address: string | undefined): boolean {
  if (networks === null) return true;
  if (address === undefined) return false;
  const bare = normalise(address).split('%')[0] ?? '';
  if (!ipaddr.isValid(bare)) return false;
  const ip = ipaddr.parse(bare);
  return networks.some((n) => {
    const range = ipaddr.parseCIDR(n);
    return range[0].kind() === ip.kind() && ip.match(range);
  });
}
