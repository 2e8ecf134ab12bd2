import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium } from '../support/chromium.js';
import { guest, startTestServer, type TestServer } from '../support/harness.js';

// Navigation seen in a real browser: a guest's page leads back ("←") to where the user came from
// (the list, the activity log), not always to the board.

const PASSWORD = 'lantern-quartz-meadow-7';

describe('going back from a guest', () => {
  let browser: Browser;
  let t: TestServer;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer('sqlite');
    await createStaffUser(t.server.database.db, t.slug, 'desk@nav.example', 'receptionist', PASSWORD);
    await t.post(`${t.pmsBase}/guests/checkin`, guest({ pmsGuestId: 'NAV-1', lastName: 'Navigator', roomNumber: '12' }));
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(page: Page, hash: string): Promise<void> {
    await page.goto(`${t.baseUrl}/dashboard/${hash}`);
  }

  it('"←" names and returns to the list when the guest was opened from the list, to the board from the board', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await open(page, '#/login');
      await page.locator('input[name=email]').fill('desk@nav.example');
      await page.locator('input[name=password]').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/board$/);

      await page.getByRole('link', { name: 'List' }).click();
      await page
        .getByRole('link', { name: /Navigator/ })
        .first()
        .click();
      await expect.poll(() => page.url()).toMatch(/#\/guest\//);
      const back = page.locator('.breadcrumb a');
      expect(await back.innerText()).toBe('← List');
      await back.click();
      await expect.poll(() => page.url()).toMatch(/#\/list$/);

      await page.getByRole('link', { name: 'Board' }).click();
      await page.locator('[data-room="12"]').click();
      await expect.poll(() => page.url()).toMatch(/#\/guest\//);
      expect(await page.locator('.breadcrumb a').innerText()).toBe('← Board');
    } finally {
      await context.close();
    }
  });
});
