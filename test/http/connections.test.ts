import fs from 'node:fs';
import http2 from 'node:http2';
import path from 'node:path';
import tls from 'node:tls';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { SseParser, type SseMessage } from '../support/sse.js';
import { addStaffUser, DashboardClient, SESSION_COOKIE, STAFF_PASSWORD } from '../support/dashboard-client.js';
import { startLoggedServer } from '../support/log-capture.js';
import { clientKey } from '../../src/http/client-address.js';
import { createHotel, issueKeyPair } from '../../src/operations.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';

// Connections and time (README.md, "Connections"): header, request and keep-alive time
// limits, caps on connections (in total and per socket address, TRUST_PROXY exempt),
// HTTP/2 by ALPN. Loopback is all of 127.0.0.0/8, so a test can be several client
// addresses at once.

const certOf = (t: TestServer): string => fs.readFileSync(path.join(t.config.dataDir, 'tls', 'cert.pem'), 'utf8');

interface Conn {
  socket: tls.TLSSocket;
  /** Everything the server sent, until it closed the connection. */
  received: Promise<string>;
}

/** A TLS connection from `localAddress`; rejects when the server drops it before the handshake ends. */
function connect(t: TestServer, localAddress = '127.0.0.1', alpn = ['http/1.1']): Promise<Conn> {
  return new Promise((resolve, reject) => {
    // tls.connect passes localAddress on to the TCP connection; its type does not list it.
    const options: tls.ConnectionOptions = Object.assign(
      { host: '127.0.0.1', port: t.server.httpsPort, ca: certOf(t), servername: 'localhost', ALPNProtocols: alpn },
      { localAddress },
    );
    const socket = tls.connect(options);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    const received = new Promise<string>((done) => socket.once('close', () => done(text)));
    socket.once('secureConnect', () => resolve({ socket, received }));
    socket.once('error', (err) => {
      socket.destroy();
      reject(err);
    });
  });
}

/** The status line and the JSON body of a raw HTTP/1.1 answer. */
function parseRaw(text: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(body) as Record<string, unknown> };
}

const loginHead = (t: TestServer, contentLength: number): string =>
  `POST /dashboard/api/login HTTP/1.1\r\nHost: 127.0.0.1:${t.server.httpsPort}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`;

/** A dashboard event stream read over an HTTP/2 session: its status, the events so far, whether it ended. */
class H2Events {
  readonly status: Promise<number>;
  readonly events: SseMessage[] = [];
  ended = false;

