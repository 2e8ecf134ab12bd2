import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { dateIn, plusDays } from '../support/dates.js';
import { DashboardClient } from '../support/dashboard-client.js';
import { guest, startTestServer, type TestServer } from '../support/harness.js';
import { scaled } from '../support/test-run.js';

// The front desk's screen: its language (the browser's by default, a switcher that
// remembers), the dark theme, a tablet's width, the board's source filter and floors,
// the walk-in form's defaults and errors, and the read-only front-desk display.

const PASSWORD = 'lantern-quartz-meadow-7';
const ADMIN = 'admin@frontdesk.example';
const DESK = 'desk@frontdesk.example';
const ZONE = 'Europe/Berlin';

describe("the front desk's screen", () => {
  let browser: Browser;
  let t: TestServer;
  const today = dateIn(ZONE);
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer('sqlite');
    const db = t.server.database.db;
    await createStaffUser(db, t.slug, ADMIN, 'admin', PASSWORD);
    await createStaffUser(db, t.slug, DESK, 'receptionist', PASSWORD);
    const admin = await DashboardClient.loggedIn(t, ADMIN, PASSWORD);
    expect((await admin.patch('/hotel', { timeZone: ZONE })).status).toBe(200);
    const stays = [
      { pmsGuestId: 'F-101', roomNumber: '101', lastName: 'Lovelace', firstName: 'Ada', language: 'de', nationality: 'DE' },
      { pmsGuestId: 'F-102', roomNumber: '102', lastName: 'Hopper', firstName: 'Grace' },
      { pmsGuestId: 'F-201', roomNumber: '201', lastName: 'Turing', firstName: 'Alan' },
    ];
    for (const s of stays)
      expect((await t.post(`${t.pmsBase}/guests/checkin`, guest({ ...s, checkInDate: plusDays(today, -1), checkOutDate: plusDays(today, 2) }))).status).toBe(
        200,
      );
    expect((await admin.post('/guests', { lastName: 'Walker', roomNumber: '202', checkInDate: today, checkOutDate: plusDays(today, 1) })).status).toBe(201);
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await t?.close();
  });

  async function open(options: BrowserContextOptions = {}): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 }, timezoneId: 'UTC', ...options });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    return { page, errors };
  }

  async function logIn(page: Page, email: string, options: { display?: boolean } = {}): Promise<void> {
    await logInToDashboard(page, t.baseUrl, email, PASSWORD, options);
    await page.locator('[data-room="101"]').waitFor();
  }

  it("speaks the browser's language: German texts, German dates, languages and countries by name", async () => {
    const { page, errors } = await open({ locale: 'de-DE' });
    await page.goto(`${t.baseUrl}/dashboard/#/login`);
    await expect.poll(() => page.locator('h1').innerText()).toBe('Anmelden');
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
    await logIn(page, DESK);
    expect(await page.locator('h1').innerText()).toBe('Zimmerübersicht');
    expect(await page.locator('[data-filter=all]').innerText()).toContain('Im Haus');
    const tile = await page.locator('[data-room="101"]').innerText();
    expect(tile).toContain('3 Nächte, noch 2');
    // The date as German readers write it ("Di., 24. Nov."), never as ISO.
    expect(tile).toMatch(/[A-Z][a-z]\., \d{1,2}\. [A-Z][a-zä]{2}/);
    expect(tile).not.toMatch(/\d{4}-\d{2}-\d{2}/);
    await page.locator('[data-room="101"]').click();
    const details = page.locator('dl.details');
    await details.waitFor();
    expect(await details.locator('[data-field=language] dd').innerText()).toBe('Deutsch');
    expect(await details.locator('[data-field=nationality] dd').innerText()).toBe('Deutschland');
    expect(await details.locator('[data-field=nationality] dt').innerText()).toBe('Nationalität');
    // The server's field errors, next to their fields, in German.
    await page.goto(`${t.baseUrl}/dashboard/#/walk-in`);
    await page.locator('input[name=email]').fill('x');
    await page.locator('input[name=phone]').fill('030 123');
    await page.locator('form button[type=submit]').click();
    await page.locator('[data-field=lastName] .field-error').waitFor();
    expect(await page.locator('[data-field=lastName] .field-error').innerText()).toBe('Nachname ist erforderlich.');
    expect(await page.locator('[data-field=email] .field-error').innerText()).toBe('E-Mail muss eine E-Mail-Adresse wie name@example.com sein.');
    expect(await page.locator('[data-field=phone] .field-error').innerText()).toBe(
      'Telefon muss im internationalen Format sein: + und die Ländervorwahl, z. B. +4930123456.',
    );
    expect(await page.locator('#alert').innerText()).toBe('Der Gast konnte nicht hinzugefügt werden: Bitte korrigieren Sie die markierten Felder.');
    expect(errors).toEqual([]);
  });

  it('the language switcher changes the page at once and is remembered after a reload', async () => {
    const { page, errors } = await open({ locale: 'en-GB' });
    await logIn(page, DESK);
    expect(await page.locator('h1').innerText()).toBe('Room board');
    await page.locator('#language-picker').selectOption('fr');
    await expect.poll(() => page.locator('h1').innerText()).toBe('Tableau des chambres');
    expect(await page.locator('nav[aria-label="Menu principal"] a[aria-current=page]').innerText()).toBe('Tableau');
    await page.reload();
    await expect.poll(() => page.locator('h1').innerText()).toBe('Tableau des chambres');
    expect(await page.locator('#language-picker').inputValue()).toBe('fr');
    await page.locator('#language-picker').selectOption('es');
    await expect.poll(() => page.locator('h1').innerText()).toBe('Tablero de habitaciones');
    await page.locator('#language-picker').selectOption('en');
    await expect.poll(() => page.locator('h1').innerText()).toBe('Room board');
    expect(errors).toEqual([]);
  });

  it('follows a dark system setting', async () => {
    const luminance = async (page: Page): Promise<number> =>
      page.evaluate(`(() => {
        const [r, g, b] = (getComputedStyle(document.body).backgroundColor.match(/\\d+/g) ?? []).map(Number);
        return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
      })()`);
    const light = await open({ colorScheme: 'light' });
    await logIn(light.page, DESK);
    const dark = await open({ colorScheme: 'dark' });
    await logIn(dark.page, DESK);
    expect(await luminance(light.page)).toBeGreaterThan(0.8);
    expect(await luminance(dark.page)).toBeLessThan(0.15);
    const text = await dark.page.evaluate(`getComputedStyle(document.querySelector('.tile-name')).color`);
    expect(text).not.toBe('rgb(26, 31, 38)'); // not the light theme's ink on a dark tile
  });

  it('fits a tablet (820 px): no page scrolls sideways and no table cell cuts its words', async () => {
    const { page, errors } = await open({ viewport: { width: 820, height: 1180 } });
    await logIn(page, ADMIN);
    for (const route of ['board', 'list', 'activity', 'walk-in', 'keys', 'requests', 'staff', 'webhooks']) {
      await page.goto(`${t.baseUrl}/dashboard/#/${route}`);
      await page.locator('h1').waitFor();
      await page.waitForLoadState('networkidle');
      const fit: { page: boolean; cut: string[] } = await page.evaluate(`({
        page: document.documentElement.scrollWidth <= window.innerWidth,
        cut: [...document.querySelectorAll('td, th')].filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.textContent),
      })`);
      expect({ route, ...fit }).toEqual({ route, page: true, cut: [] });
    }
    expect(errors).toEqual([]);
  });

  it('the board filters by source and groups rooms by floor (remembered)', async () => {
    const { page, errors } = await open();
    await logIn(page, DESK);
    const rooms = () => page.locator('.board [data-room]').evaluateAll((els) => els.map((e) => e.getAttribute('data-room')));
    await page.locator('select.board-source').selectOption('receptionist');
    await expect.poll(rooms).toEqual(['202']);
    await page.locator('select.board-source').selectOption('pms');
    await expect.poll(rooms).toEqual(['101', '102', '201']);
    await page.locator('select.board-source').selectOption('');
    await page.getByRole('button', { name: 'Group by floor' }).click();
    const floors = page.locator('section.floor');
    await expect
      .poll(() => floors.evaluateAll((els) => els.map((e) => e.querySelector('h2')?.textContent)))
      .toEqual(['Floor 1 (2 guests)', 'Floor 2 (2 guests)']);
    expect(await page.locator('section.floor[data-floor="2"] [data-room]').evaluateAll((els) => els.map((e) => e.getAttribute('data-room')))).toEqual([
      '201',
      '202',
    ]);
    await page.reload();
    await page.locator('section.floor').first().waitFor();
    expect(await page.getByRole('button', { name: 'Group by floor' }).getAttribute('aria-pressed')).toBe('true');
    expect(errors).toEqual([]);
  });

  it("the walk-in form starts from the hotel's today to tomorrow and shows every problem at once, in plain words, next to its field", async () => {
    const { page, errors } = await open();
    await logIn(page, DESK);
    await page.goto(`${t.baseUrl}/dashboard/#/walk-in`);
    expect(await page.locator('input[name=checkInDate]').inputValue()).toBe(today);
    expect(await page.locator('input[name=checkOutDate]').inputValue()).toBe(plusDays(today, 1));
    await page.locator('input[name=email]').fill('not-an-address');
    await page.locator('input[name=adults]').fill('120');
    await page.locator('form button[type=submit]').click();
    const errorOf = (name: string) => page.locator(`[data-field="${name}"] .field-error`);
    await errorOf('lastName').waitFor();
    // One round: the server's answer lists them all; none hidden by a check in the page.
    for (const name of ['lastName', 'roomNumber', 'email', 'adults']) expect(await errorOf(name).count(), name).toBe(1);
    expect(await errorOf('lastName').innerText()).toMatch(/^Last name /);
    expect(await errorOf('adults').innerText()).toBe('Adults must be a whole number from 0 to 99.');
    const all = (await page.locator('.field-error').allInnerTexts()).join(' ');
    expect(all).not.toMatch(/integer|format "|camelCase|lastName|roomNumber/);
    expect(await page.locator('input[name=email]').getAttribute('aria-invalid')).toBe('true');
    // Languages by name in a searchable list, the code as the value.
    const option = page.locator('[data-field=language] datalist option[value=de]');
    expect(await option.getAttribute('label')).toBe('German');
    expect(errors).toEqual([]);
  });

  it("the Staff and Webhooks forms send what was typed and show all the server's answers at once", async () => {
    const { page, errors } = await open();
    await logIn(page, ADMIN);
    await page.goto(`${t.baseUrl}/dashboard/#/staff`);
    const addUser = page.locator('form[aria-labelledby=add-user]');
    await addUser.locator('input[name=password]').fill('short');
    await addUser.locator('button[type=submit]').click();
    await addUser.locator('[data-field=email] .field-error').waitFor();
    expect(await addUser.locator('[data-field=email] .field-error').innerText()).toBe('Email must be an e-mail address such as name@example.com.');
    expect(await addUser.locator('[data-field=password] .field-error').innerText()).toBe('Password must be at least 10 characters.');
    await page.goto(`${t.baseUrl}/dashboard/#/webhooks`);
    await page.locator('form[aria-labelledby=add-endpoint] button[type=submit]').click();
    await expect.poll(() => page.locator('[data-field=url] .field-error').innerText()).toBe('URL is required.');
    expect(errors).toEqual([]);
  });

  it('a front-desk display shows the board read-only: no other page, no links into guests, no walk-in', async () => {
    // What a person's board shows on each tile, to compare with the display's (which gets fewer guest fields).
    const person = await open();
    await logIn(person.page, DESK);
    const tileTexts = (p: Page): Promise<string[]> => p.locator('.board .tile').allInnerTexts();
    const personTiles = await tileTexts(person.page);
    const { page, errors } = await open();
    await logIn(page, DESK, { display: true });
    expect(await tileTexts(page)).toEqual(personTiles);
    expect(personTiles.find((text) => text.includes('Lovelace, Ada'))).toContain('3 nights, 2 left');
    // The search finds a PMS id on the display too.
    await page.locator('.board-search').fill('F-102');
    await expect.poll(() => page.locator('.board [data-room]').count()).toBe(1);
    expect(await page.locator('.board [data-room]').getAttribute('data-room')).toBe('102');
    await page.locator('.board-search').fill('');
    expect(await page.locator('nav a').allInnerTexts()).toEqual(['Board']);
    expect(await page.locator('.role-badge').innerText()).toBe('Front-desk display');
    expect(await page.locator('.board a').count()).toBe(0);
    expect(await page.locator('.board [data-room]').count()).toBe(4);
    expect(await page.getByRole('link', { name: 'Add walk-in' }).count()).toBe(0);
    await page.goto(`${t.baseUrl}/dashboard/#/list`);
    await page.waitForURL(/#\/board$/);
    // A check-in still reaches the open display, live.
    expect((await t.post(`${t.pmsBase}/guests/checkin`, guest({ pmsGuestId: 'F-301', roomNumber: '301', lastName: 'Live' }))).status).toBe(200);
    await page.locator('[data-room="301"]').waitFor({ timeout: scaled(5_000) });
    expect(errors).toEqual([]);
  });
});
