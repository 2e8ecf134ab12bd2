/**
 * Validation stall: how long the service stops answering while it reads, parses and checks
 * a hostile sync body sent with a test key. The real server (SQLite in a temporary
 * DATA_DIR, HTTPS) runs in this process beside the client, so the gap between two answers
 * of a /healthz poller is the longest turn of the server's event loop (plus the client's
 * own work, which is the same for every body).
 *
 *   npm run bench:validation-stall
 *
 * Printed per body: its size, the answer (status, code, first error), the sync's time and
 * the longest gap between probe answers while it was in flight, and that gap's ratio to
 * the one measured for a small valid sync in the same run (the baseline). BENCH_ROUNDS
 * (3) runs each body that many times; the largest gap is kept.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { createHotel, issueKeyPair } from '../src/operations.js';
import { startServer } from '../src/server.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

const guest = (i: number): Record<string, unknown> => ({
  pmsGuestId: `G${i}`,
  roomNumber: `${i}`,
  lastName: 'Lovelace',
  firstName: 'Ada',
  checkInDate: '2026-11-23',
  checkOutDate: '2026-11-24',
  email: 'ada@example.com',
  language: 'en',
  adults: 2,
});

const BODIES: Array<[string, string]> = [
  ['baseline: 10 valid guests', JSON.stringify({ syncMode: 'full', guests: Array.from({ length: 10 }, (_, i) => guest(i)) })],
  ['130,000 × {"a":1}', JSON.stringify({ guests: Array.from({ length: 130_000 }, () => ({ a: 1 })) })],
  ['520,000 × 0', `{"guests":[${'0,'.repeat(519_999)}0]}`],
  ['20,000 × {"a":1}', JSON.stringify({ syncMode: 'full', guests: Array.from({ length: 20_000 }, () => ({ a: 1 })) })],
  [
    '20,000 × 18 unknown members',
    `{"syncMode":"full","guests":[${Array.from({ length: 20_000 }, () => `{${Array.from({ length: 18 }, (_, i) => `"m${i}":0`).join(',')}}`).join(',')}]}`,
  ],
  [
    '20,000 guests, one pmsGuestId',
    JSON.stringify({ syncMode: 'full', guests: Array.from({ length: 20_000 }, (_, i) => ({ ...guest(i), pmsGuestId: 'SAME' })) }),
  ],
  ['20,000 valid guests (the limit)', JSON.stringify({ syncMode: 'full', guests: Array.from({ length: 20_000 }, (_, i) => guest(i)) })],
];

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-stall-'));
  const config = loadConfig({ PORT: '0', HTTP_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' });
  const server = await startServer(config, pino({ level: 'silent' }));
  const cert = fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
  const agent = new Agent({ connect: { ca: cert, servername: 'localhost' } });
  const base = `https://127.0.0.1:${server.httpsPort}`;
  const slug = 'stall-bench';
  await createHotel(server.database.db, slug, 'Stall bench');
  try {
    let baseline = NaN;
    for (const [name, text] of BODIES) {
      const body = Buffer.from(text);
      let worstGap = 0;
      let worstTime = 0;
      let answer = '';
      for (let r = 0; r < rounds; r++) {
        // The sync limit is 10 an hour per key: a fresh pair for each request.
        const pair = await issueKeyPair(server.database.db, slug);
        let done = false;
        let last = performance.now();
        let gap = 0;
        const poller = (async () => {
          while (!done) {
            const res = await request(`${base}/healthz`, { dispatcher: agent });
            await res.body.text();
            const now = performance.now();
            gap = Math.max(gap, now - last);
            last = now;
          }
        })();
        const started = performance.now();
        last = started;
        const res = await request(`${base}/api/pms/v1/${slug}/guests/sync`, {
          method: 'POST',
          dispatcher: agent,
          body,
          headers: { authorization: `Bearer ${pair.test}`, 'content-type': 'application/json', 'idempotency-key': `stall-${name.length}-${r}-${Date.now()}` },
        });
        const text = await res.body.text();
        const ended = performance.now();
        done = true;
        gap = Math.max(gap, ended - last);
        await poller;
        worstGap = Math.max(worstGap, gap);
        worstTime = Math.max(worstTime, ended - started);
        const parsed = JSON.parse(text) as { code?: string; status?: string; errors?: Array<{ field: string; code: string }> };
        answer =
          `${res.statusCode} ${parsed.code ?? parsed.status ?? ''} ${parsed.errors?.[0] ? `${parsed.errors[0].field} ${parsed.errors[0].code}` : ''}`.trim();
      }
      if (Number.isNaN(baseline)) baseline = worstGap;
      console.log(
        `${name.padEnd(34)} ${(body.length / 1e6).toFixed(2).padStart(5)} MB  ${answer.padEnd(44)} sync ${worstTime.toFixed(0).padStart(6)} ms  max probe gap ${worstGap.toFixed(1).padStart(7)} ms  ×${(worstGap / baseline).toFixed(1)} baseline`,
      );
    }
  } finally {
    await agent.close();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
