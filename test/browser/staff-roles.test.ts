import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Changing a role", in a real browser: on the Staff page an admin makes
// a receptionist an admin (after a confirmation), the row shows the new role, the admin's
// own row offers no change, and the Access trail's security events list the change with
// its roles before and after.

const PASSWORD = 'front-desk-password-1';

describe.each(testEngines())('changing a role on the Staff page (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  const admin = `admin-roles-${engine}@hotel.example`;
  const desk = `desk-roles-${engine}@hotel.example`;

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

  it('an admin makes a receptionist an admin: the row shows it, and the security events list the change', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await logInToDashboard(page, t.baseUrl, admin, PASSWORD);
      await page.goto(`${t.baseUrl}/dashboard/#/staff`);
      const row = page.locator(`tr[data-email="${desk}"]`);
      await row.waitFor();
      expect(await row.locator('.role-badge').innerText()).toBe('Receptionist');
      expect(await page.locator(`tr[data-email="${admin}"] [data-action=change-role]`).count()).toBe(0);

      // Cancelled first: nothing changes.
      await row.getByRole('button', { name: 'Make admin' }).click();
      const dialog = page.getByRole('dialog', { name: `Make ${desk} an admin?` });
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      expect(await row.locator('.role-badge').innerText()).toBe('Receptionist');

      await row.getByRole('button', { name: 'Make admin' }).click();
      await dialog.getByRole('button', { name: 'Make admin' }).click();
      await expect.poll(() => row.locator('.role-badge').innerText()).toBe('Admin');
      await expect.poll(() => page.locator('#status').innerText()).toBe(`${desk} is now an admin.`);
      await row.getByRole('button', { name: 'Make receptionist' }).waitFor();
      const stored = await t.server.database.db.selectFrom('staff_users').select('role').where('email', '=', desk).executeTakeFirstOrThrow();
      expect(stored.role).toBe('admin');

      await page.getByRole('link', { name: 'Access trail' }).click();
      const events = page.getByRole('list', { name: 'Security events' }).getByRole('listitem');
      await page.getByLabel('Kind').selectOption({ label: 'Staff role changed' });
      await expect
        .poll(() => events.allInnerTexts())
        .toEqual([expect.stringMatching(new RegExp(`^Staff role changed: ${desk} \\(Receptionist → Admin\\) · .+ · by ${admin} · 127\\.0\\.0\\.1$`))]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
