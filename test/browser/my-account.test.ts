import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { DashboardClient, type EventStream } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "My account", in a real browser: the header's link leads to the
// user's sessions (this one marked, another with its device), "End all other sessions"
// logs the other out and closes its event stream, and the password change refuses a weak
// password with the reason under the field (in English and German), then takes a strong one.

const PASSWORD = 'lantern-quartz-meadow-7';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:121.0) Gecko/20100101 Firefox/121.0';

describe.each(testEngines())('My account in the browser (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  const email = `marguerite-${engine}@account.example`;
  let stream: EventStream | null = null;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    await createStaffUser(t.server.database.db, t.slug, email, 'receptionist', PASSWORD);
  });
  afterAll(async () => {
    stream?.close();
    await browser?.close();
    await t?.close();
  });

  const status = (page: Page) => page.locator('#status');
  const newPasswordError = (page: Page) => page.locator('[data-field=newPassword] .field-error');

  async function changePassword(page: Page, current: string, next: string): Promise<void> {
    await page.locator('input[name=currentPassword]').fill(current);
    await page.locator('input[name=newPassword]').fill(next);
    await page.locator('input[name=newPasswordConfirm]').fill(next);
    await page.locator('form[aria-labelledby=account-password] button[type=submit]').click();
  }

  it('lists the sessions, ends all others (logged out, stream closed), and changes the password: a weak one refused with its reason, a strong one taken', async () => {
    const other = new DashboardClient(t);
    expect((await other.login(email, PASSWORD, { 'user-agent': FIREFOX })).status).toBe(200);
    stream = await other.events();
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await logInToDashboard(page, t.baseUrl, email, PASSWORD);
      await page.getByRole('link', { name: 'My account' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/account$/);
      expect(await page.locator('h1').innerText()).toBe('My account');

      const rows = page.locator('table.table-sessions tbody tr');
      await expect.poll(() => rows.count()).toBe(2);
      const mine = page.locator('tr[data-current=true]');
      expect(await mine.locator('td').last().innerText()).toBe('This session');
      expect(await mine.locator('td').nth(1).innerText()).toBe('127.0.0.1');
      const theirs = page.locator('tr[data-current=false]');
      expect(await theirs.locator('td').first().innerText()).toBe('Firefox 121 · Windows');
      expect(await theirs.getByRole('button', { name: 'End this session' }).count()).toBe(1);

      await page.getByRole('button', { name: 'End all other sessions' }).click();
      await expect.poll(() => status(page).innerText()).toBe('Your other sessions have ended.');
      await expect.poll(() => rows.count()).toBe(1);
      expect(await page.getByRole('button', { name: 'End all other sessions' }).isVisible()).toBe(false);
      expect((await other.get('/session')).status).toBe(401);
      await expect.poll(() => stream?.hasEnded).toBe(true);

      // A weak new password: the reason under the field, in the form's words.
      await changePassword(page, PASSWORD, 'password1234');
      await expect
        .poll(() => newPasswordError(page).innerText())
        .toBe('New password is one of the most common passwords (or one with small changes): choose another, for example three or four unrelated words.');
      expect(await page.locator('input[name=newPassword]').getAttribute('aria-invalid')).toBe('true');
      // The same refusal in German; a password like the e-mail, by its own reason.
      await page.locator('#language-picker').selectOption('de');
      await expect.poll(() => page.locator('h1').innerText()).toBe('Mein Konto');
      await changePassword(page, PASSWORD, `Marguerite-${engine}-2024`);
      await expect
        .poll(() => newPasswordError(page).innerText())
        .toBe('Neues Passwort enthält die E-Mail-Adresse oder ähnelt ihr: Wählen Sie eines ohne die E-Mail-Adresse oder den Namen darin.');
      await page.locator('#language-picker').selectOption('en');
      await expect.poll(() => page.locator('h1').innerText()).toBe('My account');
      // A wrong current password is said so at its own field.
      await changePassword(page, 'not-my-password-1', 'ochre-pelican-tundra-31');
      await expect
        .poll(() => page.locator('[data-field=currentPassword] .field-error').innerText())
        .toBe('Current password is not your current password: type it again.');

      await changePassword(page, PASSWORD, 'ochre-pelican-tundra-31');
      await expect.poll(() => status(page).innerText()).toBe('Password changed. Your other sessions have ended.');
      expect(await newPasswordError(page).count()).toBe(0);
      // This session lives on; the new password opens a new one, the old does not.
      expect((await page.evaluate(() => fetch('/dashboard/api/session').then((r) => r.status))) as number).toBe(200);
      expect((await new DashboardClient(t).login(email, 'ochre-pelican-tundra-31')).status).toBe(200);
      expect((await new DashboardClient(t).login(email, PASSWORD)).status).toBe(401);
    } finally {
      await context.close();
    }
  });

  it('an admin ends every session of a user from the Staff page ("End sessions"): the user is logged out; the admin is not', async () => {
    const admin = `admin-${engine}@account.example`;
    const desk = `desk-${engine}@account.example`;
    await createStaffUser(t.server.database.db, t.slug, admin, 'admin', PASSWORD);
    await createStaffUser(t.server.database.db, t.slug, desk, 'receptionist', PASSWORD);
    const deskClient = await DashboardClient.loggedIn(t, desk, PASSWORD);
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await logInToDashboard(page, t.baseUrl, admin, PASSWORD);
      await page.getByRole('link', { name: 'Staff' }).click();
      const row = page.locator(`tr[data-email="${desk}"]`);
      await row.getByRole('button', { name: 'End sessions' }).click();
      await expect.poll(() => status(page).innerText()).toBe(`${desk} is logged out everywhere.`);
      expect((await deskClient.get('/session')).status).toBe(401);
      // The admin's own row has no such button; the admin's session lives on.
      expect(await page.locator(`tr[data-email="${admin}"] [data-action=end-sessions]`).count()).toBe(0);
      expect(await page.evaluate(() => fetch('/dashboard/api/session').then((r) => r.status))).toBe(200);
    } finally {
      await context.close();
    }
  });
});
