import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addStaffUser, DashboardClient, DASHBOARD_API, send, STAFF_PASSWORD } from '../support/dashboard-client.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Second factors" (front-desk displays), in a real browser (Debian's
// chromium through playwright-core): the Staff page lists the paired displays with their
// name, who paired them and when, and "Unpair" (after a confirmation) ends the pairing and
// the display's session.

describe.each(testEngines())('paired displays on the Staff page (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  const adminEmail = 'admin@browser-displays.example';

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    await addStaffUser(t.server.database.db, t.slug, adminEmail, 'admin');
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('an admin sees the paired display, makes a named code (the list is read again), and unpairs one display after confirming: its session ends, the other’s stays', async () => {
    const desk = await addStaffUser(t.server.database.db, t.slug, 'desk@browser-displays.example', 'receptionist');
    const admin = await DashboardClient.loggedIn(t, adminEmail);
    /** Pairs a display over HTTPS with a code of this name; the display's session. */
    const pairOne = async (label: string): Promise<DashboardClient> => {
      const code = (await admin.post('/displays/pairing-code', { label })).body.code as string;
      const paired = await send(t, 'POST', `${DASHBOARD_API}/login`, {
        body: { email: desk.email, password: STAFF_PASSWORD, display: true, pairingCode: code },
      });
      expect(paired.status, paired.text).toBe(200);
      const client = new DashboardClient(t);
      client.adopt(paired);
      return client;
    };
    const display = await pairOne('Lobby screen');

    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await logInToDashboard(page, t.baseUrl, adminEmail, STAFF_PASSWORD);
      await page.goto(`${t.baseUrl}/dashboard/#/staff`);
      const row = page.locator('.table-displays tr[data-display-id]');
      await expect.poll(() => row.count()).toBe(1);
      const cells = await row.locator('td').allInnerTexts();
      expect([cells[0], cells[2]]).toEqual(['Lobby screen', adminEmail]);

      // Another display pairs meanwhile; a new code made on the page is shown once, and the list is read again.
      const side = await pairOne('Side desk');
      await page.getByLabel('Name of the display (optional)').fill('Back office');
      await page.getByRole('button', { name: 'Pair a display' }).click();
      await expect.poll(() => page.locator('.pairing-code code').count()).toBe(1);
      expect(await page.getByLabel('Name of the display (optional)').inputValue()).toBe('');
      await expect.poll(() => row.count()).toBe(2);

      const lobby = row.filter({ hasText: 'Lobby screen' });
      await lobby.getByRole('button', { name: 'Unpair' }).click();
      await expect.poll(() => page.locator('dialog[open]').innerText()).toContain('Unpair Lobby screen?');
      await page.locator('dialog [data-dialog-confirm]').click();
      await expect.poll(() => row.allInnerTexts()).toEqual([expect.stringContaining('Side desk')]);
      expect((await side.get('/session')).status).toBe(200);
      expect((await display.get('/session')).status).toBe(401);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
