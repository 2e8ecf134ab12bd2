import fs from 'node:fs';
import https from 'node:https';
import tls from 'node:tls';
import path from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';
import { scaled } from '../support/test-run.js';

// Bodies over the limit (README.md, "Connections"): RFC 9112 §9.6. The 413 reaches a
// client that is still sending: the server answers, stops reading the request only after
// a bounded time and size, and closes. Common clients (undici, Node's https) then read
// the 413 instead of failing with EPIPE or ECONNRESET.

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
  { name: 'the sync', path: (t: TestServer) => `${t.pmsBase}/guests/sync` },
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
      expect((await t.api('GET', `${t.pmsBase}/guests`)).status).toBe(200);
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
          {
            host: '127.0.0.1',
            port: t.server.httpsPort,
            path: route.path(t),
            method: 'POST',
            headers: headersOf(t, SEVENTEEN_MIB),
            ca,
            servername: 'localhost',
            agent: false,
          },
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

  it.each([
    ['an object wider than 64 members', 422, 'VALIDATION_ERROR', `{${Array.from({ length: 100 }, (_, i) => `"m${i}":0`).join(',')},`],
    ['nesting deeper than 64 levels', 400, 'INVALID_JSON', '{"a":'.repeat(100)],
  ])('%s is refused as soon as it arrives, without waiting for the rest of a 1 MB body the client never sends', async (_name, status, code, prefix) => {
    const t = await startTestServer(engine);
    try {
      const ca = fs.readFileSync(path.join(t.config.dataDir, 'tls', 'cert.pem'), 'utf8');
      const socket = tls.connect({ host: '127.0.0.1', port: t.server.httpsPort, ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (text += c));
      const head = Object.entries(headersOf(t, 1_000_000))
        .map(([k, v]) => `${k}: ${v}`)
        .join('\r\n');
      socket.write(`POST /api/pms/v1/${t.slug}/guests/checkin HTTP/1.1\r\nHost: 127.0.0.1\r\n${head}\r\n\r\n${prefix}`);
      // The rest of the body never comes; the answer must (well before the 60 s request timeout).
      await expect.poll(() => text.includes('\r\n\r\n{'), { timeout: scaled(20_000) }).toBe(true);
      expect(text.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
      await expect
        .poll(() => {
          try {
            return (JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { code: string }).code;
          } catch {
            return null;
          }
        })
        .toBe(code);
      socket.destroy();
    } finally {
      await t.close();
    }
  });
});
