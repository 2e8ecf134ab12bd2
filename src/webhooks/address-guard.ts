import dns from 'node:dns';
import net from 'node:net';

/** Addresses a webhook may not reach unless the operator allows it (WEBHOOK_ALLOW_PRIVATE_NETWORKS): this host, its networks, and addresses that are not unicast on the internet. */
const NOT_PUBLIC = new net.BlockList();
for (const [range, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(range, prefix, 'ipv4');
for (const [range, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(range, prefix, 'ipv6');

/** Whether `address` (IPv4, IPv6, or IPv4 mapped into IPv6) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return !NOT_PUBLIC.check(mapped[1], 'ipv4');
  const family = net.isIP(address);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export class EndpointUrlError extends Error {}

/**
 * An endpoint URL as stored: `https://` (plain `http://` only where private networks are
 * allowed), no user name or password, at most 2,000 characters, and no literal address
 * outside the public internet unless allowed. Names are checked again at each delivery,
 * against the addresses they resolve to then.
 */
export function checkEndpointUrl(raw: string, allowPrivate: boolean): string {
  if (raw.length > 2000) throw new EndpointUrlError('The URL must be at most 2,000 characters.');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EndpointUrlError('The URL is not a valid absolute URL; use https://host/path.');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:'))
    throw new EndpointUrlError(
      allowPrivate
        ? 'The URL must start with https:// or http://.'
        : 'The URL must start with https:// (plain http:// needs WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).',
    );
  if (url.username || url.password) throw new EndpointUrlError('The URL must not carry a user name or password; authenticate the signature instead.');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!allowPrivate && (net.isIP(host) !== 0 ? !isPublicAddress(host) : host === 'localhost' || host.endsWith('.localhost')))
    throw new EndpointUrlError('The URL points into a private or local network; use a public address (or set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).');
  url.hash = '';
  return url.toString();
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that resolves the name, refuses it when any of its
 * addresses is not public (unless allowed), and hands the connection the addresses it
 * checked: what was checked is what is connected to (no second resolution to rebind).
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = allowPrivate ? [] : addresses.filter((a) => !isPublicAddress(a.address));
      if (refused.length > 0 || addresses.length === 0) {
        const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${refused[0]?.address ?? 'no address'}, which is not on the public internet`);
        e.code = 'EWEBHOOKADDRESS';
        return callback(e, []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as dns.LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
