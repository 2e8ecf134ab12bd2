/**
 * Regenerates the README's pictures of the staff dashboard in docs/: a fresh server on a
 * temporary DATA_DIR, a demo hotel in Europe/Berlin whose stays are dated around the
 * hotel's today (PMS guests checked in through the real API, two walk-ins), photographed
 * in Debian's chromium at 1280 px:
 *
 *   room-board.png    the board, English, light theme
 *   board-today.png   the board with "Arrivals today" (or "Departures today") pressed
 *   board-german.png  the board in German, chosen with the header's language picker
 *   board-dark.png    the board in the dark theme
 *
 *   npm run screenshot
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import pino from 'pino';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config.js';
import { createHotel, createStaffUser, issueKeyPair } from '../src/operations.js';
import { createReceptionistGuest } from '../src/roster/receptionist-service.js';
import { startServer } from '../src/server.js';
import { launchChromium, logInToDashboard } from '../test/support/chromium.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOCS = path.join(ROOT, 'docs');
const HOTEL = { slug: 'grand-hotel', name: 'Grand Hotel', timeZone: 'Europe/Berlin' };
const STAFF = { email: 'frontdesk@grand-hotel.example', password: 'lantern-quartz-meadow-7' };
const VIEWPORT = { width: 1280, height: 800 };

/** A demo stay; `from` and `to` are days after the hotel's today (negative: before). */
interface DemoGuest {
  room: string;
  lastName: string;
  firstName: string;
  from: number;
  to: number;
  adults: number;
  children: number;
  language: string;
  nationality: string;
}

// Arrivals today: 102, 105, 203, 301. Departures today: 101, 204, 302. Overdue: 206.
const PMS_GUESTS: DemoGuest[] = [
  { room: '101', lastName: 'Lindqvist', firstName: 'Astrid', from: -3, to: 0, adults: 2, children: 0, language: 'sv', nationality: 'SE' },
  { room: '102', lastName: 'Moreau', firstName: 'Camille', from: 0, to: 3, adults: 2, children: 1, language: 'fr', nationality: 'FR' },
  { room: '103', lastName: 'Tanaka', firstName: 'Hiroshi', from: -1, to: 2, adults: 1, children: 0, language: 'ja', nationality: 'JP' },
  { room: '104', lastName: 'Schneider', firstName: 'Katrin', from: -2, to: 3, adults: 2, children: 2, language: 'de', nationality: 'DE' },
  { room: '201', lastName: "O'Brien", firstName: 'Siobhan', from: -1, to: 4, adults: 2, children: 0, language: 'en', nationality: 'IE' },
  { room: '202', lastName: 'Rossi', firstName: 'Giulia', from: -2, to: 1, adults: 2, children: 0, language: 'it', nationality: 'IT' },
  { room: '203', lastName: 'Kowalski', firstName: 'Piotr', from: 0, to: 4, adults: 2, children: 1, language: 'pl', nationality: 'PL' },
  { room: '204', lastName: 'García López', firstName: 'Mateo', from: -2, to: 0, adults: 1, children: 0, language: 'es', nationality: 'ES' },
  { room: '206', lastName: 'Okonkwo', firstName: 'Chinedu', from: -2, to: -1, adults: 1, children: 0, language: 'en', nationality: 'NG' },
  { room: '301', lastName: 'Haddad', firstName: 'Layla', from: 0, to: 2, adults: 2, children: 0, language: 'ar', nationality: 'LB' },
  { room: '302', lastName: 'van Dijk', firstName: 'Sanne', from: -1, to: 0, adults: 2, children: 2, language: 'nl', nationality: 'NL' },
  { room: '303', lastName: 'Novák', firstName: 'Tomáš', from: -1, to: 3, adults: 1, children: 0, language: 'cs', nationality: 'CZ' },
];

const WALK_INS: DemoGuest[] = [
  { room: '105', lastName: 'Becker', firstName: 'Jonas', from: 0, to: 1, adults: 1, children: 0, language: 'de', nationality: 'DE' },
  { room: '205', lastName: 'Silva', firstName: 'Ana', from: -1, to: 2, adults: 2, children: 0, language: 'pt', nationality: 'BR' },
];

/** The calendar date in a time zone, YYYY-MM-DD (as the dashboard computes the hotel's today). */
function todayIn(timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}

