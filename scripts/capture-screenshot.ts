/**
 * Regenerates docs/room-board.png, the room board shown in the README: a fresh server on
 * a temporary DATA_DIR, a demo hotel with PMS guests (checked in through the real API)
 * and two walk-ins, photographed in Debian's chromium at 1280 px.
 *
 *   npm run build && node dist/scripts/capture-screenshot.js
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { createHotel, createStaffUser, issueKeyPair } from '../src/operations.js';
import { createReceptionistGuest } from '../src/roster/receptionist-service.js';
import { startServer } from '../src/server.js';
import { launchChromium, logInToDashboard } from './chromium.js';

const PMS_GUESTS: Array<[string, string, string, string, string]> = [
  ['101', 'Lovelace', 'Ada', '2026-11-21', '2026-11-25'],
  ['102', 'Hopper', 'Grace', '2026-11-22', '2026-11-24'],
  ['104', 'Turing', 'Alan', '2026-11-23', '2026-11-27'],
  ['105', 'Noether', 'Emmy', '2026-11-20', '2026-11-24'],
  ['201', 'Curie', 'Marie', '2026-11-23', '2026-11-30'],
  ['202', 'Ramanujan', 'Srinivasa', '2026-11-22', '2026-11-26'],
  ['204', 'Hamilton', 'Margaret', '2026-11-23', '2026-11-24'],
  ['206', 'Shannon', 'Claude', '2026-11-19', '2026-11-25'],
  ['301', 'Franklin', 'Rosalind', '2026-11-23', '2026-11-28'],
  ['303', 'Lamarr', 'Hedy', '2026-11-21', '2026-11-23'],
];

async function main(): Promise<void> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const out = path.join(root, 'docs', 'room-board.png');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-shot-'));
  const server = await startServer(
    loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }),
    pino({ level: 'silent' }),
  );
  const db = server.database.db;
  const hotel = await createHotel(db, 'grand-hotel', 'Grand Hotel');
  await createStaffUser(db, 'grand-hotel', 'frontdesk@grand-hotel.example', 'admin', 'front-desk-password-1');
  const keys = await issueKeyPair(db, 'grand-hotel');
  const base = `https://localhost:${server.httpsPort}`;
  const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
  for (const [room, lastName, firstName, checkInDate, checkOutDate] of PMS_GUESTS) {
    const res = await request(`${base}/api/pms/v1/grand-hotel/guests/checkin`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${keys.live}`, 'content-type': 'application/json', 'idempotency-key': `shot-${room}` },
      body: JSON.stringify({ pmsGuestId: `PMS-${room}`, lastName, firstName, roomNumber: room, checkInDate, checkOutDate, adults: 2 }),
    });
    if (res.statusCode !== 200) throw new Error(`check-in ${room}: ${res.statusCode} ${await res.body.text()}`);
    await res.body.dump();
  }
  const desk = { type: 'system' as const, id: null, mode: null };
  for (const [room, lastName, firstName] of [
    ['103', 'Walker', 'Jo'],
    ['302', 'Okafor', 'Chidi'],
  ]) {
    await createReceptionistGuest({ db, bus: server.bus }, hotel.id, desk, {
      firstName: firstName ?? null,
      lastName: lastName ?? '',
      roomNumber: room ?? '',
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-24',
      phone: null,
      email: null,
      language: null,
      nationality: null,
      adults: 1,
      children: null,
    });
  }

  const browser = await launchChromium();
  try {
    const page = await (await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 760 } })).newPage();
    await logInToDashboard(page, base, 'frontdesk@grand-hotel.example', 'front-desk-password-1');
    await page.locator('[data-room="302"]').waitFor();
    await page.mouse.move(1270, 750); // no tile under the pointer (hover style)
    await page.waitForTimeout(300);
    await page.screenshot({ path: out });
    console.log(`wrote ${out}`);
  } finally {
    await browser.close();
    await agent.close();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
