/**
 * Webhook latency: the time from a live check-in's 200 response to the receiver's
 * verified arrival of its `guest.checked_in` event (signature checked with the
 * `standardwebhooks` package). 1,000 check-ins at 50 per second; prints median, p95, p99
 * and max, beside the floor measured in the same run: the same signed body POSTed
 * straight to the same receiver over a kept-alive connection (no service, no database),
 * and the ratio of the two.
 *
 *   npm run bench:webhooks
 *   DATABASE_URL=postgres://… npm run bench:webhooks
 *
 * Knobs: BENCH_CHECKINS (1000), BENCH_RATE per second (50), BENCH_DEAD_ENDPOINTS (40; 0
 * skips the second scenario).
 *
 * Second scenario, one hotel's dead receivers: hotel A gets BENCH_DEAD_ENDPOINTS endpoints
 * (more than WEBHOOK_MAX_ENDPOINTS_PER_HOTEL allows now: as if added under a higher limit)
 * at a receiver that accepts each request and never answers, and a few check-ins, so its
 * deliveries hang for their 10-second limit, are retried, and hang again. The benchmark's
 * hotel repeats its check-ins just before (the baseline) and while they hang; printed: its
 * p99 200 → arrival without and with hotel A's dead receivers, and the ratio of the two.
 *
 * One process: the driver, the server and the receiver share one event loop (and the
 * machine's two cores with the database), as the dashboard benchmark does. A negative
 * figure means the event arrived before the driver had read the 200: the event is sent
 * from the commit, the answer after it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { insertEndpoint } from '../src/db/repositories/webhook.repository.js';
import { createHotel, issueKeyPair } from '../src/operations.js';
import { startServer } from '../src/server.js';
import { addEndpoint } from '../src/webhooks/endpoints.js';
import { signedHeaders } from '../src/webhooks/signing.js';
import { describe, intEnv, now } from './lib/stats.js';

/** A receiver that verifies each delivery and stamps its arrival by the guest it names. */
function receiver(): { server: http.Server; arrivals: Map<string, number>; trust(secret: string): void; unverified: () => number } {
  const arrivals = new Map<string, number>();
  let hook: Webhook | null = null;
  let unverified = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        const event = hook?.verify(body, req.headers as Record<string, string>) as { type: string; data: { guest?: { pmsGuestId?: string } } };
        const id = event.data.guest?.pmsGuestId;
        if (event.type === 'guest.checked_in' && id && !arrivals.has(id)) arrivals.set(id, now());
        res.writeHead(204).end();
      } catch {
        unverified++;
        res.writeHead(400).end();
      }
    });
  });
  return {
    server,
    arrivals,
    trust: (secret) => {
      hook = new Webhook(secret);
    },
    unverified: () => unverified,
  };
}

/** A receiver that reads each request and never answers. */
function deadReceiver(): http.Server {
  return http.createServer((req) => {
    req.resume();
  });
}

const pace = async (started: number, i: number, rate: number): Promise<void> => {
  const wait = started + (i * 1000) / rate - now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
};

/** The floor: the same signed bodies straight to the receiver, kept-alive, at the same rate. */
async function floor(url: string, secret: string, total: number, rate: number, arrivals: Map<string, number>): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true });
  const sent = new Map<string, number>();
  const started = now();
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    await pace(started, i, rate);
    const id = `FLOOR-${i}`;
    const payload = JSON.stringify({
      id: `evt_floor_${i}`,
      type: 'guest.checked_in',
      createdAt: new Date().toISOString(),
      hotel: { slug: 'x' },
      data: { guest: { pmsGuestId: id } },
    });
    const headers = { ...signedHeaders([secret], `evt_floor_${i}`, payload, Date.now()), 'content-type': 'application/json' };
    sent.set(id, now());
    inFlight.push(
      new Promise<void>((resolve) => {
        const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', () => resolve());
        req.end(payload);
      }),
    );
  }
  await Promise.all(inFlight);
  agent.destroy();
  return [...sent].flatMap(([id, t]) => {
    const a = arrivals.get(id);
    return a === undefined ? [] : [a - t];
  });
}

