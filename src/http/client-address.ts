import net from 'node:net';

/** `::ffff:10.0.0.1` is 10.0.0.1 (an IPv4 client of a dual-stack listener). */
export function normalise(address: string): string {
  return address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/**
 * The unit every per-address count uses (connection cap, per-IP rate limits, failed
 * logins, security log lines): an IPv4 address, or an IPv6 address's /64
 * (`2001:db8:1:2::/64`): one IPv6 client usually holds a whole /64, and may use any of
 * its addresses.
 */
export function clientKey(address: string | undefined): string {
  // Fastify's req.ip once the socket is gone.
  if (address === undefined) return 'unknown';
  const ip = normalise(address);
  if (!net.isIPv6(ip)) return ip;
  // A zone (`fe80::1%eth0`) does not change the subnet.
  const [head = '', tail] = (ip.split('%')[0] ?? '').split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '').toLowerCase())
    .join(':')}::/64`;
}
