import net from 'node:net';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/pms-interface.md, "Transport": the plain-HTTP port refuses with 403 HTTPS_REQUIRED, with no
// redirect for API paths; the dashboard may redirect GET to HTTPS. Requests are written
// byte for byte on a TCP socket, so any Host header can be sent.

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary members
  body: any;
}

/** One HTTP/1.1 request on its own connection to 127.0.0.1:port (TLS with `secure`): `head` is the request line and headers. */
function plainRequest(port: number, head: string, body = '', secure = false): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = secure
      ? tls.connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] })
      : net.connect({ host: '127.0.0.1', port });
    let raw = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (raw += d));
    socket.once('error', reject);
    socket.once('end', () => {
      const [top = '', text = ''] = raw.split(/\r\n\r\n(.*)/s);
      const [statusLine = '', ...fields] = top.split('\r\n');
      const headers = Object.fromEntries(fields.map((f) => [f.slice(0, f.indexOf(':')).toLowerCase(), f.slice(f.indexOf(':') + 1).trim()]));
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON (a redirect has no body)
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: parsed });
    });
    const length = body ? `\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}` : '';
    socket.write(`${head}${length}\r\nConnection: close\r\n\r\n${body}`);
  });
}

function expectRefused(res: RawResponse, name: string): void {
  expect({ name, status: res.status, code: res.body?.code }).toEqual({ name, status: 403, code: 'HTTPS_REQUIRED' });
  expect(res.headers['content-type'], name).toMatch(/^application\/json/);
  expect(res.headers.location, name).toBeUndefined();
}

describe.each(testEngines())('plain HTTP: the dashboard redirects to HTTPS, everything else is refused (%s)', (engine) => {
  let t: TestServer;
  let httpPort: number;
  let https: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    httpPort = t.server.httpPort ?? 0;
    https = `https://127.0.0.1:${t.server.httpsPort}`;
  });
  afterAll(() => t.close());

  const get = (target: string, host = `127.0.0.1:${httpPort}`, method = 'GET', extra = ''): Promise<RawResponse> =>
    plainRequest(httpPort, `${method} ${target} HTTP/1.1\r\nHost: ${host}${extra}`);

  it('GET and HEAD of the dashboard (and of /, which leads there) answer 308 to the same path and query on the HTTPS port, which serves the page', async () => {
    const cases: Array<[string, Promise<RawResponse>, string]> = [
      ['GET /dashboard/', get('/dashboard/'), `${https}/dashboard/`],
      ['GET /dashboard with a query', get('/dashboard?view=list&q=R%2012'), `${https}/dashboard?view=list&q=R%2012`],
      ['HEAD of an asset', get('/dashboard/assets/app.js', undefined, 'HEAD'), `${https}/dashboard/assets/app.js`],
      ['GET /', get('/'), `${https}/`],
    ];
    for (const [name, sent, location] of cases) {
      const res = await sent;
      expect({ name, status: res.status, location: res.headers.location }).toEqual({ name, status: 308, location });
      expect(res.headers['cache-control'], name).toBe('no-store');
    }
    const page = await t.api('GET', `/dashboard/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
  });

  it('the Location names the host the client asked for, without its port: a name, an IPv4 or a bracketed IPv6 address', async () => {
    const port = t.server.httpsPort;
    const hosts: Array<[string, string]> = [
      [`localhost:${httpPort}`, `https://localhost:${port}/dashboard/`],
      ['innsync.example', `https://innsync.example:${port}/dashboard/`],
      ['Front-Desk.Hotel.example:80', `https://Front-Desk.Hotel.example:${port}/dashboard/`],
      [`[::1]:${httpPort}`, `https://[::1]:${port}/dashboard/`],
    ];
    for (const [host, location] of hosts) {
      const res = await get('/dashboard/', host);
      expect({ host, status: res.status, location: res.headers.location }).toEqual({ host, status: 308, location });
    }
  });

  it('a Host header that is not a plain host name or address gets 403 HTTPS_REQUIRED, never a redirect elsewhere', async () => {
    const hostile = [
      'evil.example@127.0.0.1',
      '127.0.0.1@evil.example',
      '127.0.0.1/evil.example',
      'evil.example\\@127.0.0.1',
      '127.0.0.1:8080:evil.example',
      '127.0.0.1:80abc',
      'evil_host.example',
      '-evil.example',
      '[::1%25eth0]',
      '[evil.example]',
      '',
    ];
    for (const host of hostile) expectRefused(await get('/dashboard/', host), `Host: ${host}`);
    expectRefused(await get('http://evil.example/dashboard/'), 'absolute-form target');
    expectRefused(await get('//evil.example/dashboard/'), 'target starting with //');
  });

  it('everything else over plain HTTP stays 403 HTTPS_REQUIRED JSON: writes on the dashboard, its JSON API, the PMS API and its reference, a proxied request', async () => {
    const login = JSON.stringify({ email: 'someone@hotel.example', password: 'a password of some length' });
    const cases: Array<[string, Promise<RawResponse>]> = [
      ['POST /dashboard/api/login', plainRequest(httpPort, `POST /dashboard/api/login HTTP/1.1\r\nHost: 127.0.0.1:${httpPort}`, login)],
      ['GET /dashboard/api/session', get('/dashboard/api/session')],
      ['POST /dashboard/', plainRequest(httpPort, `POST /dashboard/ HTTP/1.1\r\nHost: 127.0.0.1:${httpPort}`, '{}')],
      ['GET an unknown dashboard path', get('/dashboard/no-such-page')],
      ['GET /api/pms/v1/x/guests', get('/api/pms/v1/x/guests')],
      ['GET guests with a key', get(`${t.pmsBase}/guests`, undefined, 'GET', `\r\nAuthorization: Bearer ${t.keys.live}`)],
      ['GET /api/pms/v1/docs', get('/api/pms/v1/docs')],
      ['GET /dashboard/ through a proxy', get('/dashboard/', undefined, 'GET', '\r\nX-Forwarded-Proto: http')],
    ];
    for (const [name, sent] of cases) expectRefused(await sent, name);
  });
});

