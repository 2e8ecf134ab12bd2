import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomId } from '../../src/domain/ids.js';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Access trail", in a real browser: a receptionist opens a guest's page;
// the admin's Access trail lists it (e-mail, address, the guest's name linking to its page),
// filters by staff member, and shows the security events; a receptionist is refused the page.

const PASSWORD = 'front-desk-password-1';

async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) errors.push(msg.text());
  });
  return { context, page, errors };
}

describe.each(testEngines())('the Access trail page (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  const admin = `admin-trail-${engine}@hotel.example`;
  const desk = `desk-trail-${engine}@hotel.example`;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    await createStaffUser(t.server.database.db, t.slug, admin, 'admin', PASSWORD);
    await createStaffUser(t.server.database.db, t.slug, desk, 'receptionist', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("an admin sees a receptionist's view of a guest, filters by staff member, and sees the security events; a receptionist is refused the page", async () => {
    const lastName = `Tracey${randomId(6)}`;
    const checkedIn = await t.post(`${t.pmsBase}/guests/checkin`, guest({ lastName, firstName: 'Tom' }));
    const guestId = checkedIn.body.guestId as string;

    const d = await newPage(browser);
    const a = await newPage(browser);
    try {
      // The receptionist opens the guest's page; the Access trail is not in their menu, and its address is refused.
      await logInToDashboard(d.page, t.baseUrl, desk, PASSWORD);
      await d.page.goto(`${t.baseUrl}/dashboard/#/guest/${guestId}`);
      await expect.poll(() => d.page.getByRole('heading', { level: 1 }).innerText()).toContain(lastName);
      expect(await d.page.getByRole('link', { name: 'Access trail' }).count()).toBe(0);
      await d.page.goto(`${t.baseUrl}/dashboard/#/access-trail`);
      await d.page.getByText('This page is for hotel administrators.').waitFor();

      // The admin opens the same guest, then the Access trail.
      await logInToDashboard(a.page, t.baseUrl, admin, PASSWORD);
      await a.page.goto(`${t.baseUrl}/dashboard/#/guest/${guestId}`);
      await expect.poll(() => a.page.getByRole('heading', { level: 1 }).innerText()).toContain(lastName);
      await a.page.getByRole('link', { name: 'Access trail' }).click();
      await a.page.getByRole('heading', { level: 1, name: 'Access trail' }).waitFor();
      const entries = a.page.getByRole('list', { name: 'Access entries' }).getByRole('listitem');
      // Each saw the roster when the board opened after sign-in, then the guest's page.
      await expect.poll(() => entries.count()).toBe(4);
      const deskEntries = entries.filter({ hasText: desk });
      expect(await deskEntries.filter({ hasText: 'Saw the in-house list' }).innerText()).toMatch(
        new RegExp(`${desk} · .+ · 127\\.0\\.0\\.1 · Saw the in-house list: every guest in the house`),
      );
      const deskEntry = deskEntries.filter({ hasText: 'Opened the guest' });
      expect(await deskEntry.innerText()).toMatch(new RegExp(`${desk} · .+ · 127\\.0\\.0\\.1 · Opened the guest: ${lastName}, Tom`));
      expect(await deskEntry.getByRole('link', { name: `${lastName}, Tom` }).getAttribute('href')).toBe(`#/guest/${guestId}`);

      // Filtered by staff member: the receptionist's entry alone, then the admin's alone.
      const staff = a.page.getByRole('search', { name: 'Filter the access trail' }).getByLabel('Staff member');
      await expect.poll(() => staff.locator('option').count()).toBe(3);
      await staff.selectOption({ label: desk });
      await expect.poll(() => entries.allInnerTexts()).toEqual([expect.stringContaining(desk), expect.stringContaining(desk)]);
      await staff.selectOption({ label: admin });
      await expect.poll(() => entries.allInnerTexts()).toEqual([expect.stringContaining(admin), expect.stringContaining(admin)]);

      // The security events: both accounts were added from the command line.
      const events = a.page.getByRole('list', { name: 'Security events' }).getByRole('listitem');
      await expect
        .poll(() => events.allInnerTexts())
        .toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^Staff member added: ${desk} · .+ · by Command line`))]));
      // One account's events: the receptionist's only.
      const eventFilters = a.page.getByRole('search', { name: 'Filter the security events' });
      await eventFilters.getByLabel('Staff member').selectOption({ label: desk });
      await expect.poll(() => events.allInnerTexts()).toEqual([expect.stringMatching(new RegExp(`^Staff member added: ${desk} · `))]);
      await eventFilters.getByLabel('Kind').selectOption({ label: 'Failed sign-in' });
      await a.page.getByText('Nothing matches these filters.').waitFor();

      // The guest's name leads to its page.
      await staff.selectOption({ label: desk });
      await expect.poll(() => entries.count()).toBe(2);
      await entries.getByRole('link', { name: `${lastName}, Tom` }).click();
      await expect.poll(() => a.page.getByRole('heading', { level: 1 }).innerText()).toContain(lastName);
      expect([...a.errors, ...d.errors]).toEqual([]);
    } finally {
      await a.context.close();
      await d.context.close();
    }
  });
});
