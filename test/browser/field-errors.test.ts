import fs from 'node:fs';
import pino from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createStaffUser } from '../../src/operations.js';
import { startServer } from '../../src/server.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { createTestStorage, startTestServer, type TestServer } from '../support/harness.js';

// docs/dashboard.md, forms: every problem the server finds is shown next to its field in
// plain words, in English as in every other language. The API's own messages are written
// for a PMS developer ("checkOutDate 2026-11-20 is before checkInDate 2026-11-26", "an
// assigned ISO 639-1 language code"); a receptionist reads the form's words instead.

const PASSWORD = 'lantern-quartz-meadow-7';
const DESK = 'desk@field-errors.example';
const ADMIN = 'admin@field-errors.example';

/** What a developer's message would give away: API field names, standards, JSON types. */
const API_WORDS = /checkInDate|checkOutDate|lastName|firstName|roomNumber|pmsGuestId|ISO 639|ISO 3166|E\.164|got null|got text|"absent"|\bnull\b/;

// Each test submits a form several times and waits for the server's answers: room for a loaded machine.
describe('field errors in plain words (walk-in, guest edit, staff)', { timeout: 120_000 }, () => {
  let browser: Browser;
  let t: TestServer;
  const contexts: BrowserContext[] = [];
  let room = 600;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer('sqlite');
    await createStaffUser(t.server.database.db, t.slug, DESK, 'receptionist', PASSWORD);
    await createStaffUser(t.server.database.db, t.slug, ADMIN, 'admin', PASSWORD);
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await t?.close();
  });

  async function open(locale: string, user = DESK): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 }, locale, timezoneId: 'UTC' });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await logInToDashboard(page, t.baseUrl, user, PASSWORD);
    return { page, errors };
  }

  /** Submits the form and returns the error shown at each field, once the server has answered. */
  async function submitAndRead(page: Page, expected: string[]): Promise<Record<string, string>> {
    await page.locator('form button[type=submit]').first().click();
    for (const name of expected) await page.locator(`[data-field=${name}] .field-error`).waitFor({ timeout: 20_000 });
    const shown: Record<string, string> = {};
    for (const node of await page.locator('.field:has(.field-error)').all()) {
      const name = (await node.getAttribute('data-field')) ?? '?';
      shown[name] = await node.locator('.field-error').innerText();
    }
    for (const [name, text] of Object.entries(shown)) expect(text, `the ${name} field's error`).not.toMatch(API_WORDS);
    return shown;
  }

  /** A fresh walk-in form (by way of the board: the same address again would keep the form as it was). */
  async function walkInForm(page: Page, fields: Record<string, string>): Promise<void> {
    await page.goto(`${t.baseUrl}/dashboard/#/board`);
    await page.goto(`${t.baseUrl}/dashboard/#/walk-in`);
    await page.locator('input[name=lastName]').waitFor();
    for (const [name, value] of Object.entries(fields)) await page.locator(`form [name=${name}]`).fill(value);
  }

  const storedGuest = async (roomNumber: string) => {
    const list = await t.api('GET', `${t.pmsBase}/guests?roomNumber=${encodeURIComponent(roomNumber)}`);
    return list.body.guests[0] as Record<string, unknown> | undefined;
  };

  it('in English, the walk-in form: dates in the wrong order, an empty name, a fraction of a person, an invisible character', async () => {
    const { page, errors } = await open('en-GB');
    const r = String(++room);
    await walkInForm(page, { roomNumber: r, checkInDate: '2026-11-26', checkOutDate: '2026-11-20' });
    expect(await submitAndRead(page, ['lastName', 'checkOutDate'])).toEqual({
      lastName: 'Last name is required.',
      checkOutDate: 'Check-out must be on or after check-in.',
    });

    await walkInForm(page, { lastName: 'Walker', roomNumber: `${r}\u200b`, adults: '1.5' });
    expect(await submitAndRead(page, ['roomNumber', 'adults'])).toEqual({
      roomNumber: 'Room holds an invisible character (such as a zero-width space): clear the field and type the room number again.',
      adults: 'Adults must be a whole number from 0 to 99.',
    });
    await walkInForm(page, { lastName: 'Walker', roomNumber: r, adults: '100' });
    expect(await submitAndRead(page, ['adults'])).toEqual({ adults: 'Adults must be a whole number from 0 to 99.' });
    expect(await page.locator('#alert').innerText()).toBe('Could not add the guest: Please correct the marked fields.');
    expect(await storedGuest(r)).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('in English, a language or nationality the server refuses (and one the form cannot tell) is explained without codes of standards', async () => {
    const { page, errors } = await open('en-GB');
    const r = String(++room);
    // Typed nonsense: the form says so itself and sends nothing.
    await walkInForm(page, { lastName: 'Walker', roomNumber: r, language: 'Klingon', nationality: 'Atlantis' });
    const own = await submitAndRead(page, ['language', 'nationality']);
    expect(own.language).toMatch(/^Language: “Klingon” is not a language on the list\./);
    expect(own.nationality).toMatch(/^Nationality: “Atlantis” is not a country on the list\./);

    // A code the page's list holds but the server does not (a page older than the server's
    // lists): the server's refusal, in the form's words. The request is the page's own, its
    // codes changed on the way.
    await page.route('**/dashboard/api/guests', async (route) => {
      const body = JSON.parse(route.request().postData() ?? '{}') as Record<string, unknown>;
      await route.continue({ postData: JSON.stringify({ ...body, language: 'qq', nationality: 'QQ' }) });
    });
    await walkInForm(page, { lastName: 'Walker', roomNumber: r, language: 'German', nationality: 'Germany' });
    expect(await submitAndRead(page, ['language', 'nationality'])).toEqual({
      language: 'Language: pick a language from the list, or type its two-letter code (such as “de”).',
      nationality: 'Nationality: pick a country from the list, or type its two-letter code (such as “DE”).',
    });
    await page.unroute('**/dashboard/api/guests');
    expect(await storedGuest(r)).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it("in English, the guest edit form: a cleared name is required, dates in the wrong order, an e-mail and a phone number's form", async () => {
    const { page, errors } = await open('en-GB');
    const r = String(++room);
    await walkInForm(page, { lastName: 'Editable', roomNumber: r, checkInDate: '2026-11-23', checkOutDate: '2026-11-26' });
    await page.locator('form button[type=submit]').click();
    await page.locator('.form-success a').first().click();
    await page.locator('form input[name=lastName]').waitFor();

    await page.locator('form input[name=lastName]').fill('');
    expect(await submitAndRead(page, ['lastName'])).toEqual({ lastName: 'Last name is required.' });

    await page.locator('form input[name=lastName]').fill('Editable');
    await page.locator('form input[name=checkOutDate]').fill('2026-11-20');
    expect(await submitAndRead(page, ['checkOutDate'])).toEqual({ checkOutDate: 'Check-out must be on or after check-in.' });

    await page.locator('form input[name=checkOutDate]').fill('2026-11-26');
    await page.locator('form input[name=email]').fill('not-an-address');
    await page.locator('form input[name=phone]').fill('030 123456');
    expect(await submitAndRead(page, ['email', 'phone'])).toEqual({
      email: 'Email must be an e-mail address such as name@example.com.',
      phone: 'Phone must be in international format: + and the country code, e.g. +4930123456.',
    });
    expect(await storedGuest(r)).toMatchObject({ lastName: 'Editable', checkOutDate: '2026-11-26', email: null, phone: null });
    expect(errors).toEqual([]);
  });

  it('in English, adding a staff user: a short password states its length', async () => {
    const { page, errors } = await open('en-GB', ADMIN);
    await page.goto(`${t.baseUrl}/dashboard/#/staff`);
    const form = page.locator('form', { has: page.locator('input[name=password]') });
    await form.locator('input[name=email]').fill('new-desk@field-errors.example');
    await form.locator('input[name=password]').fill('short');
    await form.locator('button[type=submit]').click();
    await form.locator('[data-field=password] .field-error').waitFor({ timeout: 20_000 });
    const shown = await form.locator('[data-field=password] .field-error').innerText();
    expect(shown).toBe('Password must be at least 10 characters.');
    expect(errors).toEqual([]);
  });

  it('in English, the first-run setup form: a slug, a blank name, an address, a short password and a second entry that differs', async () => {
    // A storage without a hotel: the setup link works.
    const storage = await createTestStorage('sqlite');
    const env = { PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: storage.dataDir, LOG_LEVEL: 'silent' };
    const fresh = await startServer(loadConfig(env), pino({ level: 'silent' }));
    try {
      const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 }, locale: 'en-GB', timezoneId: 'UTC' });
      contexts.push(context);
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      const link = new URL(fresh.setupUrl ?? '');
      await page.goto(`https://127.0.0.1:${fresh.httpsPort}${link.pathname}${link.hash}`);
      await page.locator('input[name=hotelSlug]').waitFor();
      await page.locator('input[name=hotelSlug]').fill('Grand Hotel');
      await page.locator('input[name=hotelName]').fill('   ');
      await page.locator('input[name=email]').fill('admin at hotel');
      await page.locator('input[name=password]').fill('short');
      await page.locator('input[name=passwordConfirm]').fill('shorter');
      expect(await submitAndRead(page, ['hotelSlug', 'hotelName', 'email', 'password', 'passwordConfirm'])).toEqual({
        hotelSlug: 'Hotel slug must be 2 to 63 characters of a–z, 0–9 and “-”, starting with a letter, e.g. grand-hotel.',
        hotelName: 'Hotel name is required.',
        email: 'Admin email must be an e-mail address such as name@example.com.',
        password: 'Password must be at least 10 characters.',
        passwordConfirm: 'The two passwords do not match.',
      });
      expect(errors).toEqual([]);
    } finally {
      await fresh.close();
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    }
  });

  it('in German, the same errors in German words', async () => {
    const { page, errors } = await open('de-DE');
    const r = String(++room);
    await walkInForm(page, { lastName: 'Walker', roomNumber: r, checkInDate: '2026-11-26', checkOutDate: '2026-11-20' });
    expect(await submitAndRead(page, ['checkOutDate'])).toEqual({ checkOutDate: 'Die Abreise darf nicht vor der Anreise liegen.' });
    await walkInForm(page, { roomNumber: r, adults: '1.5' });
    expect(await submitAndRead(page, ['lastName', 'adults'])).toEqual({
      lastName: 'Nachname ist erforderlich.',
      adults: 'Erwachsene muss eine ganze Zahl von 0 bis 99 sein.',
    });
    expect(errors).toEqual([]);
  });
});
