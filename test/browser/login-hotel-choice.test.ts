import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium } from '../support/chromium.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md "Staff accounts and login": the login page in a real browser
// (Debian's chromium through playwright-core) when one e-mail and password open accounts
// at two hotels: it shows the choice (a labelled select), and logs in to the hotel chosen.
// The server's side is tested on both engines in test/dashboard/staff-email-per-hotel.test.ts.

const PASSWORD = 'shared-password-1';

describe.each(testEngines().slice(0, 1))('login page: the hotel choice (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  let slugB: string;
  const email = `both-${engine}@choice.example`;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    slugB = `${t.slug}-b`;
    await t.addHotel(slugB);
    await createStaffUser(t.server.database.db, t.slug, email, 'receptionist', PASSWORD);
    await createStaffUser(t.server.database.db, slugB, email, 'admin', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function openLogin(): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) errors.push(msg.text());
    });
    await page.goto(`${t.baseUrl}/dashboard/#/login`);
    return { page, errors, close: () => context.close() };
  }

  it('the same e-mail and password at two hotels: the form asks which hotel (select labelled "Hotel", both hotels by name), and logs in to the one chosen', async () => {
    const { page, errors, close } = await openLogin();
    try {
      await page.locator('input[name=email]').fill(email);
      await page.locator('input[name=password]').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      const hotel = page.getByLabel('Hotel');
      // What the page said instead, should the choice not come (a failure names it).
      const shown = async () =>
        `${await hotel.count()} ${await page
          .locator('#alert')
          .innerText()
          .catch(() => '')} ${page.url()}`.trim();
      await expect.poll(shown).toMatch(/^1\b/);
      expect(await hotel.evaluate((el) => el.tagName)).toBe('SELECT');
      expect(await hotel.locator('option').allInnerTexts()).toEqual([`Test Hotel (${t.slug})`, `Hotel ${slugB} (${slugB})`]);
      // The choice has focus, and says why it is there.
      expect(await page.evaluate('document.activeElement && document.activeElement.name')).toBe('hotel');
      expect(await page.locator('.field[data-field=hotel] .hint').innerText()).toMatch(/several hotels/);
      expect(page.url()).toMatch(/#\/login$/);

      await hotel.selectOption(slugB);
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/board$/);
      await expect.poll(() => page.locator('header').innerText()).toContain(`Hotel ${slugB}`);
      // Hotel B's account (an admin), not hotel A's (a receptionist).
      const session = (await page.evaluate("fetch('/dashboard/api/session').then((r) => r.json())")) as { hotel: unknown; user: { role: string } };
      expect(session.hotel).toEqual({ slug: slugB, name: `Hotel ${slugB}`, timeZone: 'UTC' });
      expect(session.user.role).toBe('admin');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  it('editing the e-mail or password drops the choice; a wrong password shows the usual message and no hotel', async () => {
    const { page, errors, close } = await openLogin();
    try {
      await page.locator('input[name=email]').fill(email);
      await page.locator('input[name=password]').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => page.getByLabel('Hotel').count()).toBe(1);
      await page.locator('input[name=password]').fill('not-the-password');
      expect(await page.getByLabel('Hotel').count()).toBe(0);
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => page.locator('#alert').innerText()).toContain('E-mail or password is wrong.');
      expect(await page.getByLabel('Hotel').count()).toBe(0);
      expect(await page.locator('body').innerText()).not.toContain(slugB);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });
});
