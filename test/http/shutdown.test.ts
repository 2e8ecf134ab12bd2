import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { startTestServer, testEngines } from '../support/harness.js';

// README.md, "Operating it": SIGTERM/SIGINT stop accepting, finish in-flight requests and exit. A
// connection that never sends a request (a browser's preconnected socket) must not hold
// the shutdown, and a request in flight must still be answered.

describe.each(testEngines())('shutdown (%s)', (engine) => {
  it('close() finishes although a client holds a TLS connection that never sent a request; the connection is closed', async () => {
    const t = await startTestServer(engine);
    const socket = tls.connect({ host: '127.0.0.1', port: t.server.httpsPort, servername: 'localhost', rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', () => resolve());
      socket.once('error', reject);
    });
    const closedByServer = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    // A request in flight during the shutdown is still answered.
    const inFlight = t.api('GET', `${t.pmsBase}/guests`);
    await t.close();
    await closedByServer;
    expect((await inFlight).status).toBe(200);
  });
});
