import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Agent } from 'undici';
import type { Target } from './dashboard-client.js';

// Clients at chosen source addresses. Loopback is all of 127.0.0.0/8, so IPv4 clients need
// nothing; IPv6 loopback is ::1 alone, so IPv6 tests add addresses of a random private /64
// (fd5e:…) to `lo` for the file's run and remove them after (root only).

/** An HTTPS client of `server` (a started server's data directory and port) whose connections come from `localAddress`. */
export function targetFrom(server: { dataDir: string; httpsPort: number }, localAddress: string, host = '127.0.0.1'): Target & { close(): Promise<void> } {
  const ca = fs.readFileSync(path.join(server.dataDir, 'tls', 'cert.pem'), 'utf8');
  // undici takes the source address as a client option (inside `connect` it is overridden).
  const agent = new Agent({ localAddress, connect: { ca, servername: 'localhost' } });
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return { baseUrl: `https://${hostPart}:${server.httpsPort}`, agent, close: () => agent.close() };
}

const randomGroup = (): string => Math.floor(Math.random() * 0x10000).toString(16);

export interface Ipv6Lab {
  /** Two addresses of one /64. */
  sameA: string;
  sameB: string;
  /** An address of the next /64. */
  other: string;
  remove(): void;
}

/**
 * Adds three IPv6 addresses to `lo`: two in one random private /64, one in the next /64.
 * Null (with the reason) when this process may not (not root, no `ip`, IPv6 off).
 */
export function addIpv6Lab(): { lab: Ipv6Lab | null; reason: string } {
  if (process.getuid?.() !== 0) return { lab: null, reason: 'adding IPv6 addresses to lo needs root' };
  const prefix = `fd5e:${randomGroup()}:${randomGroup()}`;
  const subnet = Math.floor(Math.random() * 0xfffe);
  const lab = {
    sameA: `${prefix}:${subnet.toString(16)}::a`,
    sameB: `${prefix}:${subnet.toString(16)}::b`,
    other: `${prefix}:${(subnet + 1).toString(16)}::a`,
  };
  const added: string[] = [];
  const remove = (): void => {
    for (const address of added.splice(0)) {
      try {
        execFileSync('ip', ['-6', 'addr', 'del', `${address}/128`, 'dev', 'lo'], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    }
  };
  try {
    for (const address of Object.values(lab)) {
      execFileSync('ip', ['-6', 'addr', 'add', `${address}/128`, 'dev', 'lo', 'nodad'], { stdio: 'pipe' });
      added.push(address);
    }
  } catch (err) {
    remove();
    return { lab: null, reason: `could not add IPv6 addresses to lo: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}` };
  }
  return { lab: { ...lab, remove }, reason: '' };
}
