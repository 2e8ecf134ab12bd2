import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { H2_ERROR, RawH2 } from '../support/h2-frames.js';
import { MAX_RESETS_PER_ADDRESS, MAX_RESETS_PER_CONNECTION } from '../../src/http/transport.js';
import { startTestServer, testEngines, type TestServer, pmsBase } from '../support/harness.js';

// README "Connections": an HTTP/2 client that resets the streams it opens before their
// answer (HEADERS then RST_STREAM, the "rapid reset" pattern) has its connection closed
// with GOAWAY ENHANCE_YOUR_CALM once it has reset too many, and an address that keeps
// doing it is refused new connections for a while. Streams reset before their answer
// write no request-log row. Loopback is all of 127.0.0.0/8: the attacker has an address
// of its own.

const certOf = (t: TestServer): string => fs.readFileSync(path.join(t.config.dataDir, 'tls', 'cert.pem'), 'utf8');

/** Waits for `p`, at most `ms`. */
const within = (p: Promise<unknown>, ms: number): Promise<unknown> => Promise.race([p, new Promise((resolve) => setTimeout(resolve, ms))]);

const rawClient = (t: TestServer, localAddress: string): Promise<RawH2> =>
  RawH2.connect({ host: '127.0.0.1', port: t.server.httpsPort, localAddress, ca: certOf(t) });

/**
 * Sends up to `count` HEADERS+RST_STREAM pairs for the PMS API's guest list, in batches,
 * until the server closes the connection; how many went out.
 */
async function rapidReset(t: TestServer, conn: RawH2, count: number, target: { slug: string; key: string }, batch = 50): Promise<number> {
  const headers: Array<[string, string]> = [
    [':method', 'GET'],
    [':scheme', 'https'],
    [':authority', `127.0.0.1:${t.server.httpsPort}`],
    [':path', `${pmsBase(target.slug)}/guests`],
    ['authorization', `Bearer ${target.key}`],
  ];
  let sent = 0;
  while (sent < count && !conn.socket.destroyed) {
    const frames: Buffer[] = [];
    for (let i = 0; i < batch && sent + i < count; i++) {
      const id = conn.newStream();
      frames.push(RawH2.request(id, headers), RawH2.rstStream(id, H2_ERROR.CANCEL));
    }
    if (!(await conn.write(Buffer.concat(frames)))) break;
    sent += frames.length / 2;
    // Let the server read in between, as a network would.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return sent;
}

/** Request-log rows of one client address, once a row written after them is there (rows are written in batches, in order). */
async function rowsFrom(t: TestServer, clientIp: string): Promise<number> {
  const marker = await t.api('GET', `${t.pmsBase}/guests`);
  expect(marker.status).toBe(200);
  const db = t.server.database.db;
  await expect
    .poll(
      async () =>
        (
          await db
            .selectFrom('request_log')
            .select('id')
            .where('id', '=', marker.body.requestId as string)
            .execute()
        ).length,
    )
    .toBe(1);
  return (await db.selectFrom('request_log').select('id').where('client_ip', '=', clientIp).execute()).length;
}

describe.each(testEngines())('HTTP/2 rapid reset (%s)', (engine) => {
  it('a connection that resets too many streams gets GOAWAY ENHANCE_YOUR_CALM and is closed; the reset streams write no request-log row; others are still answered', async () => {
    const t = await startTestServer(engine);
    let stop = false;
    try {
      // The attacker holds a key of its own hotel (its requests count against that key's limits).
      const target = { slug: 'reset-hotel', key: (await t.addHotel('reset-hotel')).live };
      // A normal client, answered all along (a few requests a second, within its key's limit).
      let answered = 0;
      const normal = (async () => {
        while (!stop && answered < 20) {
          const res = await t.api('GET', `${t.pmsBase}/guests`);
          expect(res.status).toBe(200);
          answered++;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })();

      const attacker = await rawClient(t, '127.0.0.9');
      // Well under nghttp2's own limit on resets (a burst of 1,000), far over the service's.
      const sent = await rapidReset(t, attacker, 5 * MAX_RESETS_PER_CONNECTION, target);
      await within(attacker.closed, 10_000);
      expect(attacker.socket.destroyed).toBe(true);
      expect(attacker.goaway?.errorCode).toBe(H2_ERROR.ENHANCE_YOUR_CALM);
      expect(sent).toBeLessThan(5 * MAX_RESETS_PER_CONNECTION);

      // The normal client was answered while the attack ran and after it.
      const before = answered;
      await expect.poll(() => answered).toBeGreaterThan(before + 2);
      stop = true;
      await normal;

      // A stream reset before its answer had no answer: no row (a handful may have been
      // answered before their reset arrived).
      expect(await rowsFrom(t, '127.0.0.9')).toBeLessThanOrEqual(5);
    } finally {
      stop = true;
      await t.close();
    }
  });

  it('an address that keeps resetting streams over new connections is refused new connections; other addresses are not', async () => {
    const t = await startTestServer(engine);
    try {
      const target = { slug: 'reset-hotel', key: (await t.addHotel('reset-hotel')).live };
      let calmed = 0;
      let refusedAfter: number | null = null;
      const most = Math.ceil(MAX_RESETS_PER_ADDRESS / MAX_RESETS_PER_CONNECTION) + 2;
      for (let i = 0; i < most; i++) {
        const conn = await rawClient(t, '127.0.0.11').catch(() => null);
        if (!conn) {
          refusedAfter = i;
          break;
        }
        await rapidReset(t, conn, 5 * MAX_RESETS_PER_CONNECTION, target);
        await within(conn.closed, 10_000);
        conn.destroy();
        if (conn.goaway?.errorCode === H2_ERROR.ENHANCE_YOUR_CALM) calmed++;
      }
      // Each connection was closed for its resets until the address as a whole was over its count.
      expect(refusedAfter).not.toBeNull();
      expect(calmed).toBe(refusedAfter);
      expect(refusedAfter).toBeLessThanOrEqual(Math.ceil(MAX_RESETS_PER_ADDRESS / MAX_RESETS_PER_CONNECTION) + 1);
      // Still refused; another address is served over HTTP/2.
      await expect(rawClient(t, '127.0.0.11')).rejects.toThrow();
      const other = await rawClient(t, '127.0.0.12');
      const id = other.newStream();
      await other.write(
        RawH2.request(id, [
          [':method', 'GET'],
          [':scheme', 'https'],
          [':authority', `127.0.0.1:${t.server.httpsPort}`],
          [':path', '/healthz'],
        ]),
      );
      expect(await other.until(() => other.answered.has(id))).toBe(true);
      other.destroy();
    } finally {
      await t.close();
    }
  });
});
