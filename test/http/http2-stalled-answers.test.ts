import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { H2_ERROR, RawH2 } from '../support/h2-frames.js';
import { MAX_UNSENT_BYTES_PER_CONNECTION } from '../../src/http/transport.js';
import { spawnServe, storageEnv, waitForExit, waitForHttps } from '../cli/cli-helpers.js';
import { createTestStorage, startTestServer, testEngines } from '../support/harness.js';
import { freePort } from '../support/postgres-cluster.js';

// README "Connections": an HTTP/2 client may take an answer as slowly as flow control
// lets it, or not at all (INITIAL_WINDOW_SIZE 0): the answer then waits in the server's
// memory. An answer that makes no progress for SEND_TIMEOUT_SECONDS is reset, a connection
// holds a bounded amount of unsent answer bytes, and a shutdown ends within
// SHUTDOWN_TIMEOUT_SECONDS whatever such clients do. The API reference (openapi.json, about
// 500 KB) is the largest answer anyone may ask for without a key.

const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const OPENAPI = '/api/pms/v1/openapi.json';

/** A raw HTTP/2 connection that grants no flow-control window to any stream. */
function zeroWindowClient(port: number, ca: string): Promise<RawH2> {
  return RawH2.connect({ host: '127.0.0.1', port, ca, settings: [[SETTINGS_INITIAL_WINDOW_SIZE, 0]] });
}

/** Opens `n` streams for the API reference; their ids once every answer's HEADERS arrived (HEADERS are not flow-controlled). */
async function askForReference(conn: RawH2, port: number, n: number): Promise<number[]> {
  const ids: number[] = [];
  const frames: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const id = conn.newStream();
    ids.push(id);
    frames.push(
      RawH2.request(id, [
        [':method', 'GET'],
        [':scheme', 'https'],
        [':authority', `127.0.0.1:${port}`],
        [':path', OPENAPI],
      ]),
    );
  }
  await conn.write(Buffer.concat(frames));
  expect(await conn.until(() => ids.every((id) => conn.answered.has(id) || conn.resets.has(id)))).toBe(true);
  return ids;
}

describe.each(testEngines())('HTTP/2 answers a client does not take (%s)', (engine) => {
  it('SEND_TIMEOUT_SECONDS: answers a zero-window client never takes are reset (CANCEL); the connection and the service still answer', async () => {
    const t = await startTestServer(engine, { SEND_TIMEOUT_SECONDS: '1' });
    const ca = fs.readFileSync(path.join(t.config.dataDir, 'tls', 'cert.pem'), 'utf8');
    const conn = await zeroWindowClient(t.server.httpsPort, ca);
    try {
      const ids = await askForReference(conn, t.server.httpsPort, 10);
      // Not a byte of DATA can go out; the wait is bounded well past the 1 s timeout.
      const reset = conn.until(() => ids.every((id) => conn.resets.get(id) === H2_ERROR.CANCEL));
      expect(await Promise.race([reset, new Promise((resolve) => setTimeout(() => resolve('still open'), 10_000))])).toBe(true);
      expect(ids.some((id) => (conn.dataBytes.get(id) ?? 0) > 0)).toBe(false);
      // The connection is not closed for it: a request that needs no window is answered on it.
      const probe = conn.newStream();
      await conn.write(
        RawH2.request(probe, [
          [':method', 'HEAD'],
          [':scheme', 'https'],
          [':authority', `127.0.0.1:${t.server.httpsPort}`],
          [':path', '/healthz'],
        ]),
      );
      expect(await conn.until(() => conn.answered.has(probe))).toBe(true);
      expect((await t.api('GET', `${t.pmsBase}/guests`)).status).toBe(200);
    } finally {
      conn.destroy();
      await t.close();
    }
  });

  it('a connection holds a bounded amount of unsent answer bytes: past it, the answers that do not move are reset at once', async () => {
    // A send timeout far longer than the test: only the byte bound can reset anything.
    const t = await startTestServer(engine, { SEND_TIMEOUT_SECONDS: '600' });
    const ca = fs.readFileSync(path.join(t.config.dataDir, 'tls', 'cert.pem'), 'utf8');
    const conn = await zeroWindowClient(t.server.httpsPort, ca);
    try {
      const streams = 60;
      const ids = await askForReference(conn, t.server.httpsPort, streams);
      const size = Buffer.byteLength(JSON.stringify((await t.api('GET', OPENAPI)).body));
      // 60 answers of ~500 KB is ~30 MB; at most the bound's worth may stay.
      const mayStay = Math.ceil(MAX_UNSENT_BYTES_PER_CONNECTION / size) + 1;
      const shed = conn.until(() => ids.filter((id) => conn.resets.get(id) === H2_ERROR.CANCEL).length >= streams - mayStay);
      expect(await Promise.race([shed, new Promise((resolve) => setTimeout(() => resolve('still held'), 10_000))])).toBe(true);
    } finally {
      conn.destroy();
      await t.close();
    }
  });

  it('SIGTERM ends the real process within SHUTDOWN_TIMEOUT_SECONDS although a client holds answers it never takes', async () => {
    const storage = await createTestStorage(engine);
    const port = await freePort();
    // The send timeout is left at its default (30 s): only the shutdown deadline may end these streams.
    const proc = spawnServe({ ...storageEnv(storage), HOST: '127.0.0.1', PORT: String(port), HTTP_PORT: 'off', SHUTDOWN_TIMEOUT_SECONDS: '2' });
    let conn: RawH2 | undefined;
    try {
      const { agent, cert } = await waitForHttps(proc, storage.dataDir, port);
      await agent.close();
      conn = await zeroWindowClient(port, cert);
      await askForReference(conn, port, 5);
      proc.child.kill('SIGTERM');
      // Bounded wait: the process must be gone long before the client would give up (never).
      expect(await waitForExit(proc, 15_000)).toEqual({ code: 0, signal: null });
      await conn.closed;
    } finally {
      conn?.destroy();
      if (!proc.hasExited()) proc.child.kill('SIGKILL');
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    }
  });
});
