import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { dateIn, plusDays } from '../support/dates.js';
import { guest, startTestServer, type TestServer } from '../support/harness.js';

// docs/dashboard.md, the board: an empty result says which filters hide the guests a
// search finds and offers to clear them; the board's filters and search are kept for the
// browser tab, shown where they are set.

const PASSWORD = 'lantern-quartz-meadow-7';
const DESK = 'desk@find.example';

describe('the board says why a search shows nothing', () => {
  let browser: Browser;
  let t: TestServer;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer('sqlite');
    await createStaffUser(t.server.database.db, t.slug, DESK, 'receptionist', PASSWORD);
    const today = dateIn('UTC');
    const stays = [
      { pmsGuestId: 'B-305', roomNumber: '305', lastName: 'Lovelace', checkInDate: plusDays(today, -1), checkOutDate: plusDays(today, 2) },
      { pmsGuestId: 'B-410', roomNumber: '410', lastName: 'Hopper', checkInDate: plusDays(today, -3), checkOutDate: plusDays(today, -1) },
    ];
    for (const s of stays) expect((await t.post(`${t.pmsBase}/guests/checkin`, guest(s))).status).toBe(200);
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await t?.close();
  });

  async function open(locale = 'en-GB'): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 }, locale, timezoneId: 'UTC' });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await logInToDashboard(page, t.baseUrl, DESK, PASSWORD);
    await page.locator('[data-room="305"]').waitFor();
    return { page, errors };
  }

  it('"Overdue" pressed and "305" searched: names the filter that hides room 305 and clears it on request', async () => {
    const { page, errors } = await open();
    await page.locator('[data-filter=overdue]').click();
    await page.locator('.board-search').fill('305');
    const empty = page.locator('.board .empty');
    await expect.poll(() => empty.innerText()).toBe('1 guest matches “305” but is hidden by the filters: Overdue. Clear the filters');
    await empty.locator('button').click();
    await page.locator('[data-room="305"]').waitFor();
    expect(await page.locator('[data-filter=overdue]').getAttribute('aria-pressed')).toBe('false');
    expect(await page.locator('.board-search').inputValue()).toBe('305');
    // A search nobody matches still says so plainly.
    await page.locator('.board-search').fill('999');
    await expect.poll(() => empty.innerText()).toBe('No room, name or PMS id contains “999”.');
    expect(errors).toEqual([]);
  });

  it('the source filter is named too, in the page language', async () => {
    const { page, errors } = await open('de-DE');
    await page.locator('.board-source').selectOption('receptionist');
    await page.locator('.board-search').fill('Lovelace');
    await expect
      .poll(() => page.locator('.board .empty').innerText())
      .toBe('1 Gast passt zu „Lovelace“, wird aber von den Filtern ausgeblendet: Walk-in. Filter aufheben');
    expect(errors).toEqual([]);
  });

  it('the filters and the search are kept when a guest is opened and the board shown again, and shown where they are set', async () => {
    const { page, errors } = await open();
    await page.locator('[data-filter=overdue]').click();
    await page.locator('.board-search').fill('Hop');
    await page.locator('[data-room="410"]').click();
    await page.locator('dl.details').waitFor();
    await page.goBack();
    await page.locator('[data-room="410"]').waitFor();
    expect(await page.locator('.board-search').inputValue()).toBe('Hop');
    expect(await page.locator('[data-filter=overdue]').getAttribute('aria-pressed')).toBe('true');
    expect(await page.locator('[data-room="305"]').count()).toBe(0);
    expect(errors).toEqual([]);
  });
});
