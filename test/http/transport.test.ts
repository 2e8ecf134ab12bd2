import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import pino from 'pino';
import { generate } from 'selfsigned';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Engine } from '../../src/db/database.js';
import { createHotel, issueKeyPair } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import {
  createTestStorage,
  databaseEnv,
  guest,
  startTestServer,
  testEngines,
  uniqueKey,
  type ApiResponse,
  type TestServer,
  type TestStorage,
} from '../support/harness.js';
import { readResponse } from '../support/http-response.js';
import { expectRateLimitHeaders } from '../support/rate-limit-headers.js';
import { loggedRows } from '../support/request-log.js';

type Handshake = { ok: true; protocol: string | null; fingerprint256: string } | { ok: false; error: Error & { code?: string } };

/** One TLS handshake against 127.0.0.1:port; resolves with the outcome, never rejects. */
function handshake(port: number, opts: tls.ConnectionOptions): Promise<Handshake> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ...opts }, () => {
      const result: Handshake = { ok: true, protocol: socket.getProtocol(), fingerprint256: socket.getPeerCertificate().fingerprint256 };
      socket.end();
      resolve(result);
    });
    socket.once('error', (error) => {
      socket.destroy();
      resolve({ ok: false, error });
    });
  });
}

const TLS11_CLIENT: tls.ConnectionOptions = { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0', rejectUnauthorized: false };

const fingerprintOf = (pem: string): string => new X509Certificate(pem).fingerprint256;

/** A plain-HTTP request (no TLS) through `agent`, parsed like the harness's `api`. */
async function plain(agent: Agent, url: string, method = 'GET', headers: Record<string, string> = {}, body?: string): Promise<ApiResponse> {
  return readResponse(await request(url, { method: method as 'GET', headers, body, dispatcher: agent }));
}

/** The server started directly (for start-ups the harness does not cover: own certificate, a reused DATA_DIR). */
async function startRaw(engine: Engine, env: Record<string, string>, storage?: TestStorage): Promise<{ server: RunningServer } & TestStorage> {
  const s = storage ?? (await createTestStorage(engine));
  const config = loadConfig({
    PORT: '0',
    HTTP_PORT: 'off',
    HOST: '127.0.0.1',
    DATA_DIR: s.dataDir,
    ...databaseEnv(s),
    LOG_LEVEL: 'silent',
    ...env,
  });
  const server = await startServer(config, pino({ level: 'silent' }));
  return { server, ...s };
}

/** The request-log row of `requestId`, once the batched writer has written it. */
async function logRow(t: TestServer, requestId: string) {
  return (await loggedRows(t.server.database.db, [requestId])).get(requestId);
}

describe.each(testEngines())('transport (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  let cert: string;
  let key: string;
  const http = new Agent({ keepAliveTimeout: 1000 });
  beforeAll(async () => {
    t = await startTestServer(engine);
    base = `${t.pmsBase}`;
    cert = fs.readFileSync(path.join(t.config.dataDir, 'tls', 'cert.pem'), 'utf8');
    key = fs.readFileSync(path.join(t.config.dataDir, 'tls', 'key.pem'), 'utf8');
  });
  afterAll(async () => {
    await http.close();
    await t.close();
  });

  it('a TLS 1.1 handshake fails, while the same client completes one with a server that allows TLS 1.1 (control)', async () => {
    const refused = await handshake(t.server.httpsPort, TLS11_CLIENT);
    expect(refused.ok).toBe(false);
    // The server answered the TLS 1.1 ClientHello with a protocol_version alert (70).
    if (!refused.ok) expect(refused.error.code).toMatch(/PROTOCOL_VERSION/);

    // Control: the same client options, the same certificate, a server that still allows TLS 1.0/1.1.
    const legacy = tls.createServer({ key, cert, minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' }, (socket) => socket.end());
    await new Promise<void>((resolve) => legacy.listen(0, '127.0.0.1', () => resolve()));
    try {
      const port = (legacy.address() as { port: number }).port;
      const accepted = await handshake(port, TLS11_CLIENT);
      expect(accepted).toMatchObject({ ok: true, protocol: 'TLSv1.1' });
    } finally {
      await new Promise<void>((resolve) => legacy.close(() => resolve()));
    }
  });

  it('"Transport": TLS 1.2 offers only ECDHE key exchange with AEAD suites; static-RSA and CBC-SHA1 suites fail, while the same clients complete with a permissive server (control)', async () => {
    const tls12 = (ciphers: string): tls.ConnectionOptions => ({
      maxVersion: 'TLSv1.2',
      minVersion: 'TLSv1.2',
      ciphers: `${ciphers}:@SECLEVEL=0`,
      rejectUnauthorized: false,
    });
    const refusedSuites = ['AES128-GCM-SHA256', 'AES256-SHA', 'ECDHE-RSA-AES128-SHA', 'ECDHE-RSA-AES256-SHA384'];
    const permissive = tls.createServer({ key, cert, ciphers: 'ALL:@SECLEVEL=0' }, (socket) => socket.end());
    await new Promise<void>((resolve) => permissive.listen(0, '127.0.0.1', () => resolve()));
    try {
      const controlPort = (permissive.address() as { port: number }).port;
      for (const suite of refusedSuites) {
        expect((await handshake(t.server.httpsPort, tls12(suite))).ok, suite).toBe(false);
        expect((await handshake(controlPort, tls12(suite))).ok, `${suite} (control)`).toBe(true);
      }
    } finally {
      await new Promise<void>((resolve) => permissive.close(() => resolve()));
    }
    for (const suite of ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305']) {
      const cipher = await new Promise<string | Error>((resolve) => {
        const socket = tls.connect({ host: '127.0.0.1', port: t.server.httpsPort, servername: 'localhost', ...tls12(suite) }, () => {
          resolve(socket.getCipher().name);
          socket.end();
        });
        socket.once('error', (err) => resolve(err));
      });
      expect(cipher).toBe(suite);
    }
  });

  it('TLS 1.2 and TLS 1.3 handshakes succeed with the served certificate', async () => {
    for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
      const res = await handshake(t.server.httpsPort, { minVersion: version, maxVersion: version, ca: cert });
      expect(res).toMatchObject({ ok: true, protocol: version, fingerprint256: fingerprintOf(cert) });
    }
  });

  it('HTTPS responses carry Strict-Transport-Security (200, 401, 404, 405, 422, malformed URL)', async () => {
    const responses = [
      await t.api('GET', `${base}/guests`),
      await t.api('GET', `${base}/guests`, { key: null }),
      await t.api('GET', '/no/such/path'),
      await t.api('PUT', `${base}/guests`),
      await t.post(`${base}/guests/checkin`, guest({ roomNo: 1 })),
      await t.post(`${base}/guests/checkin`, guest()),
      await t.api('GET', '/api/pms/v1/%zz/guests'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 401, 404, 405, 422, 200, 404]);
    for (const res of responses) expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d+/);
    expect(Number(/max-age=(\d+)/.exec(responses[0]!.headers['strict-transport-security'] ?? '')?.[1])).toBeGreaterThan(0);
  });

  it('the plain-HTTP port answers every request but the GET of a page (test/http/https-redirect.test.ts) with 403 HTTPS_REQUIRED JSON, a requestId and rate-limit headers', async () => {
    const before = await t.server.database.db.selectFrom('guests').select('id').execute();
    const g = guest();
    const cases: Array<[string, () => Promise<ApiResponse>]> = [
      ['GET /guests with a key', () => plain(http, `${t.httpUrl}${base}/guests`, 'GET', { authorization: `Bearer ${t.keys.live}` })],
      ['GET /guests without a key', () => plain(http, `${t.httpUrl}${base}/guests`)],
      [
        'POST check-in, complete',
        () =>
          plain(
            http,
            `${t.httpUrl}${base}/guests/checkin`,
            'POST',
            { authorization: `Bearer ${t.keys.live}`, 'content-type': 'application/json', 'idempotency-key': uniqueKey() },
            JSON.stringify(g),
          ),
      ],
      ['POST without anything', () => plain(http, `${t.httpUrl}${base}/guests/update`, 'POST')],
      ['unknown path', () => plain(http, `${t.httpUrl}/no/such/path`)],
      ['docs', () => plain(http, `${t.httpUrl}/api/pms/v1/docs`)],
      ['wrong method', () => plain(http, `${t.httpUrl}${base}/guests`, 'DELETE')],
      ['malformed URL', () => plain(http, `${t.httpUrl}/api/pms/v1/%zz/guests`)],
      ['over-long slug', () => plain(http, `${t.httpUrl}/api/pms/v1/${'a'.repeat(150)}/guests`)],
      [
        'untrusted X-Forwarded-Proto',
        () => plain(http, `${t.httpUrl}${base}/guests`, 'GET', { authorization: `Bearer ${t.keys.live}`, 'x-forwarded-proto': 'https' }),
      ],
    ];
    for (const [name, send] of cases) {
      const sentAt = Date.now();
      const res = await send();
      expect({ name, status: res.status, code: res.body?.code }).toEqual({ name, status: 403, code: 'HTTPS_REQUIRED' });
      expect(res.headers['content-type'], name).toMatch(/^application\/json/);
      expect(res.body, name).toEqual({
        status: 'error',
        code: 'HTTPS_REQUIRED',
        message: expect.any(String),
        requestId: expect.stringMatching(/^req_(?!test_)/),
      });
      expect(res.headers.location, name).toBeUndefined();
      expectRateLimitHeaders(res, { limit: 100, windowSeconds: 60 }, sentAt);
    }
    // Refused API requests are logged too, as unauthenticated (the key was not looked at).
    const first = await cases[0]![1]();
    expect(await logRow(t, first.body.requestId as string)).toMatchObject({
      status_code: 403,
      method: 'GET',
      path: `${base}/guests`,
      api_key_id: null,
      key_mode: null,
      client_ip: '127.0.0.1',
    });
    // The refused check-in changed nothing.
    expect(await t.server.database.db.selectFrom('guests').select('id').execute()).toEqual(before);
    expect(await t.server.database.db.selectFrom('guests').select('id').where('pms_guest_id', '=', String(g.pmsGuestId)).execute()).toEqual([]);
  });

  it('without TRUST_PROXY, X-Forwarded-For is not believed over HTTPS either', async () => {
    const res = await t.api('GET', `${base}/guests`, { headers: { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https' } });
    expect(res.status).toBe(200);
    const row = await logRow(t, res.body.requestId as string);
    expect(row?.client_ip).toBe('127.0.0.1');
  });
});

describe.each(testEngines())('transport behind a trusted proxy (%s)', (engine) => {
  let t: TestServer;
  let base: string;
  const http = new Agent({ keepAliveTimeout: 1000 });
  beforeAll(async () => {
    t = await startTestServer(engine, { TRUST_PROXY: '127.0.0.1' });
    base = `${t.pmsBase}`;
  });
  afterAll(async () => {
    await http.close();
    await t.close();
  });

  it('with TRUST_PROXY, a plain-HTTP request with X-Forwarded-Proto: https is served and X-Forwarded-For is the logged client IP', async () => {
    const auth = { authorization: `Bearer ${t.keys.live}` };
    const res = await plain(http, `${t.httpUrl}${base}/guests`, 'GET', {
      ...auth,
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '203.0.113.7',
      'user-agent': 'proxy-test/1.0',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ guests: [], count: 0, requestId: expect.stringMatching(/^req_/) });
    expect(res.headers['x-ratelimit-limit']).toBe('30');
    const row = await logRow(t, res.body.requestId as string);
    expect(row).toMatchObject({ client_ip: '203.0.113.7', status_code: 200, user_agent: 'proxy-test/1.0' });

    // A write goes through the proxy too.
    const g = guest();
    const post = await plain(
      http,
      `${t.httpUrl}${base}/guests/checkin`,
      'POST',
      {
        ...auth,
        'x-forwarded-proto': 'https',
        'x-forwarded-for': '198.51.100.4, 203.0.113.8',
        'content-type': 'application/json',
        'idempotency-key': uniqueKey(),
      },
      JSON.stringify(g),
    );
    expect(post.status).toBe(200);
    expect(post.body.status).toBe('created');
    // The proxy appended the address it saw: the right-most untrusted entry is the client.
    expect((await logRow(t, post.body.requestId as string))?.client_ip).toBe('203.0.113.8');
  });

  it('through the trusted proxy, a request the client made over plain HTTP is still 403', async () => {
    const auth = { authorization: `Bearer ${t.keys.live}` };
    const variants: Array<Record<string, string>> = [{}, { 'x-forwarded-proto': 'http' }];
    for (const proto of variants) {
      const res = await plain(http, `${t.httpUrl}${base}/guests`, 'GET', { ...auth, ...proto });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('HTTPS_REQUIRED');
    }
  });

  it('X-Forwarded-Proto from an address not in TRUST_PROXY is ignored', async () => {
    const other = await startTestServer(engine, { TRUST_PROXY: '10.1.2.3' });
    try {
      const res = await plain(http, `${other.httpUrl}/api/pms/v1/${other.slug}/guests`, 'GET', {
        authorization: `Bearer ${other.keys.live}`,
        'x-forwarded-proto': 'https',
      });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('HTTPS_REQUIRED');
    } finally {
      await other.close();
    }
  });
});

describe.each(testEngines())('certificates (%s)', (engine) => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const fn of cleanup.reverse()) await fn();
  });

  it('TLS_CERT_FILE/TLS_KEY_FILE are served instead of a generated certificate', async () => {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-own-cert-'));
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const certFile = path.join(dir, 'own-cert.pem');
    const keyFile = path.join(dir, 'own-key.pem');
    fs.writeFileSync(certFile, pems.cert);
    fs.writeFileSync(keyFile, pems.private);

    const { server, dataDir } = await startRaw(engine, { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    cleanup.push(async () => {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const res = await handshake(server.httpsPort, { ca: pems.cert, minVersion: 'TLSv1.2' });
    expect(res).toMatchObject({ ok: true, fingerprint256: fingerprintOf(pems.cert) });
    // Nothing was generated.
    expect(fs.existsSync(path.join(dataDir, 'tls', 'cert.pem'))).toBe(false);

    // And the API is served with it.
    const slug = `own-cert-${engine}`;
    await createHotel(server.database.db, slug, 'Own cert');
    const keys = await issueKeyPair(server.database.db, slug);
    const agent = new Agent({ connect: { ca: pems.cert, servername: 'localhost' } });
    cleanup.push(() => agent.close());
    const api = await request(`https://127.0.0.1:${server.httpsPort}/api/pms/v1/${slug}/guests`, {
      headers: { authorization: `Bearer ${keys.live}` },
      dispatcher: agent,
    });
    expect(api.statusCode).toBe(200);
    expect(((await api.body.json()) as { count: number }).count).toBe(0);
  });

  it('the certificate is generated into DATA_DIR/tls on first start and reused on the second', async () => {
    const first = await startRaw(engine, {});
    const storage = { dataDir: first.dataDir, databaseUrl: first.databaseUrl, databaseListenUrl: first.databaseListenUrl };
    cleanup.push(() => fs.rmSync(storage.dataDir, { recursive: true, force: true }));
    const certPath = path.join(storage.dataDir, 'tls', 'cert.pem');
    const keyPath = path.join(storage.dataDir, 'tls', 'key.pem');
    const certPem = fs.readFileSync(certPath, 'utf8');
    const keyPem = fs.readFileSync(keyPath, 'utf8');
    expect(certPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(keyPem).toMatch(/-----BEGIN (RSA )?PRIVATE KEY-----/);
    const served1 = await handshake(first.server.httpsPort, { ca: certPem });
    expect(served1).toMatchObject({ ok: true, fingerprint256: fingerprintOf(certPem) });
    await first.server.close();

    const second = await startRaw(engine, {}, storage);
    cleanup.push(() => second.server.close());
    expect(fs.readFileSync(certPath, 'utf8')).toBe(certPem);
    expect(fs.readFileSync(keyPath, 'utf8')).toBe(keyPem);
    const served2 = await handshake(second.server.httpsPort, { ca: certPem });
    expect(served2).toMatchObject({ ok: true, fingerprint256: fingerprintOf(certPem) });
  });
});
