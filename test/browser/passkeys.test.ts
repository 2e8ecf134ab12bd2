import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Passkeys", in a real browser (Debian's chromium through
// playwright-core) with Chromium's virtual authenticator (DevTools protocol, WebAuthn
// domain: a platform authenticator with resident keys and user verification). WebAuthn
// needs a relying party id that is a domain, so the page is opened as https://localhost
// (the generated certificate names localhost), not 127.0.0.1. Both engines.

const PASSWORD = 'passkey-password-1';

async function openPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Permissions policy|Refused to/i.test(msg.text())) errors.push(msg.text());
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
  return { context, page, errors };
}

describe.each(testEngines())('passkeys in the browser (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  let base: string;
  const email = `passkey-${engine}@hotel.example`;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    base = `https://localhost:${new URL(t.baseUrl).port}`;
    await createStaffUser(t.server.database.db, t.slug, email, 'receptionist', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const alertText = (page: Page) => page.locator('#alert').innerText();

  it('register a passkey on My account, sign out, sign in with it (no e-mail, no password), passkeys only refuses the password, then remove it', async () => {
    const { context, page, errors } = await openPage(browser);
    try {
      await logInToDashboard(page, base, email, PASSWORD);
      await page.getByRole('link', { name: 'My account' }).click();
      await page.waitForURL(/#\/account$/);
      const section = page.locator('section.account-passkeys');
      await expect.poll(() => section.innerText()).toContain('You have no passkey yet.');

      // Register: the password entered again, a name, the browser's passkey dialog (the virtual authenticator answers).
      await section.getByLabel('Current password').fill(PASSWORD);
      await section.getByLabel('Name of the new passkey').fill('Front desk PC');
      await section.getByRole('button', { name: 'Add a passkey' }).click();
      const rows = section.locator('table.table-passkeys tbody tr');
      await expect.poll(async () => `${await rows.count()} ${await alertText(page)}`).toBe('1 ');
      expect(await rows.first().locator('td').first().innerText()).toBe('Front desk PC');

      // Sign out; sign in with the passkey alone.
      await page.locator('[data-action=logout]').click();
      await page.waitForURL(/#\/login$/);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await expect.poll(async () => `${page.url()} ${await alertText(page)}`).toMatch(/#\/board $/);
      await expect.poll(() => page.locator('header').innerText()).toContain(email);
      const session = (await page.evaluate("fetch('/dashboard/api/account/passkeys').then((r) => r.json())")) as { signedInWithPasskey: boolean };
      expect(session.signedInWithPasskey).toBe(true);

      // Passkeys only: on (the password entered again); the password then signs in no more.
      await page.getByRole('link', { name: 'My account' }).click();
      await section.getByLabel('Current password').fill(PASSWORD);
      await section.getByRole('button', { name: 'Sign in with passkeys only' }).click();
      await expect.poll(() => section.locator('[data-passkeys-only]').getAttribute('data-passkeys-only')).toBe('on');
      const other = await openPage(browser);
      try {
        await other.page.goto(`${base}/dashboard/#/login`);
        await other.page.locator('input[name=email]').fill(email);
        await other.page.locator('input[name=password]').fill(PASSWORD);
        await other.page.locator('form button[type=submit]').click();
        await expect.poll(() => alertText(other.page)).toContain('E-mail or password is wrong.');
        expect(other.page.url()).toMatch(/#\/login$/);
      } finally {
        await other.context.close();
      }

      // The last passkey cannot go while passkeys only is on; turned off (this is a passkey session), it can.
      await section.getByLabel('Current password').fill(PASSWORD);
      await section.getByRole('button', { name: 'Remove' }).click();
      await page.locator('dialog [data-dialog-confirm]').click();
      await expect.poll(() => alertText(page)).toContain('turn passkeys-only off first');
      await section.getByRole('button', { name: 'Allow signing in with the password again' }).click();
      await expect.poll(() => section.locator('[data-passkeys-only]').getAttribute('data-passkeys-only')).toBe('off');
      await section.getByLabel('Current password').fill(PASSWORD);
      await section.getByRole('button', { name: 'Remove' }).click();
      await page.locator('dialog [data-dialog-confirm]').click();
      await expect.poll(() => section.innerText()).toContain('You have no passkey yet.');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('with no passkey on the device the sign-in says so in the page’s words and stays on the login page; a display login has no My account link', async () => {
    const { context, page, errors } = await openPage(browser);
    try {
      await page.goto(`${base}/dashboard/#/login`);
      // The virtual authenticator holds no passkey for this site: the browser's request fails.
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await expect.poll(() => alertText(page)).toBe('Could not sign in with a passkey: The passkey request was cancelled or timed out.');
      expect(page.url()).toMatch(/#\/login$/);
      await logInToDashboard(page, base, email, PASSWORD, { display: true });
      expect(await page.getByRole('link', { name: 'My account' }).count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