describe.each(testEngines())('two Host headers, and the 404 of a path outside the API (%s)', (engine) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  it('a request with two Host headers is refused 400 HOST_HEADER_REPEATED (JSON, no redirect), over plain HTTP and over HTTPS; one Host header still works', async () => {
    const httpPort = t.server.httpPort ?? 0;
    const httpsPort = t.server.httpsPort;
    const twoHosts = (port: number, target: string, first: string, second: string, secure = false) =>
      plainRequest(port, `GET ${target} HTTP/1.1\r\nHost: ${first}\r\nHost: ${second}`, '', secure);
    const cases: Array<[string, Promise<RawResponse>]> = [
      ['plain HTTP, a redirected page', twoHosts(httpPort, '/dashboard/', 'evil.example', `127.0.0.1:${httpPort}`)],
      ['plain HTTP, the other order', twoHosts(httpPort, '/dashboard/', `127.0.0.1:${httpPort}`, 'evil.example')],
      ['plain HTTP, the PMS API', twoHosts(httpPort, `${t.pmsBase}/guests`, 'evil.example', '127.0.0.1')],
      ['HTTPS, a page', twoHosts(httpsPort, '/dashboard/', 'evil.example', 'localhost', true)],
      ['HTTPS, the PMS API', twoHosts(httpsPort, `${t.pmsBase}/guests`, 'localhost', 'localhost', true)],
      ['HTTPS, /', twoHosts(httpsPort, '/', 'evil.example', 'localhost', true)],
    ];
    for (const [name, sent] of cases) {
      const res = await sent;
      expect({ name, status: res.status, code: res.body?.code, location: res.headers.location }).toEqual({
        name,
        status: 400,
        code: 'HOST_HEADER_REPEATED',
        location: undefined,
      });
      expect(res.headers['content-type'], name).toMatch(/^application\/json/);
      expect(res.body.message, name).toMatch(/more than one Host header/);
    }
    const one = await plainRequest(httpPort, `GET /dashboard/ HTTP/1.1\r\nHost: 127.0.0.1:${httpPort}`);
    expect(one.status).toBe(308);
    const page = await plainRequest(httpsPort, 'GET /dashboard/ HTTP/1.1\r\nHost: localhost', '', true);
    expect(page.status).toBe(200);
  });

  it('a path no part serves (outside the API and the dashboard) answers 404 NOT_FOUND with Cache-Control: no-store', async () => {
    for (const target of ['/nonexistent', '/nonexistent?x=1', '/a/b/c']) {
      const res = await t.api('GET', target, { key: null });
      expect({ target, status: res.status, code: res.body?.code, cache: res.headers['cache-control'] }).toEqual({
        target,
        status: 404,
        code: 'NOT_FOUND',
        cache: 'no-store',
      });
    }
    const raw = await plainRequest(t.server.httpsPort, 'POST /nonexistent HTTP/1.1\r\nHost: localhost', '{}', true);
    expect({ status: raw.status, cache: raw.headers['cache-control'] }).toEqual({ status: 404, cache: 'no-store' });
  });
});

describe('plain HTTP redirect to the standard HTTPS port', () => {
  it('with PORT=443 the Location carries no port', async () => {
    const t = await startTestServer(testEngines()[0] ?? 'sqlite', { PORT: '443' });
    try {
      const res = await plainRequest(t.server.httpPort ?? 0, `GET /dashboard/?a=1 HTTP/1.1\r\nHost: innsync.example:8080`);
      expect(res.status).toBe(308);
      expect(res.headers.location).toBe('https://innsync.example/dashboard/?a=1');
    } finally {
      await t.close();
    }
  });
});
