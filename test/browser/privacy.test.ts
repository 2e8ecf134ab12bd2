import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomId } from '../../src/domain/ids.js';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// Personal data in a real browser: a guest's page offers admins "Export personal data" and,
// once the guest has checked out, "Erase personal data" behind a confirmation that names
// what goes; receptionists see neither.

const PASSWORD = 'lantern-quartz-meadow-7';

async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) errors.push(msg.text());
  });
  return { context, page, errors };
}

function logIn(page: Page, baseUrl: string, email: string): Promise<void> {
  return logInToDashboard(page, baseUrl, email, PASSWORD);
}

describe.each(testEngines())('personal data in the browser (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  const admin = `admin-p-${engine}@hotel.example`;
  const desk = `desk-p-${engine}@hotel.example`;

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

  it('an admin exports, then erases a checked-out guest after a confirmation naming what goes; the page and the activity log show it anonymised; a receptionist sees neither action', async () => {
    const id = randomId(8);
    const p = {
      pmsGuestId: `PMS-B-${id}`,
      firstName: `Philippa${id}`,
      lastName: `Browserby${id}`,
      phone: '+4930555123',
      email: `p.${id.toLowerCase()}@example.org`,
    };
    const base = `${t.pmsBase}`;
    const checkedIn = await t.post(`${base}/guests/checkin`, guest({ ...p, roomNumber: `B${id}` }));
    const guestId = checkedIn.body.guestId as string;
    await t.post(`${base}/guests/update`, { pmsGuestId: p.pmsGuestId, phone: '+4930555999' });

    // In house: the admin can export but not erase.
    const a = await newPage(browser);
    try {
      await logIn(a.page, t.baseUrl, admin);
      await a.page.goto(`${t.baseUrl}/dashboard/#/guest/${guestId}`);
      await expect.poll(() => a.page.getByRole('heading', { level: 1 }).innerText()).toContain(p.lastName);
      await a.page.getByRole('link', { name: 'Export personal data' }).waitFor();
      expect(await a.page.getByRole('button', { name: 'Erase personal data' }).count()).toBe(0);

      await t.post(`${base}/guests/checkout`, { pmsGuestId: p.pmsGuestId });

      // The receptionist sees neither action on the checked-out guest.
      const d = await newPage(browser);
      try {
        await logIn(d.page, t.baseUrl, desk);
        await d.page.goto(`${t.baseUrl}/dashboard/#/guest/${guestId}`);
        await expect.poll(() => d.page.locator('.view-guest').getAttribute('data-status')).toBe('checked_out');
        expect(await d.page.getByRole('link', { name: 'Export personal data' }).count()).toBe(0);
        expect(await d.page.getByRole('button', { name: 'Erase personal data' }).count()).toBe(0);
        expect(d.errors).toEqual([]);
      } finally {
        await d.context.close();
      }

      await a.page.reload();
      await expect.poll(() => a.page.locator('.view-guest').getAttribute('data-status')).toBe('checked_out');
      // The export is a download of the JSON document.
      const [download] = await Promise.all([a.page.waitForEvent('download'), a.page.getByRole('link', { name: 'Export personal data' }).click()]);
      expect(download.suggestedFilename()).toBe(`guest-${guestId}.json`);
      const file = await download.path();
      const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
      expect(doc.stays).toHaveLength(1);
      expect(doc.stays[0]).toMatchObject({ guestId, firstName: p.firstName, lastName: p.lastName, phone: '+4930555999', email: p.email });

      // The confirmation names what is erased and what is kept; Cancel (focused first) erases nothing.
      const erase = a.page.getByRole('button', { name: 'Erase personal data' });
      await erase.click();
      const dialog = a.page.getByRole('dialog', { name: 'Erase this guest’s personal data?' });
      await dialog.waitFor();
      const text = await dialog.innerText();
      expect(text).toContain(p.pmsGuestId);
      expect(text).toMatch(/first and last name, phone, e-mail, language and nationality/);
      expect(text).toMatch(/activity entries/);
      expect(text).toMatch(/request-log body/);
      expect(text).toMatch(/Kept: rooms, dates/);
      expect(await a.page.evaluate('document.activeElement && document.activeElement.textContent')).toBe('Cancel');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      const kept = await t.server.database.db.selectFrom('guests').select(['last_name', 'anonymised_at']).where('id', '=', guestId).executeTakeFirstOrThrow();
      expect(kept).toEqual({ last_name: p.lastName, anonymised_at: null });

      await erase.click();
      await a.page.getByRole('dialog').getByRole('button', { name: 'Erase personal data' }).click();
      await expect.poll(() => a.page.getByRole('heading', { level: 1 }).innerText()).toBe('Anonymised guest');
      await expect
        .poll(() =>
          a.page
            .locator('#live-region, [aria-live]')
            .allInnerTexts()
            .then((x) => x.join(' ')),
        )
        .toMatch(/Personal data erased: 1 stay/);
      expect(await a.page.getByRole('button', { name: 'Erase personal data' }).count()).toBe(0);
      expect(await a.page.locator('[data-field="anonymisedAt"]').innerText()).toMatch(/Personal data\s+Removed/);
      const row = await t.server.database.db
        .selectFrom('guests')
        .select(['first_name', 'last_name', 'phone', 'email', 'anonymised_at'])
        .where('id', '=', guestId)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ first_name: null, last_name: '', phone: null, email: null });
      expect(row.anonymised_at).toEqual(expect.any(String));

      // The activity log still tells the story, without the name or the numbers.
      await a.page.goto(`${t.baseUrl}/dashboard/#/activity`);
      await a.page.locator('input[name=guest]').fill(p.pmsGuestId);
      await expect.poll(() => a.page.locator('.activity-entry').count()).toBe(4);
      for (const summary of await a.page.locator('.activity-list summary').all()) await summary.click();
      const log = await a.page.locator('.activity-list').innerText();
      expect(log).toContain('Personal data erased');
      expect(log).toContain(`Guest anonymised (PMS ${p.pmsGuestId})`);
      expect(log).toContain('Phone: changed (personal data removed)');
      expect(log).not.toContain(p.lastName);
      expect(log).not.toContain('+4930555999');
      expect(a.errors).toEqual([]);
    } finally {
      await a.context.close();
    }
  });
});
