import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import pino from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { toPayload } from '../../src/events/postgres-roster-events.js';
import type { RosterChange } from '../../src/events/roster-events.js';
import { createHotel, createStaffUser, issueKeyPair, type IssuedKeyPair } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createTestStorage, testEngines, databaseEnv } from '../support/harness.js';
import { SseParser } from '../support/sse.js';

// conventions.md 7: the dashboard's live events are fed by the roster-change
// bus; with PostgreSQL several instances share one database, so a change made through one
// instance must reach dashboards connected to another.

describe('roster notifications fit PostgreSQL NOTIFY payloads', () => {
  const change = (n: number): RosterChange => ({
    hotelId: 'hotel_1',
    at: '2026-11-23T10:00:00.000Z',
    changes: Array.from({ length: n }, (_, i) => ({
      action: 'guest.checked_in' as const,
      guestId: `guest_${i}`,
      pmsGuestId: `P-${i}`,
      roomNumber: String(1000 + i),
    })),
  });

  it('"one notification per transaction": a change that fits is sent whole', () => {
    const small = change(20);
    expect(JSON.parse(toPayload(small))).toEqual(small);
  });

  it('a 2,000-guest sync is one notification under 8,000 bytes that tells listeners to re-read (changes: [])', () => {
    const big = change(2000);
    const payload = toPayload(big);
    expect(Buffer.byteLength(payload)).toBeLessThan(8000);
    expect(JSON.parse(payload)).toEqual({ hotelId: big.hotelId, at: big.at, changes: [] });
  });
});

interface Stream {
  events: Array<{ event: string; data: unknown }>;
  close(): void;
}

/** Reads the dashboard's event stream of `baseUrl` with a session cookie. */
function openStream(baseUrl: string, cert: string, cookie: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const events: Stream['events'] = [];
    const req = https.get(`${baseUrl}/dashboard/api/events`, { ca: cert, servername: 'localhost', headers: { cookie } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`events answered ${res.statusCode}`));
      const parser = new SseParser();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        for (const m of parser.push(chunk)) events.push({ event: m.event, data: JSON.parse(m.data) as unknown });
      });
      resolve({ events, close: () => req.destroy() });
    });
    req.on('error', (err) => {
      if (!('code' in err) || err.code !== 'ECONNRESET') reject(err);
    });
  });
}

const postgres = testEngines().includes('postgres');

describe.runIf(postgres)('two instances on one PostgreSQL database', () => {
  let a: RunningServer;
  let b: RunningServer;
  let keys: IssuedKeyPair;
  let certA: string;
  let certB: string;
  const dirs: string[] = [];
  const slug = 'twin-hotel';

  beforeAll(async () => {
    const storage = await createTestStorage('postgres');
    const start = async (): Promise<RunningServer> => {
      const dataDir = fs.mkdtempSync(`${storage.dataDir}-`);
      dirs.push(dataDir);
      return startServer(
        loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: dataDir, ...databaseEnv(storage), LOG_LEVEL: 'silent' }),
        pino({ level: 'silent' }),
      );
    };
    a = await start();
    b = await start();
    dirs.push(storage.dataDir);
    certA = fs.readFileSync(path.join(dirs[0] ?? '', 'tls', 'cert.pem'), 'utf8');
    certB = fs.readFileSync(path.join(dirs[1] ?? '', 'tls', 'cert.pem'), 'utf8');
    await createHotel(a.database.db, slug, 'Twin Hotel');
    keys = await issueKeyPair(a.database.db, slug);
    await createStaffUser(a.database.db, slug, 'desk@twin.example', 'receptionist', 'lantern-quartz-meadow-7');
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  async function login(server: RunningServer, cert: string): Promise<string> {
    const agent = new Agent({ connect: { ca: cert, servername: 'localhost' } });
    try {
      const res = await request(`https://127.0.0.1:${server.httpsPort}/dashboard/api/login`, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'desk@twin.example', password: 'lantern-quartz-meadow-7' }),
      });
      await res.body.text();
      expect(res.statusCode).toBe(200);
      const setCookie = String(res.headers['set-cookie']);
      return setCookie.split(';')[0] ?? '';
    } finally {
      await agent.close();
    }
  }

  it('a live check-in through instance A reaches dashboards on A and on B, once each; a test-key one reaches neither', async () => {
    const onA = await openStream(`https://127.0.0.1:${a.httpsPort}`, certA, await login(a, certA));
    const onB = await openStream(`https://127.0.0.1:${b.httpsPort}`, certB, await login(b, certB));
    try {
      await expect.poll(() => onA.events.length + onB.events.length).toBe(2); // both `ready`
      const agent = new Agent({ connect: { ca: certA, servername: 'localhost' } });
      const checkIn = async (key: string, room: string) => {
        const res = await request(`https://127.0.0.1:${a.httpsPort}/api/pms/v1/${slug}/guests/checkin`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `twin-${room}` },
          body: JSON.stringify({ pmsGuestId: `P-${room}`, lastName: 'Twin', roomNumber: room, checkInDate: '2026-11-23', checkOutDate: '2026-11-24' }),
        });
        await res.body.text();
        return res.statusCode;
      };
      expect(await checkIn(keys.test, '11')).toBe(200);
      expect(await checkIn(keys.live, '12')).toBe(200);
      await agent.close();
      const rosterOf = (s: Stream) =>
        s.events.filter((e) => e.event === 'roster').map((e) => (e.data as RosterChange).changes.map((c) => `${c.action} ${c.roomNumber}`));
      await expect.poll(() => rosterOf(onB)).toEqual([['guest.checked_in 12']]);
      await expect.poll(() => rosterOf(onA)).toEqual([['guest.checked_in 12']]);
    } finally {
      onA.close();
      onB.close();
    }
  });
});
