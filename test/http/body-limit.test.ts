import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';

// Issue 9, "Bodies over the limit": RFC 9112 §9.6. The 413 reaches a client that is still
// sending: the server answers, stops reading the request only after a bounded time and
// size, and closes. Common clients (undici, Node's https) then read the 413 instead of
// failing with EPIPE or ECONNRESET.

const SEVENTEEN_MIB = 17 * 1024 * 1024;
/** A JSON sync body of `size` bytes (valid JSON: the limit, not the parser, must refuse it). */
function syncBody(size: number): Buffer {
  const head = '{"syncMode":"full","guests":[],"pad":"';
  const tail = '"}';
  return Buffer.concat([Buffer.from(head), Buffer.alloc(size - head.length - tail.length, 'a'), Buffer.from(tail)]);
}

function headersOf(t: TestServer, length: number): Record<string, string> {
  return { authorization: `Bearer ${t.keys.live}`, 'content-type': 'application/json', 'content-length': String(length), 'idempotency-key': uniqueKey() };
}

/** The sync (16 MiB limit, with a key) and the dashboard login (4 KiB, no key). */
const routes = [
  { name: 'the sync', path: (t: TestServer) => `/api/pms/v1/${t.slug}/guests/sync` },
  { name: 'the dashboard login', path: () => '/dashboard/api/login' },
];

describe.each(testEngines())('bodies over the limit (%s)', (engine) => {
  it.each(routes)('undici sending 17 MiB to $name reads 413 PAYLOAD_TOO_LARGE, and the service still serves', async (route) => {
    const t = await startTestServer(engine);
    try {
      const body = syncBody(SEVENTEEN_MIB);
      const res = await request(`${t.baseUrl}${route.path(t)}`, { method: 'POST', headers: headersOf(t, body.length), body, dispatcher: t.agent });
      const answer = (await res.body.json()) as { code: string; requestId: string };
      expect(res.statusCode).toBe(413);
      expect(answer.code).toBe('PAYLOAD_TOO_LARGE');
      expect((await t.api('GET', `/api/pms/v1/${t.slug}/guests`)).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it.each(routes)("Node's https client sending 17 MiB to $name reads 413 PAYLOAD_TOO_LARGE (no EPIPE)", async (route) => {
    const t = await startTestServer(engine);
    try {
      const ca = fs.readFileSync(path.join(t.config.dataDir, 'tls', 'cert.pem'), 'utf8');
      // Settled when the request is over on both sides: an EPIPE or reset after the answer fails it too.
      const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        let answer: { status: number; body: string } | null = null;
        const req = https.request(
          { host: '127.0.0.1', port: t.server.httpsPort, path: route.path(t), method: 'POST', headers: headersOf(t, SEVENTEEN_MIB), ca, servername: 'localhost', agent: false },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => (answer = { status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.on('close', () => setTimeout(() => (answer ? resolve(answer) : reject(new Error('closed without an answer'))), 100));
        // One write of the whole body, as most code does it.
        req.end(syncBody(SEVENTEEN_MIB));
      });
      expect(result.status).toBe(413);
      expect(JSON.parse(result.body)).toMatchObject({ status: 'error', code: 'PAYLOAD_TOO_LARGE' });
    } finally {
      await t.close();
    }
  });
});
