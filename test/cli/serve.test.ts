import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { createHotel, issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { createTestStorage, guest, testEngines, pmsBase } from '../support/harness.js';
import { freePort } from '../support/postgres-cluster.js';
import { lines, postJson, spawnServe, storageEnv, trustingAgent, waitForExit, waitForHttps, type ServeProcess, type Storage } from './cli-helpers.js';

// README.md, "Operating it": `innsync serve` is what `npm start` runs: HTTPS on PORT, the
// plain-HTTP refuser on HTTP_PORT (`off` disables it), a self-signed certificate
// generated into DATA_DIR/tls on first start. server.ts: SIGTERM/SIGINT stop accepting,
// finish in-flight requests, flush the request log, exit 0. Every test spawns the real
// command.

/** Two distinct free ports. */
async function twoPorts(): Promise<[number, number]> {
  const a = await freePort();
  let b = await freePort();
  while (b === a) b = await freePort();
  return [a, b];
}

/** TCP ports the process `pid` listens on (Linux: its socket fds matched in /proc/net/tcp*). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1]) inodes.add(m[1]);
    } catch {
      // fd closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      const [, local, , state] = cols;
      const inode = cols[9];
      if (state === '0A' && inode !== undefined && inodes.has(inode) && local) ports.add(parseInt(local.split(':')[1] ?? '0', 16));
    }
  }
  return [...ports].sort((x, y) => x - y);
}

type Outcome =
  | { kind: 'response'; status: number; body: { status?: string; requestId?: string } }
  | { kind: 'no-response'; code: string }
  | { kind: 'truncated'; error: string };

/**
 * A check-in whose fate is classified: a complete response, no response at all (the
 * connection was refused or closed before any byte of a response), or a response cut
 * off after its headers arrived (truncated: what a graceful shutdown must never do).
 */
async function checkIn(
  agent: ReturnType<typeof trustingAgent>,
  url: string,
  key: string,
  body: unknown,
  idemKey: string,
  onHeaders: () => void,
): Promise<Outcome> {
  let res;
  try {
    res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': idemKey },
      body: JSON.stringify(body),
    });
  } catch (err) {
    return { kind: 'no-response', code: String((err as { code?: unknown }).code ?? err) };
  }
  onHeaders();
  try {
    const text = await res.body.text();
    return { kind: 'response', status: res.statusCode, body: JSON.parse(text) as { status?: string; requestId?: string } };
  } catch (err) {
    return { kind: 'truncated', error: String(err) };
  }
}

/** A check-in sent with `Connection: close` (the socket is gone once the response is sent). */
function checkInConnectionClose(port: number, ca: string, slug: string, key: string, body: unknown): Promise<{ status: number; body: { requestId: string } }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        servername: 'localhost',
        ca,
        agent: false,
        method: 'POST',
        path: `${pmsBase(slug)}/guests/checkin`,
        headers: { connection: 'close', authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `close-${Date.now()}` },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { requestId: string } }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Connection-level failures that mean "no response was ever started". */
const NO_RESPONSE_CODES = ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'];

