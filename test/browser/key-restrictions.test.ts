import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Keys: what a pair may do": in a real browser, an admin issues a key pair limited to
// networks, a last day and reading, sees them in the table, changes them later, sees a
// wrong network next to its field, and is warned of a pair whose last day is within 14 days.

const PASSWORD = 'front-desk-password-1';

/** The UTC calendar date `n` days from now (the page and the server count days in UTC). */
const inDays = (n: number): string => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

describe.each(testEngines())('key pair restrictions on the Keys page (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  const admin = `admin-kr-${engine}@hotel.example`;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    await createStaffUser(t.server.database.db, t.slug, admin, 'admin', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Fills the issue form and submits it; the new pair's id. */
  async function issue(page: Page, o: { networks?: string; expiresOn?: string; readOnly?: boolean }): Promise<string> {
    const form = page.locator('form.issue-key');
    await form.getByLabel('Allowed networks').fill(o.networks ?? '');
    await form.getByLabel('Last day').fill(o.expiresOn ?? '');
    await form.getByLabel('Read-only: the keys may only read the guest list').setChecked(o.readOnly ?? false);
    await form.getByRole('button', { name: 'Issue key pair' }).click();
    const panel = page.locator('section.new-keys');
    await panel.waitFor();
    const keyId = (await panel.getAttribute('data-key-id')) ?? '';
    await page.getByRole('button', { name: 'I have stored both keys' }).click();
    return keyId;
  }

  it('issues a restricted pair, shows its networks, last day and access, changes it, and warns 14 days ahead', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await logInToDashboard(page, t.baseUrl, admin, PASSWORD);
      await page.getByRole('link', { name: 'Keys' }).click();

      // A wrong network: the field says how to write one; nothing is issued.
      const form = page.locator('form.issue-key');
      await form.getByLabel('Allowed networks').fill('office');
      await form.getByRole('button', { name: 'Issue key pair' }).click();
      await expect.poll(() => form.locator('[data-field="networks"] .field-error').innerText()).toContain('write each network in CIDR notation');
      expect(await page.locator('section.new-keys').count()).toBe(0);

      const far = inDays(60);
      const restricted = await issue(page, { networks: '203.0.113.9/24, 2001:db8::/32', expiresOn: far, readOnly: true });
      const row = page.locator(`tr[data-key-id="${restricted}"]`);
      await row.waitFor();
      expect(await row.locator('[data-cell="networks"] code').allInnerTexts()).toEqual(['203.0.113.0/24', '2001:db8::/32']);
      expect(await row.locator('[data-cell="expires"] time').getAttribute('datetime')).toBe(far);
      expect(await row.locator('[data-cell="access"]').innerText()).toBe('read-only');
      // Sixty days ahead: no warning yet.
      expect(await page.locator(`[data-expiring="${restricted}"]`).count()).toBe(0);

      // Changed later: any network, read-write, a last day within 14 days.
      const soon = inDays(5);
      await row.getByRole('button', { name: 'Change' }).click();
      const change = page.locator(`form.change-key[data-key-id="${restricted}"]`);
      expect(await change.getByLabel('Allowed networks').inputValue()).toBe('203.0.113.0/24, 2001:db8::/32');
      await change.getByLabel('Allowed networks').fill('');
      await change.getByLabel('Last day').fill(soon);
      await change.getByLabel('Read-only: the keys may only read the guest list').setChecked(false);
      await change.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => row.locator('[data-cell="access"]').innerText()).toBe('read-write');
      expect(await row.locator('[data-cell="networks"]').innerText()).toBe('any');
      expect(await row.locator('[data-cell="expires"] time').getAttribute('datetime')).toBe(soon);
      const warning = page.locator(`[data-expiring="${restricted}"]`);
      expect(await warning.innerText()).toContain(`Key pair ${restricted} stops working after`);
      // The harness's pair, with no last day, has no warning; the server has the change too.
      expect(await page.locator(`[data-expiring="${t.keys.keyId}"]`).count()).toBe(0);
      const stored = await t.server.database.db
        .selectFrom('api_keys')
        .select(['expires_on', 'read_only', 'allowed_networks'])
        .where('pair_id', '=', restricted)
        .execute();
      expect(stored).toEqual([
        { expires_on: soon, read_only: 0, allowed_networks: null },
        { expires_on: soon, read_only: 0, allowed_networks: null },
      ]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
