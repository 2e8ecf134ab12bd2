import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

// Webhooks in a real browser: an admin adds an endpoint on the Webhooks page, copies the
// secret shown once, sends a test event, sees a check-in's delivery listed, and sends it
// again; the receiver verifies every delivery with the secret the page showed.

const PASSWORD = 'lantern-quartz-meadow-7';

describe.each(testEngines())('the Webhooks page (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  const receiver = new WebhookReceiver();
  const admin = `admin-w-${engine}@hotel.example`;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    await createStaffUser(t.server.database.db, t.slug, admin, 'admin', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await receiver.close();
    await t?.close();
  });

  function logIn(page: Page): Promise<void> {
    return logInToDashboard(page, t.baseUrl, admin, PASSWORD);
  }

  it('add an endpoint (secret shown once), a refused URL explained at its field, a test event and a check-in delivered, "Send again"', async () => {
    const url = await receiver.listen();
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await logIn(page);
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await page.getByText('No endpoints yet.').waitFor();

      // A URL the service refuses: the reason at the field.
      await page.getByLabel('URL').fill('ftp://hooks.example.com/in');
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      await expect.poll(() => page.locator('[data-field=url] .field-error').innerText()).toContain('https://');

      await page.getByLabel('URL').fill(url);
      await page.getByLabel('Check-in (guest.checked_in)').check();
      // The test event is sent on request, not subscribed to.
      expect(await page.getByLabel('Test event (webhook.test)').count()).toBe(0);
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = await page.locator('code[data-secret=signing]').innerText();
      expect(secret).toMatch(/^whsec_/);
      receiver.trust(secret);
      const panel = page.locator('section.endpoint');
      await expect.poll(() => panel.count()).toBe(1);
      expect(await panel.innerText()).toContain('Check-in');

      await panel.getByRole('button', { name: 'Send a test event' }).click();
      await expect.poll(() => receiver.accepted().map((r) => r.body.type)).toEqual(['webhook.test']);

      await t.post(`${t.pmsBase}/guests/checkin`, guest({ pmsGuestId: 'BROWSER-HOOK' }));
      await expect.poll(() => receiver.accepted().map((r) => r.body.type)).toEqual(['webhook.test', 'guest.checked_in']);

      // The list shows both deliveries; "Send again" on the check-in delivers it once more, same webhook-id.
      await page.reload();
      const row = page.locator('tr[data-status=succeeded]', { hasText: 'Check-in' });
      await row.waitFor();
      expect(await row.innerText()).toContain('HTTP 200');
      await row.getByRole('button', { name: 'Send again' }).click();
      await expect.poll(() => receiver.accepted().length).toBe(3);
      const [, first, again] = receiver.accepted();
      expect(again?.id).toBe(first?.id);
      // The secret is gone once the page is left.
      await page.getByRole('link', { name: 'Board' }).click();
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.locator('section.endpoint').waitFor();
      expect(await page.locator('code[data-secret]').count()).toBe(0);
      expect(errors).toEqual([]);
      expect(receiver.unverified).toHaveLength(0);
    } finally {
      await context.close();
    }
  });
});