  constructor(session: http2.ClientHttp2Session, path: string, headers: Record<string, string>) {
    const stream = session.request({ ':path': path, ...headers });
    this.status = new Promise((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
    const parser = new SseParser();
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => this.events.push(...parser.push(chunk)));
    stream.on('close', () => (this.ended = true));
    stream.on('error', () => (this.ended = true));
  }
}

describe('the unit of the per-address cap and limits', () => {
  it('is the IPv4 address, or the /64 of an IPv6 address (one client usually holds a whole /64)', () => {
    expect(clientKey('10.0.0.1')).toBe('10.0.0.1');
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0DB8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1:2:3:4')).toBe('fe80:0:0:0::/64');
    // An IPv4 client of a dual-stack listener is its IPv4 address, not the /64 of ::ffff:0:0.
    expect(clientKey('::ffff:10.0.0.1')).toBe('10.0.0.1');
  });
});

describe.each(testEngines())('connections and time (%s)', (engine) => {
  it('a body that stalls is cut off: 408 REQUEST_TIMEOUT in the usual envelope, then the connection is closed', async () => {
    const t = await startTestServer(engine, { REQUEST_TIMEOUT_SECONDS: '1', HEADERS_TIMEOUT_SECONDS: '1' });
    try {
      const conn = await connect(t);
      conn.socket.write(`${loginHead(t, 100)}{"email":`);
      const answer = parseRaw(await conn.received);
      expect(answer.status).toBe(408);
      expect(answer.body).toMatchObject({ status: 'error', code: 'REQUEST_TIMEOUT' });
      expect(answer.body.requestId).toMatch(/^req_/);
      expect(answer.headers).toContain('connection: close');
      expect(answer.headers).toContain('content-type: application/json');
      // The service still answers everyone else.
      expect((await t.api('GET', `${t.pmsBase}/guests`)).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('headers that never finish are cut off with 408 too; a request that is not HTTP gets 400 MALFORMED_REQUEST', async () => {
    const t = await startTestServer(engine, { REQUEST_TIMEOUT_SECONDS: '2', HEADERS_TIMEOUT_SECONDS: '1' });
    try {
      const slow = await connect(t);
      slow.socket.write(`GET /api/pms/v1/${t.slug}/guests HTTP/1.1\r\nHost: x\r\n`);
      expect(parseRaw(await slow.received)).toMatchObject({ status: 408, body: { code: 'REQUEST_TIMEOUT' } });
      const garbage = await connect(t);
      garbage.socket.write('HELLO THERE\r\n\r\n');
      expect(parseRaw(await garbage.received)).toMatchObject({ status: 400, body: { code: 'MALFORMED_REQUEST' } });
      const huge = await connect(t);
      huge.socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(parseRaw(await huge.received)).toMatchObject({ status: 431, body: { code: 'HEADERS_TOO_LARGE' } });
    } finally {
      await t.close();
    }
  });

  it('HTTP/2: a request body that stalls gets 408 REQUEST_TIMEOUT on its stream', async () => {
    const t = await startTestServer(engine, { REQUEST_TIMEOUT_SECONDS: '1', HEADERS_TIMEOUT_SECONDS: '1' });
    const session = http2.connect(`https://127.0.0.1:${t.server.httpsPort}`, { ca: certOf(t), servername: 'localhost' });
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/dashboard/api/login', 'content-type': 'application/json', 'content-length': '100' });
      stream.write('{"email":');
      const status = await new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))));
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      await new Promise<void>((resolve) => stream.once('close', () => resolve()));
      expect(status).toBe(408);
      expect(JSON.parse(body)).toMatchObject({ status: 'error', code: 'REQUEST_TIMEOUT' });
    } finally {
      session.destroy();
      await t.close();
    }
  });

  it('HTTP/2: a connection whose first request does not arrive within HEADERS_TIMEOUT_SECONDS is closed by the server', async () => {
    const t = await startTestServer(engine, { HEADERS_TIMEOUT_SECONDS: '1' });
    try {
      const session = http2.connect(`https://127.0.0.1:${t.server.httpsPort}`, { ca: certOf(t), servername: 'localhost' });
      session.on('error', () => undefined);
      await new Promise<void>((resolve) => session.once('connect', () => resolve()));
      expect(session.alpnProtocol).toBe('h2');
      // Nothing sent after the connection preface: the server ends the connection.
      await new Promise<void>((resolve) => session.once('close', () => resolve()));
      expect(session.destroyed).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('an idle keep-alive connection is closed by the server after KEEP_ALIVE_TIMEOUT_SECONDS', async () => {
    const t = await startTestServer(engine, { KEEP_ALIVE_TIMEOUT_SECONDS: '1' });
    try {
      const conn = await connect(t);
      conn.socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
      const text = await conn.received;
      // One answer, kept alive (no Connection: close), then closed by the server while idle.
      expect(text).toContain('HTTP/1.1 200');
      expect(text.toLowerCase()).toContain('keep-alive: timeout=1');
      expect(conn.socket.destroyed).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('MAX_CONNECTIONS_PER_IP: one address cannot hold more; other addresses are still served, and a closed connection frees its place', async () => {
    const t = await startTestServer(engine, { MAX_CONNECTIONS_PER_IP: '3' });
    try {
      const held = await Promise.all([1, 2, 3].map(() => connect(t, '127.0.0.2')));
      await expect(connect(t, '127.0.0.2')).rejects.toThrow();
      // Another client address is not affected.
      expect((await t.api('GET', `${t.pmsBase}/guests`)).status).toBe(200);
      held[0]?.socket.destroy();
      await held[0]?.received;
      await expect
        .poll(async () =>
          connect(t, '127.0.0.2').then(
            (c) => (c.socket.destroy(), true),
            () => false,
          ),
        )
        .toBe(true);
      for (const c of held) c.socket.destroy();
    } finally {
      await t.close();
    }
  });

  it('a proxy declared in TRUST_PROXY is exempt from the per-address cap; MAX_CONNECTIONS caps everyone', async () => {
    const t = await startTestServer(engine, { MAX_CONNECTIONS_PER_IP: '2', MAX_CONNECTIONS: '6', TRUST_PROXY: '127.0.0.3' });
    try {
      const fromProxy = await Promise.all([1, 2, 3, 4, 5].map(() => connect(t, '127.0.0.3')));
      await expect(connect(t, '127.0.0.2')).resolves.toBeDefined();
      // Six open: the seventh is refused whoever it comes from, the proxy included.
      await expect(connect(t, '127.0.0.3')).rejects.toThrow();
      await expect(connect(t, '127.0.0.4')).rejects.toThrow();
      for (const c of fromProxy) c.socket.destroy();
    } finally {
      await t.close();
    }
  });

  it('TRUST_PROXY takes range names too (loopback): every loopback address is then exempt from the per-address cap', async () => {
    const t = await startTestServer(engine, { MAX_CONNECTIONS_PER_IP: '2', TRUST_PROXY: 'loopback' });
    try {
      const held = await Promise.all([1, 2, 3, 4].map(() => connect(t, '127.0.0.2')));
      // All four are served, twice the per-address cap.
      for (const c of held) c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      const answers = await Promise.all(held.map((c) => c.received));
      expect(answers.map((a) => a.split('\r\n')[0])).toEqual(Array(4).fill('HTTP/1.1 200 OK'));
    } finally {
      await t.close();
    }
  });

  it('HTTP/2 is offered by ALPN and HTTP/1.1 still served: the PMS API, dashboard event streams over one connection, the refuser, and shutdown', async () => {
    const t = await startTestServer(engine);
    const h2 = new Agent({ allowH2: true, connect: { ca: certOf(t), servername: 'localhost' } });
    const held: { session?: http2.ClientHttp2Session } = {};
    let closed = false;
    try {
      const offered = await connect(t, '127.0.0.1', ['h2', 'http/1.1']);
      expect(offered.socket.alpnProtocol).toBe('h2');
      offered.socket.destroy();
      const old = await connect(t, '127.0.0.1', ['http/1.1']);
      expect(old.socket.alpnProtocol).toBe('http/1.1');
      old.socket.destroy();

      const target = { baseUrl: t.baseUrl, agent: h2 };
      await addStaffUser(t.server.database.db, t.slug, `desk-${uniqueKey()}@example.com`.toLowerCase(), 'receptionist').then(async (u) => {
        // A browser's login carries Origin; over HTTP/2 the host to match is :authority.
        const staff = new DashboardClient(target);
        expect((await staff.login(u.email, STAFF_PASSWORD, { origin: 'https://evil.example' })).status).toBe(403);
        expect((await staff.login(u.email, STAFF_PASSWORD, { origin: `https://127.0.0.1:${t.server.httpsPort}` })).status).toBe(200);
        // Seven streams (more than HTTP/1.1's six connections per host) and a check-in, all on
        // one HTTP/2 connection: the five newest streams stay open (at most 5 per session).
        const h2session = http2.connect(t.baseUrl, { ca: certOf(t), servername: 'localhost' });
        held.session = h2session;
        const streams: H2Events[] = [];
        for (let i = 0; i < 7; i++) {
          const s = new H2Events(h2session, `/dashboard/api/events`, { cookie: `${SESSION_COOKIE}=${staff.cookie ?? ''}`, accept: 'text/event-stream' });
          expect(await s.status).toBe(200);
          await expect.poll(() => s.events.map((e) => e.event)).toContain('ready');
          streams.push(s);
        }
        const body = guest();
        const checkin = h2session.request({
          ':method': 'POST',
          ':path': `${t.pmsBase}/guests/checkin`,
          'content-type': 'application/json',
          authorization: `Bearer ${t.keys.live}`,
          'idempotency-key': uniqueKey(),
        });
        checkin.end(JSON.stringify(body));
        expect(await new Promise<number>((resolve) => checkin.once('response', (h) => resolve(Number(h[':status']))))).toBe(200);
        const open = streams.slice(2);
        for (const s of open) {
          await expect.poll(() => s.events.find((e) => e.event === 'roster')?.data ?? null).toContain(String(body.pmsGuestId));
        }
        // The two oldest were closed by the server when the sixth and seventh opened.
        await expect.poll(() => streams.slice(0, 2).every((s) => s.ended)).toBe(true);
        expect(open.some((s) => s.ended)).toBe(false);
        // The refuser (plain HTTP) still answers 403 HTTPS_REQUIRED.
        const refused = await fetch(`${t.httpUrl}/api/pms/v1/${t.slug}/guests`);
        expect(refused.status).toBe(403);
        expect(((await refused.json()) as { code: string }).code).toBe('HTTPS_REQUIRED');
        // The server closes the streams at shutdown; close() does not wait for the browser.
        closed = true;
        await t.close();
        await expect.poll(() => open.every((s) => s.ended)).toBe(true);
      });
    } finally {
      held.session?.destroy();
      await h2.destroy().catch(() => undefined);
      if (!closed) await t.close();
    }
  });

  it('a request that ends early (a stalled body cut off, a client gone) is logged once at debug level, with the client address and no stack', async () => {
    const logged = await startLoggedServer(engine, { REQUEST_TIMEOUT_SECONDS: '1', HEADERS_TIMEOUT_SECONDS: '1' });
    const { lines, server } = logged;
    const t = { server, config: { dataDir: logged.dataDir } } as unknown as TestServer;
    try {
      const stalled = await connect(t, '127.0.0.5');
      stalled.socket.write(`${loginHead(t, 100)}{"email":`);
      expect(parseRaw(await stalled.received).status).toBe(408);
      const gone = await connect(t, '127.0.0.6');
      gone.socket.write(`${loginHead(t, 100)}{"email":`);
      gone.socket.destroy();
      // An HTTP/2 check-in whose body stalls: 408 on its stream, and its request is over for the service too.
      await createHotel(server.database.db, 'early-hotel', 'Early Hotel');
      const keys = await issueKeyPair(server.database.db, 'early-hotel');
      const session = http2.connect(`https://127.0.0.1:${server.httpsPort}`, {
        createConnection: () =>
          tls.connect(
            Object.assign(
              { host: '127.0.0.1', port: server.httpsPort, ca: certOf(t), servername: 'localhost', ALPNProtocols: ['h2'] },
              { localAddress: '127.0.0.7' },
            ),
          ),
      });
      const stream = session.request({
        ':method': 'POST',
        ':path': '/api/pms/v1/early-hotel/guests/checkin',
        'content-type': 'application/json',
        'content-length': '100',
        authorization: `Bearer ${keys.live}`,
        'idempotency-key': 'early-1',
      });
      stream.write('{"pmsGuestId":');
      expect(await new Promise<number>((resolve) => stream.once('response', (h) => resolve(Number(h[':status']))))).toBe(408);
      session.close();
      const early = (ip: string) => lines.filter((l) => l.msg === 'request ended early' && l.ip === ip);
      await expect.poll(() => early('127.0.0.6').length).toBe(1);
      await expect.poll(() => early('127.0.0.5').length).toBe(1);
      await expect.poll(() => early('127.0.0.7').length).toBe(1);
      expect(early('127.0.0.7')[0]).toMatchObject({ reason: 'ERR_HTTP_REQUEST_TIMEOUT', route: '/api/pms/v1/:slug/guests/checkin' });
      // Still once each after the service has answered something else.
      const after = await connect(t, '127.0.0.8');
      after.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(await after.received).toContain('HTTP/1.1 200');
      for (const ip of ['127.0.0.5', '127.0.0.6', '127.0.0.7']) expect(early(ip)).toHaveLength(1);
      const all = lines.filter((l) => l.msg === 'request ended early');
      for (const l of all) expect(l.level).toBe(20);
      expect(all.find((l) => l.ip === '127.0.0.5')).toMatchObject({ reason: 'ERR_HTTP_REQUEST_TIMEOUT', route: '/dashboard/api/login' });
      // Nothing about them above debug, and no stack anywhere.
      expect(lines.filter((l) => (l.level as number) >= 40 && ['127.0.0.5', '127.0.0.6', '127.0.0.7'].includes(l.ip as string))).toEqual([]);
      expect(lines.filter((l) => JSON.stringify(l).includes('"stack"'))).toEqual([]);
    } finally {
      await logged.close();
    }
  });
});