describe.each(testEngines())('innsync serve (%s)', (engine) => {
  let storage: Storage;
  let env: Record<string, string>;
  let handle: DatabaseHandle | undefined;
  const hotelSlug = `serve-${engine}`;
  let keys: IssuedKeyPair | undefined;
  const running: ServeProcess[] = [];

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    env = { ...storageEnv(storage), HOST: '127.0.0.1' };
  });
  afterAll(async () => {
    for (const p of running) if (!p.hasExited()) p.child.kill('SIGKILL');
    await handle?.close();
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  const db = (): DatabaseHandle['db'] => {
    handle ??= openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    return handle.db;
  };
  /** The hotel and its key pair, created (once) after a serve has migrated the database. */
  const hotelKeys = async (): Promise<IssuedKeyPair> => {
    if (!keys) {
      await createHotel(db(), hotelSlug, 'Serve Hotel');
      keys = await issueKeyPair(db(), hotelSlug);
    }
    return keys;
  };
  const serve = (extra: Record<string, string>): ServeProcess => {
    const p = spawnServe({ ...env, ...extra });
    running.push(p);
    return p;
  };

  it('serve migrates a fresh database, generates a certificate into DATA_DIR/tls, serves a live check-in over HTTPS, refuses plain HTTP with 403 HTTPS_REQUIRED; SIGTERM after the first response of a burst: every request complete or refused, exit 0, request log flushed', async () => {
    const [httpsPort, httpPort] = await twoPorts();
    const proc = serve({ PORT: String(httpsPort), HTTP_PORT: String(httpPort), LOG_LEVEL: 'info' });
    const { agent, cert } = await waitForHttps(proc, storage.dataDir, httpsPort);
    try {
      // A self-signed certificate generated into DATA_DIR/tls on first start.
      const tlsDir = path.join(storage.dataDir, 'tls');
      expect(fs.readdirSync(tlsDir).sort()).toEqual(['cert.pem', 'key.pem']);
      const x509 = new X509Certificate(cert);
      expect(x509.subject).toContain('CN=localhost');
      expect(x509.subjectAltName).toContain('IP Address:127.0.0.1');
      expect(fs.readFileSync(path.join(tlsDir, 'key.pem'), 'utf8')).toMatch(/-----BEGIN (RSA )?PRIVATE KEY-----/);
      expect(x509.checkPrivateKey(createPrivateKey(fs.readFileSync(path.join(tlsDir, 'key.pem'))))).toBe(true);
      // Exactly the two configured listeners.
      if (process.platform === 'linux') expect(listeningPorts(proc.child.pid!)).toEqual([httpsPort, httpPort].sort((a, b) => a - b));

      // serve applied the migrations itself: the operator commands work on its database.
      const keys = await hotelKeys();
      const base = `https://127.0.0.1:${httpsPort}/api/pms/v1/${hotelSlug}`;

      const first = await postJson(agent, `${base}/guests/checkin`, keys.live, guest());
      expect(first.status, first.text).toBe(200);
      expect(first.body).toMatchObject({ status: 'created', requestId: expect.stringMatching(/^req_/) });
      expect(first.headers['strict-transport-security']).toBeDefined();

      // The plain-HTTP port refuses the API with 403 HTTPS_REQUIRED.
      const plainGet = await request(`http://127.0.0.1:${httpPort}/api/pms/v1/${hotelSlug}/guests`, { headers: { authorization: `Bearer ${keys.live}` } });
      const plainGetBody = (await plainGet.body.json()) as { code: string; requestId: string };
      expect(plainGet.statusCode).toBe(403);
      expect(plainGetBody.code).toBe('HTTPS_REQUIRED');
      const plainPost = await request(`http://127.0.0.1:${httpPort}/api/pms/v1/${hotelSlug}/guests/checkin`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys.live}`, 'content-type': 'application/json', 'idempotency-key': 'plain-1' },
        body: JSON.stringify(guest()),
      });
      const plainPostBody = (await plainPost.body.json()) as { code: string; requestId: string };
      expect(plainPost.statusCode).toBe(403);
      expect(plainPostBody.code).toBe('HTTPS_REQUIRED');

      // A burst of check-ins on fresh connections; SIGTERM as soon as the first response's
      // headers arrive, while the others are still in flight (or not yet connected).
      const burstAgent = trustingAgent(cert);
      const burst = Array.from({ length: 24 }, (_, i) => ({ body: guest(), idem: `burst-${engine}-${i}` }));
      let signalled = false;
      const sigterm = (): void => {
        if (signalled) return;
        signalled = true;
        proc.child.kill('SIGTERM');
      };
      const outcomes = await Promise.all(burst.map((b) => checkIn(burstAgent, `${base}/guests/checkin`, keys.live, b.body, b.idem, sigterm)));
      sigterm();
      await burstAgent.close().catch(() => undefined);

      const exit = await waitForExit(proc);
      expect(exit, proc.output().stderr).toEqual({ code: 0, signal: null });

      // Never a truncated response: each one complete, or no response at all.
      expect(outcomes.filter((o) => o.kind === 'truncated')).toEqual([]);
      const answered = outcomes.map((o, i) => ({ o, g: burst[i]!.body })).filter((x) => x.o.kind === 'response');
      expect(answered.length).toBeGreaterThan(0);
      for (const { o } of answered) {
        expect(o.kind === 'response' && o.status).toBe(200);
        expect(o.kind === 'response' && o.body.status).toBe('created');
      }
      for (const o of outcomes) if (o.kind === 'no-response') expect(NO_RESPONSE_CODES).toContain(o.code);

      // In-flight requests were finished, not dropped: a guest is stored exactly when its
      // client got the 200 (nothing processed without an answer, nothing answered and lost).
      const burstIds = burst.map((b) => String(b.body.pmsGuestId));
      const stored = await db().selectFrom('guests').select('pms_guest_id').where('pms_guest_id', 'in', burstIds).where('status', '=', 'active').execute();
      expect(stored.map((r) => r.pms_guest_id).sort()).toEqual(answered.map((x) => String(x.g.pmsGuestId)).sort());

      // The request log was flushed on shutdown: every answered request has its row.
      const requestIds = [
        first.body.requestId,
        plainGetBody.requestId,
        plainPostBody.requestId,
        ...answered.map((x) => (x.o.kind === 'response' ? x.o.body.requestId : '')),
      ];
      const logged = await db().selectFrom('request_log').select(['id', 'status_code']).where('id', 'in', requestIds).execute();
      expect(logged.map((r) => r.id).sort()).toEqual([...requestIds].sort());
      expect(logged.find((r) => r.id === plainGetBody.requestId)?.status_code).toBe(403);

      // LOG_LEVEL=info: the operational log is pino JSON lines on stdout.
      const { stdout } = proc.output();
      for (const line of lines(stdout)) expect(() => JSON.parse(line)).not.toThrow();
      expect(stdout).toContain('SIGTERM');
    } finally {
      await agent.close().catch(() => undefined);
    }
  });

  it('HTTP_PORT=off serves HTTPS only; the certificate of the first start is reused; SIGINT exits 0 with the request log flushed (also a Connection: close request)', async () => {
    const httpsPort = await freePort();
    const certFile = path.join(storage.dataDir, 'tls', 'cert.pem');
    const certBefore = fs.existsSync(certFile) ? fs.readFileSync(certFile, 'utf8') : null;
    const proc = serve({ PORT: String(httpsPort), HTTP_PORT: 'off' });
    const { agent, cert } = await waitForHttps(proc, storage.dataDir, httpsPort);
    try {
      // The certificate is generated on the first start only.
      if (certBefore !== null) expect(cert).toBe(certBefore);
      const keys = await hotelKeys();
      if (process.platform === 'linux') expect(listeningPorts(proc.child.pid!)).toEqual([httpsPort]);
      const base = `https://127.0.0.1:${httpsPort}/api/pms/v1/${hotelSlug}`;
      const res = await postJson(agent, `${base}/guests/checkin`, keys.live, guest());
      expect(res.status, res.text).toBe(200);
      const test = await postJson(agent, `${base}/guests/checkin`, keys.test, guest());
      expect(test.status, test.text).toBe(200);
      // Every request is logged, also one whose client sent Connection: close.
      const closing = await checkInConnectionClose(httpsPort, cert, hotelSlug, keys.live, guest());
      expect(closing.status).toBe(200);
      await agent.close();

      proc.child.kill('SIGINT');
      const exit = await waitForExit(proc);
      expect(exit, proc.output().stderr).toEqual({ code: 0, signal: null });
      const ids = [res.body.requestId, test.body.requestId, closing.body.requestId];
      const logged = await db().selectFrom('request_log').select(['id', 'client_ip', 'key_mode']).where('id', 'in', ids).execute();
      expect(logged.map((r) => r.id).sort()).toEqual([...ids].sort());
      for (const row of logged) expect(row.client_ip).toBe('127.0.0.1');
      expect(logged.find((r) => r.id === test.body.requestId)?.key_mode).toBe('test');
    } finally {
      await agent.close().catch(() => undefined);
    }
  });

  it('serve on a port already in use (PORT or HTTP_PORT) exits non-zero with one stderr line', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    try {
      const free = await freePort();
      const [httpsTaken, httpTaken] = [serve({ PORT: String(taken), HTTP_PORT: 'off' }), serve({ PORT: String(free), HTTP_PORT: String(taken) })];
      for (const proc of [httpsTaken, httpTaken]) {
        const exit = await waitForExit(proc);
        const { stdout, stderr } = proc.output();
        expect(exit.code, stderr).not.toBe(0);
        expect(exit.code).not.toBeNull();
        expect(stdout).toBe('');
        expect(lines(stderr), stderr).toHaveLength(1);
        expect(stderr).toContain('EADDRINUSE');
      }
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