async function main(): Promise<void> {
  const total = intEnv('BENCH_CHECKINS', 1000);
  const rate = intEnv('BENCH_RATE', 50);
  const deadEndpoints = intEnv('BENCH_DEAD_ENDPOINTS', 40);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-bench-hooks-'));
  const config = loadConfig({
    PORT: '0',
    HTTP_PORT: 'off',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: process.env.DATABASE_URL,
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  });
  const server = await startServer(config, pino({ level: 'silent' }));
  const rx = receiver();
  await new Promise<void>((resolve) => rx.server.listen(0, '127.0.0.1', resolve));
  const dead = deadReceiver();
  let openAtDead = 0;
  let mostOpenAtDead = 0;
  dead.on('request', (req: http.IncomingMessage) => {
    openAtDead++;
    mostOpenAtDead = Math.max(mostOpenAtDead, openAtDead);
    req.socket.once('close', () => openAtDead--);
  });
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(rx.server.address() as AddressInfo).port}/innsync`;
  const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' }, connections: 16 });
  try {
    const db = server.database.db;
    const slug = `bench-${Date.now().toString(36)}`;
    const hotel = await createHotel(db, slug, 'Webhook Benchmark Hotel');
    const endpoint = await addEndpoint(db, hotel.id, { url }, { allowPrivateNetworks: true, maxEndpointsPerHotel: config.webhookMaxEndpointsPerHotel });
    rx.trust(endpoint.secret);

    /** BENCH_CHECKINS live check-ins of the benchmark's hotel at BENCH_RATE; each one's 200 → verified arrival, and the raw stamps. */
    const measure = async (prefix: string) => {
      // The check-in limit is 60/min per key: one key per 50 check-ins.
      const keys: string[] = [];
      for (let i = 0; i < Math.ceil(total / 50); i++) keys.push((await issueKeyPair(db, slug)).live);
      const answered = new Map<string, number>();
      const sentAt = new Map<string, number>();
      let failures = 0;
      const started = now();
      const inFlight: Array<Promise<void>> = [];
      for (let i = 0; i < total; i++) {
        await pace(started, i, rate);
        const id = `${prefix}-${i}`;
        const body = JSON.stringify({
          pmsGuestId: id,
          lastName: `Guest${i}`,
          roomNumber: `${prefix}${i}`,
          checkInDate: '2026-11-23',
          checkOutDate: '2026-11-25',
        });
        sentAt.set(id, now());
        inFlight.push(
          request(`https://localhost:${server.httpsPort}/api/pms/v1/${slug}/guests/checkin`, {
            method: 'POST',
            dispatcher: agent,
            headers: { authorization: `Bearer ${keys[Math.floor(i / 50)] ?? ''}`, 'content-type': 'application/json', 'idempotency-key': `${prefix}-${i}` },
            body,
          }).then(async (res) => {
            await res.body.text();
            if (res.statusCode === 200) answered.set(id, now());
            else failures++;
          }),
        );
      }
      await Promise.all(inFlight);
      const sendSeconds = (now() - started) / 1000;
      const deadline = now() + 30_000;
      const arrived = (): number => [...answered.keys()].filter((id) => rx.arrivals.has(id)).length;
      while (arrived() < answered.size && now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const service = [...answered].flatMap(([id, t]) => {
        const a = rx.arrivals.get(id);
        return a === undefined ? [] : [a - t];
      });
      return { answered, sentAt, failures, sendSeconds, service, missing: answered.size - service.length };
    };
    const { answered, sentAt, failures, sendSeconds, service, missing } = await measure('HOOK');
    const since = (from: Map<string, number>, to: Map<string, number>): number[] =>
      [...answered.keys()].flatMap((id) => {
        const a = from.get(id);
        const b = to.get(id);
        return a === undefined || b === undefined ? [] : [b - a];
      });
    const base = await floor(url, endpoint.secret, total, rate, rx.arrivals);

    const fmt = (n: number): string => n.toFixed(1).padStart(9);
    const row = (name: string, v: number[]): void => {
      const d = describe(v);
      console.log(`${name.padEnd(44)}${fmt(d.median)}${fmt(d.p95)}${fmt(d.p99)}${fmt(d.max)}${String(v.length).padStart(7)}`);
    };
    console.log(`innsync webhook latency benchmark, ${new Date().toISOString()}`);
    console.log(
      `engine ${server.database.engine}, node ${process.version}, ${os.cpus().length} CPUs, ${total} live check-ins at ${rate}/s (sent in ${sendSeconds.toFixed(1)} s)`,
    );
    console.log('');
    console.log(`${'ms'.padEnd(44)}${'median'.padStart(9)}${'p95'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}${'n'.padStart(7)}`);
    row("check-in's 200 → verified arrival", service);
    row('check-in sent → its 200 read', since(sentAt, answered));
    row('check-in sent → verified arrival', since(sentAt, rx.arrivals));
    row('floor: signed POST → verified arrival', base);
    const p99 = describe(service).p99;
    const floorP99 = describe(base).p99;
    console.log('');
    console.log(
      `p99 200 → arrival: ${p99.toFixed(1)} ms (target < 100 ms: ${p99 < 100 ? 'MET' : 'NOT MET'}); floor p99 ${floorP99.toFixed(1)} ms; ratio ${(p99 / floorP99).toFixed(2)}× at p99`,
    );
    let invalid = failures > 0 || missing > 0;
    if (invalid) console.log(`INVALID RUN: ${failures} check-ins not answered 200, ${missing} events never arrived`);

    if (deadEndpoints > 0) {
      // The same run again, right before hotel A's receivers die: the baseline beside it (the first run warmed up).
      const calm = await measure('CALM');
      const slugA = `${slug}-dead`;
      const hotelA = await createHotel(db, slugA, 'Hotel With Dead Receivers');
      const keyA = (await issueKeyPair(db, slugA)).live;
      const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/never`;
      const at = new Date().toISOString();
      for (let i = 0; i < deadEndpoints; i++)
        await insertEndpoint(db, { hotelId: hotelA.id, url: `${deadUrl}/${i}`, eventTypes: null, secret: endpoint.secret, now: at });
      for (let i = 0; i < 5; i++) {
        const res = await request(`https://localhost:${server.httpsPort}/api/pms/v1/${slugA}/guests/checkin`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json', 'idempotency-key': `dead-${i}` },
          body: JSON.stringify({ pmsGuestId: `DEAD-${i}`, lastName: `Dead${i}`, roomNumber: `D${i}`, checkInDate: '2026-11-23', checkOutDate: '2026-11-25' }),
        });
        await res.body.text();
      }
      // Hotel A's deliveries are under way (hanging) before the benchmark's hotel starts again.
      const until = now() + 10_000;
      while (openAtDead === 0 && now() < until) await new Promise((r) => setTimeout(r, 20));
      const withDead = await measure('BUSY');
      const heldAtEnd = openAtDead;
      const calmP99 = describe(calm.service).p99;
      const withP99 = describe(withDead.service).p99;
      console.log('');
      console.log(
        `hotel A: ${deadEndpoints} endpoints at a receiver that never answers, 5 events each (requests held open there at most ${mostOpenAtDead}, at the end ${heldAtEnd})`,
      );
      console.log(`${'ms'.padEnd(44)}${'median'.padStart(9)}${'p95'.padStart(9)}${'p99'.padStart(9)}${'max'.padStart(9)}${'n'.padStart(7)}`);
      row("without A: check-in's 200 → verified arrival", calm.service);
      row("with A's dead receivers: 200 → arrival", withDead.service);
      console.log('');
      console.log(
        `p99 200 → arrival of the other hotel: ${calmP99.toFixed(1)} ms without hotel A's dead receivers, ${withP99.toFixed(1)} ms with them; ratio ${(withP99 / calmP99).toFixed(2)}×`,
      );
      if (calm.failures > 0 || calm.missing > 0 || withDead.failures > 0 || withDead.missing > 0) {
        console.log(
          `INVALID RUN: ${calm.failures + withDead.failures} check-ins not answered 200, ${calm.missing} events never arrived without hotel A's dead receivers and ${withDead.missing} with them`,
        );
        invalid = true;
      }
    }
    if (rx.unverified() > 0) {
      console.log(`INVALID RUN: ${rx.unverified()} signatures not verified`);
      invalid = true;
    }
    if (invalid) process.exitCode = 1;
  } finally {
    await agent.close();
    dead.closeAllConnections();
    dead.close();
    await server.close();
    rx.server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(2);
});
