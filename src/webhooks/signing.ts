import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A new signing secret: `whsec_` and 32 random bytes in base64 (Standard Webhooks). */
export function newSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64')}`;
}

/** One `v1,<signature>` of the Standard Webhooks scheme: HMAC-SHA256 of `id.timestamp.body` under the secret's bytes, in base64. */
function signOnce(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The three headers of a signed delivery. `webhook-id` is the event's id, the same on
 * every retry, so a receiver can tell a repeat; during a secret rotation each secret
 * signs, space-separated, and a receiver holding either verifies.
 */
export function signedHeaders(secrets: string[], id: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signOnce(s, id, timestamp, body)).join(' '),
  };
}
