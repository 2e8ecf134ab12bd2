import net from 'node:net';

/** A Host header: a name or IPv4 address, or a bracketed IPv6 address, and an optional port. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i;
/** A DNS host name (RFC 1123 labels), which includes dotted IPv4 addresses. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

const isPlainHost = (host: string): boolean => (host.startsWith('[') ? net.isIPv6(host.slice(1, -1)) : HOST_NAME.test(host));

/**
 * Where a plain-HTTP request is sent on HTTPS: the same path and query on `httpsPort` of
 * the host the client named (its port dropped; none written for 443). Null when the Host
 * header is anything but a plain host name or address (user info, a path, a zone, an
 * empty or missing header) or the target is not a path: never a redirect elsewhere.
 */
export function httpsLocation(hostHeader: string | undefined, target: string, httpsPort: number): string | null {
  const host = HOST_HEADER.exec(hostHeader ?? '')?.[1];
  if (!host || !isPlainHost(host) || !target.startsWith('/') || target.startsWith('//')) return null;
  return `https://${host}${httpsPort === 443 ? '' : `:${httpsPort}`}${target}`;
}
