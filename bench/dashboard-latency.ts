/**
 * Dashboard latency: the time from an API check-in's 200 response to the guest's tile in
 * an open room board, in a real browser (Debian's chromium through playwright-core).
 * 200 live check-ins at 20 per second; prints median, p95 and max, beside the same
 * figures for the bare server-sent event reaching the page (a second EventSource in the
 * same page, no rendering): the baseline, measured in the same run.
 *
 *   npm run bench:dashboard
 *   DATABASE_URL=postgres://… npm run bench:dashboard
 *
 * Knobs: BENCH_CHECKINS (200), BENCH_RATE per second (20), CHROMIUM_PATH (/usr/bin/chromium).
 *
 * Clocks: the driver and the page both read `performance.timeOrigin + performance.now()`,
 * milliseconds since the epoch on the same machine. A negative figure means the tile (or
 * event) was there before the driver had read the 200 response: the server publishes the
 * change when it commits, just before it answers.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { createHotel, createStaffUser, issueKeyPair } from '../src/operations.js';
import { startServer } from '../src/server.js';
import { launchChromium, logInToDashboard } from '../test/support/chromium.js';
import { describe, intEnv, now } from './lib/stats.js';

/**
 * Runs in the page (plain JavaScript: the project's TypeScript has no DOM types). Records
 * when each room's tile enters the DOM, when the next frame is drawn after that, and when
 * the bare event for it reaches a second EventSource in the same page.
 */
const RECORDER = `(() => {
  window.__tile = {}; window.__paint = {}; window.__event = {};
  const stamp = () => performance.timeOrigin + performance.now();
  const scan = () => {
    for (const el of document.querySelectorAll('[data-room]')) {
      const room = el.dataset.room;
      if (window.__tile[room] === undefined) {
        window.__tile[room] = stamp();
        requestAnimationFrame(() => { window.__paint[room] = stamp(); });
      }
    }
  };
  new MutationObserver(scan).observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['data-room'] });
  const es = new EventSource('/dashboard/api/events');
  es.addEventListener('roster', (e) => {
    const t = stamp();
    for (const c of JSON.parse(e.data).changes) if (window.__event[c.roomNumber] === undefined) window.__event[c.roomNumber] = t;
  });
})()`;

async function main(): Promise<void> {
  const total = intEnv('BENCH_CHECKINS', 200);
  const rate = intEnv('BENCH_RATE', 20);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-bench-dash-'));
  const config = loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL, LOG_LEVEL: 'silent' });
  const server = await startServer(config, pino({ level: 'silent' }));
  const db = server.database.db;
  const slug = `bench-${Date.now().toString(36)}`;
  await createHotel(db, slug, 'Benchmark Hotel');
  const password = 'benchmark-password-1';
  const email = `desk-${Date.now().toString(36)}@bench.example`;
  await createStaffUser(db, slug, email, 'receptionist', password);
  // The check-in limit is 60/min per key: one key per 50 check-ins.
  const keys: string[] = [];
  for (let i = 0; i < Math.ceil(total / 50); i++) keys.push((await issueKeyPair(db, slug)).live);
  const base = `https://localhost:${server.httpsPort}`;
  const cert = fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
  const agent = new Agent({ connect: { ca: cert, servername: 'localhost' }, connections: 16 });

  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await logInToDashboard(page, base, email, password);
    await page.evaluate(RECORDER);
    await page.waitForTimeout(500); // the second EventSource is connected

    const answered: Record<string, number> = {};
    let failures = 0;
    const tag = Date.now().toString(36);
    const started = now();
    const inFlight: Array<Promise<void>> = [];
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / rate;
      const wait = due - now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const room = `L${String(i + 1).padStart(4, '0')}`;
      const body = JSON.stringify({
        pmsGuestId: `LAT-${tag}-${i}`,
        lastName: `Guest${i}`,
        firstName: 'Bench',
        roomNumber: room,
        checkInDate: '2026-11-23',
        checkOutDate: '2026-11-25',
      });
      inFlight.push(
        request(`${base}/api/pms/v1/${slug}/guests/checkin`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${keys[Math.floor(i / 50)] ?? ''}`, 'content-type': 'application/json', 'idempotency-key': `lat-${tag}-${i}` },
          body,
        }).then(async (res) => {
          await res.body.text();
          if (res.statusCode === 200) answered[room] = now();
          else failures++;
        }),
      );
    }
    await Promise.all(inFlight);
    const sendSeconds = (now() - started) / 1000;
    await page.waitForFunction(`Object.keys(window.__paint).length >= ${Object.keys(answered).length}`, undefined, { timeout: 15_000 }).catch(() => undefined);
    const seen = (await page.evaluate('({ tile: window.__tile, paint: window.__paint, event: window.__event })')) as Record<
      'tile' | 'paint' | 'event',
      Record<string, number>
    >;

    const tile: number[] = [];
    const paint: number[] = [];
    const event: number[] = [];
    let missing = 0;
    for (const [room, t200] of Object.entries(answered)) {
      const t = seen.tile[room];
      const p = seen.paint[room];
      const e = seen.event[room];
      if (t === undefined || p === undefined) missing++;
      else {
        tile.push(t - t200);
        paint.push(p - t200);
      }
      if (e !== undefined) event.push(e - t200);
    }
    const fmt = (n: number): string => n.toFixed(1).padStart(8);
    const row = (name: string, v: number[]): void => {
      const d = describe(v);
      console.log(`${name.padEnd(40)}${fmt(d.median)}${fmt(d.p95)}${fmt(d.max)}${String(v.length).padStart(8)}`);
    };
    console.log(`innsync dashboard latency benchmark, ${new Date().toISOString()}`);
    console.log(
      `engine ${server.database.engine}, node ${process.version}, ${os.cpus().length} CPUs, ${total} live check-ins at ${rate}/s (sent in ${sendSeconds.toFixed(1)} s), chromium ${browser.version()}`,
    );
    console.log('');
    console.log(`${'ms after the 200 response'.padEnd(40)}${'median'.padStart(8)}${'p95'.padStart(8)}${'max'.padStart(8)}${'n'.padStart(8)}`);
    row('tile in the room board (DOM)', tile);
    row('tile drawn (next animation frame)', paint);
    row('baseline: bare event in the page', event);
    const tileP95 = describe(paint).p95;
    const eventP95 = describe(event).p95;
    console.log('');
    console.log(
      `p95 drawn tile: ${tileP95.toFixed(1)} ms (target < 250 ms: ${tileP95 < 250 ? 'MET' : 'NOT MET'}); baseline p95 ${eventP95.toFixed(1)} ms; difference ${(tileP95 - eventP95).toFixed(1)} ms`,
    );
    if (failures > 0 || missing > 0) {
      console.log(`INVALID RUN: ${failures} check-ins not answered 200, ${missing} tiles never appeared`);
      process.exitCode = 1;
    }
    await context.close();
  } finally {
    await browser.close();
    await agent.close();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
