import dns from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * Whether `address` (IPv4 or IPv6, with or without brackets) is a public unicast address a
 * webhook may reach without WEBHOOK_ALLOW_PRIVATE_NETWORKS. One classification, used when
 * an endpoint is stored and when a delivery connects: ipaddr.js's ranges, where only
 * `unicast` passes. An IPv4 address embedded in IPv6 (IPv4-mapped `::ffff:a.b.c.d`) is
 * judged as that IPv4 address; the other embeddings (6to4, NAT64, Teredo, the IPv4
 * translated form) are their own ranges and refused, and IPv6 must be global unicast
 * (2000::/3), which also refuses the deprecated IPv4-compatible form `::a.b.c.d`.
 */
function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(bare)) return false;
  let ip = ipaddr.parse(bare);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (ip.range() !== 'unicast') return false;
  return ip.kind() === 'ipv4' || ip.match(GLOBAL_UNICAST_V6);
}

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** Whether `host` (a URL's hostname) is an IP address literal rather than a name. */
function isAddressLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[(.*)\]$/, '$1')) && (host.startsWith('[') || ipaddr.IPv4.isValidFourPartDecimal(host));
}

/** Ports a webhook may use without WEBHOOK_ALLOW_PRIVATE_NETWORKS: HTTPS's own, and its common alternative. */
export const PUBLIC_PORTS: readonly number[] = [443, 8443];

/** A URL's port as a number (the scheme's default when it names none). */
function portOf(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'http:' ? 80 : 443;
}

/**
 * Why a delivery to `url` may not be sent, or null: without WEBHOOK_ALLOW_PRIVATE_NETWORKS,
 * `https://`, no address literal outside the public internet, and a port of PUBLIC_PORTS.
 * Checked when an endpoint is stored and when each delivery connects; a name is checked
 * then by guardedLookup, against the addresses it resolves to.
 */
export function refusedTarget(url: URL, allowPrivate: boolean): 'scheme' | 'port' | 'address' | null {
  if (allowPrivate) return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'scheme';
  if (url.protocol !== 'https:') return 'scheme';
  if (isAddressLiteral(url.hostname) && !isPublicAddress(url.hostname)) return 'address';
  if (!PUBLIC_PORTS.includes(portOf(url))) return 'port';
  return null;
}

/** `localhost` and its subdomains name this host, with or without the root's trailing dot. */
function isLocalName(host: string): boolean {
  const name = host.replace(/\.+$/, '').toLowerCase();
  return name === '' || name === 'localhost' || name.endsWith('.localhost');
}

export class EndpointUrlError extends Error {}

/**
 * An endpoint URL as stored: `https://` (plain `http://` only where private networks are
 * allowed), no user name or password, at most 2,000 characters, port 443 or 8443, and no
 * literal address or local name outside the public internet unless allowed. Names are
 * checked again at each delivery, against the addresses they resolve to then.
 */
export function checkEndpointUrl(raw: string, allowPrivate: boolean): string {
  if (raw.length > 2000) throw new EndpointUrlError('The URL must be at most 2,000 characters.');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EndpointUrlError('The URL is not a valid absolute URL; use https://host/path.');
  }
  if (url.username || url.password) throw new EndpointUrlError('The URL must not carry a user name or password; authenticate the signature instead.');
  switch (!allowPrivate && isLocalName(url.hostname) ? 'address' : refusedTarget(url, allowPrivate)) {
    case 'scheme':
      throw new EndpointUrlError(
        allowPrivate
          ? 'The URL must start with https:// or http://.'
          : 'The URL must start with https:// (plain http:// needs WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).',
      );
    case 'port':
      throw new EndpointUrlError(
        `The URL must use port ${PUBLIC_PORTS.join(' or ')} (leave the port out for 443); other ports need WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.`,
      );
    case 'address':
      throw new EndpointUrlError('The URL points into a private or local network; use a public address (or set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true).');
    case null:
      break;
  }
  url.hash = '';
  return url.toString();
}

/**
 * Whether `raw` is refused only because private networks are not allowed: it passes with
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (a plain http:// URL, another port, a private or
 * loopback address or a local name).
 */
export function needsPrivateNetworks(raw: string): boolean {
  const passes = (allowPrivate: boolean): boolean => {
    try {
      checkEndpointUrl(raw.trim(), allowPrivate);
      return true;
    } catch (err) {
      if (err instanceof EndpointUrlError) return false;
      throw err;
    }
  };
  return !passes(false) && passes(true);
}

/** What a hotel's admin reads when a delivery's address is refused; the operator's log has the detail. */
export const ADDRESS_REFUSED = 'the address is not allowed';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that resolves the name, refuses it when any of its
 * addresses is not public (unless allowed), and hands the connection the addresses it
 * checked: what was checked is what is connected to (no second resolution to rebind).
 * A refusal's error says only ADDRESS_REFUSED; `detail` (the name and the address it
 * resolved to) is for the operator's log.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = allowPrivate ? [] : addresses.filter((a) => !isPublicAddress(a.address));
      if (refused.length > 0 || addresses.length === 0) {
        const e: NodeJS.ErrnoException & { detail?: string } = new Error(ADDRESS_REFUSED);
        e.code = 'EWEBHOOKADDRESS';
        e.detail = `${hostname} resolves to ${refused[0]?.address ?? 'no address'}, which is not on the public internet`;
        return callback(e, []);
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as dns.LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