function addDays(isoDate: string, n: number): string {
  const d = new Date(`${isoDate}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/** A demo stay's fields as a check-in or a walk-in sends them. */
function stayData(g: DemoGuest, today: string) {
  const { room, from, to, children, ...rest } = g;
  return { ...rest, roomNumber: room, checkInDate: addDays(today, from), checkOutDate: addDays(today, to), children: children || null };
}

type Demo = Awaited<ReturnType<typeof startDemo>>;

/** A server on a temporary DATA_DIR with the demo hotel, its front-desk admin and a key pair. */
async function startDemo() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-shot-'));
  const server = await startServer(
    loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'silent' }),
    pino({ level: 'silent' }),
  );
  const db = server.database.db;
  const hotel = await createHotel(db, HOTEL.slug, HOTEL.name, HOTEL.timeZone);
  await createStaffUser(db, HOTEL.slug, STAFF.email, 'admin', STAFF.password);
  const keys = await issueKeyPair(db, HOTEL.slug);
  const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
  const close = async () => {
    await agent.close();
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { server, hotel, liveKey: keys.live, agent, base: `https://localhost:${server.httpsPort}`, close };
}

/** Checks the PMS guests in through the PMS API, as a PMS would. */
async function checkInPmsGuests(demo: Demo, today: string): Promise<void> {
  for (const g of PMS_GUESTS) {
    const res = await request(`${demo.base}/api/pms/v1/${HOTEL.slug}/guests/checkin`, {
      method: 'POST',
      dispatcher: demo.agent,
      headers: { authorization: `Bearer ${demo.liveKey}`, 'content-type': 'application/json', 'idempotency-key': `shot-${g.room}` },
      body: JSON.stringify({ pmsGuestId: `PMS-${g.room}`, ...stayData(g, today) }),
    });
    if (res.statusCode !== 200) throw new Error(`check-in ${g.room}: ${res.statusCode} ${await res.body.text()}`);
    await res.body.dump();
  }
}

async function addWalkIns(demo: Demo, today: string): Promise<void> {
  const desk = { type: 'system' as const, id: null, mode: null };
  for (const g of WALK_INS) {
    await createReceptionistGuest({ db: demo.server.database.db, bus: demo.server.bus }, demo.hotel.id, desk, {
      ...stayData(g, today),
      phone: null,
      email: null,
    });
  }
}

/** A logged-in board in a fresh browser context (its own storage and colour scheme). */
async function openBoard(browser: Browser, demo: Demo, colorScheme: 'light' | 'dark'): Promise<Page> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: VIEWPORT, colorScheme, locale: 'en-GB' });
  const page = await context.newPage();
  await logInToDashboard(page, demo.base, STAFF.email, STAFF.password);
  await page.locator(`[data-room="${WALK_INS[WALK_INS.length - 1]?.room}"]`).waitFor();
  return page;
}

async function save(page: Page, file: string): Promise<void> {
  await page.mouse.move(VIEWPORT.width - 5, VIEWPORT.height - 5); // no tile under the pointer (hover style)
  await page.waitForTimeout(300);
  const out = path.join(DOCS, file);
  await page.screenshot({ path: out, fullPage: true }); // the whole board, however tall
  await page.context().close();
  console.log(`wrote ${out}`);
}

/** Presses the busier of "Arrivals today" and "Departures today". */
async function pressBusierDayFilter(page: Page): Promise<void> {
  const count = async (key: string) => Number(await page.locator(`.day-filter-${key} .day-count`).textContent());
  const key = (await count('arriving')) >= (await count('departing')) ? 'arriving' : 'departing';
  await page.locator(`.day-filter-${key}`).click();
  await page.locator(`.day-filter-${key}[aria-pressed="true"]`).waitFor();
}

/** Chooses German in the header's language picker and waits for the board to be drawn in it. */
async function switchToGerman(page: Page): Promise<void> {
  const german = JSON.parse(fs.readFileSync(path.join(ROOT, 'public', 'dashboard', 'assets', 'i18n', 'de.json'), 'utf8')) as Record<string, string>;
  await page.locator('#language-picker').selectOption('de');
  await page.getByRole('heading', { name: german['Room board'] }).waitFor();
  await page.locator('#language-picker').blur(); // no focus ring in the picture
}

async function capture(browser: Browser, demo: Demo): Promise<void> {
  await save(await openBoard(browser, demo, 'light'), 'room-board.png');
  const today = await openBoard(browser, demo, 'light');
  await pressBusierDayFilter(today);
  await save(today, 'board-today.png');
  const german = await openBoard(browser, demo, 'light');
  await switchToGerman(german);
  await save(german, 'board-german.png');
  await save(await openBoard(browser, demo, 'dark'), 'board-dark.png');
}

async function main(): Promise<void> {
  const demo = await startDemo();
  try {
    const today = todayIn(HOTEL.timeZone);
    await checkInPmsGuests(demo, today);
    await addWalkIns(demo, today);
    const browser = await launchChromium();
    try {
      await capture(browser, demo);
    } finally {
      await browser.close();
    }
  } finally {
    await demo.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
