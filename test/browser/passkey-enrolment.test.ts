import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addStaffUser, DashboardClient, STAFF_PASSWORD } from '../support/dashboard-client.js';
import { launchChromium } from '../support/chromium.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Second factors" and "Passkeys", in a real browser (Debian's chromium
// through playwright-core) with Chromium's virtual authenticator (DevTools protocol, WebAuthn
// domain): at a hotel that requires a second factor, an account without one lands on the
// enrolment, which offers the authenticator app and a passkey; the passkey added there makes
// the session full and the page goes on to the board. The page is opened as
// https://localhost (a relying party id must be a domain). Both engines.

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

describe.each(testEngines())('a passkey completes the enrolment in the browser (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  let base: string;
  let admin: DashboardClient;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    base = `https://localhost:${new URL(t.baseUrl).port}`;
    await addStaffUser(t.server.database.db, t.slug, `admin-${engine}@browser-enrol.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, `admin-${engine}@browser-enrol.example`);
    expect((await admin.post('/hotel/second-factor', { required: true })).status).toBe(200);
  });
  afterAll(async () => {
    await admin?.post('/hotel/second-factor', { required: false });
    await browser?.close();
    await t?.close();
  });

  const alertText = (page: Page) => page.locator('#alert').innerText();

  async function submitPassword(page: Page, email: string): Promise<void> {
    await page.goto(`${base}/dashboard/#/login`);
    await page.locator('input[name=email]').fill(email);
    await page.locator('input[name=password]').fill(STAFF_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  it('the enrolment offers the app and a passkey; a passkey added there opens the board with a full session, and the next sign-in takes the passkey', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `enrol-${engine}@browser-enrol.example`, 'receptionist');
    const { context, page, errors } = await openPage(browser);
    try {
      await submitPassword(page, user.email);
      await expect.poll(() => page.url()).toMatch(/#\/account$/);
      // Both ways, and the one sentence that says either is enough; no page links yet.
      await expect
        .poll(() => page.locator('.notice').innerText())
        .toBe('Your hotel requires a second factor: set up an authenticator app or add a passkey to continue. Either one is enough.');
      // The app's set-up loads its state first.
      await expect.poll(() => page.getByRole('button', { name: 'Set up an authenticator app' }).count()).toBe(1);
      const section = page.locator('section.account-passkeys');
      expect(await section.getByRole('button', { name: 'Add a passkey' }).count()).toBe(1);
      // Nothing to list or remove yet: the form alone.
      expect(await section.locator('table, [data-passkeys-only]').count()).toBe(0);
      expect(await page.locator('nav a').count()).toBe(0);

      await section.getByLabel('Current password').fill(STAFF_PASSWORD);
      await section.getByLabel('Name of the new passkey').fill('Front desk PC');
      await section.getByRole('button', { name: 'Add a passkey' }).click();
      await expect.poll(async () => `${page.url()} ${await alertText(page)}`).toMatch(/#\/board $/);
      await expect.poll(() => page.locator('#status').innerText()).toBe('Passkey “Front desk PC” added: your account has its second factor.');
      // The whole header, and a full session.
      await expect.poll(() => page.locator('nav a').count()).toBeGreaterThan(0);
      expect(await page.evaluate("fetch('/dashboard/api/session').then((r) => r.json()).then((s) => s.stage ?? 'full')")).toBe('full');
      expect(await page.evaluate("fetch('/dashboard/api/guests').then((r) => r.status)")).toBe(200);

      // A write with the new session's CSRF token: passkeys only, on My account (the full page now).
      await page.getByRole('link', { name: 'My account' }).click();
      await expect.poll(() => section.locator('table.table-passkeys tbody tr').count()).toBe(1);
      await section.getByLabel('Current password').fill(STAFF_PASSWORD);
      await section.getByRole('button', { name: 'Sign in with passkeys only' }).click();
      await expect.poll(() => section.locator('[data-passkeys-only]').getAttribute('data-passkeys-only')).toBe('on');

      // Signed out, the passkey signs in.
      await page.locator('[data-action=logout]').click();
      await page.waitForURL(/#\/login$/);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await expect.poll(async () => `${page.url()} ${await alertText(page)}`).toMatch(/#\/board $/);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the second step of a sign-in names both ways: the code of the app or a recovery code, or the passkey below', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, `second-${engine}@browser-enrol.example`, 'receptionist');
    const { context, page, errors } = await openPage(browser);
    try {
      // The account's passkey, added from its enrolment.
      await submitPassword(page, user.email);
      const section = page.locator('section.account-passkeys');
      await section.getByLabel('Current password').fill(STAFF_PASSWORD);
      await section.getByRole('button', { name: 'Add a passkey' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/board$/);
      await page.locator('[data-action=logout]').click();
      await page.waitForURL(/#\/login$/);

      await submitPassword(page, user.email);
      const code = page.locator('[data-field=code]');
      await expect.poll(() => code.count()).toBe(1);
      expect(await code.locator('.hint').innerText()).toBe(
        'The six-digit code of your authenticator app, or one of your recovery codes. If your account has a passkey, you may sign in with it below instead.',
      );
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await expect.poll(async () => `${page.url()} ${await alertText(page)}`).toMatch(/#\/board $/);
      expect(await page.evaluate("fetch('/dashboard/api/session').then((r) => r.json()).then((s) => s.stage ?? 'full')")).toBe('full');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
