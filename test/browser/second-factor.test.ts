import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addStaffUser, DashboardClient, STAFF_PASSWORD } from '../support/dashboard-client.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Second factors", in a real browser (Debian's chromium through
// playwright-core): the login page asks for the authenticator's code after the password,
// and a hotel that requires a second factor sends an account without one to the My account
// page's enrolment, whose QR code, key and first code make the session full. The codes are
// computed here from the secret, as the user's app computes them.

/** The authenticator's code for the time step `steps` away from now. */
const codeAt = (secret: string, steps = 0): Promise<string> => generate({ secret, epoch: Math.floor(Date.now() / 1000) + steps * 30 });

describe.each(testEngines())('second factors in the browser (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  let admin: DashboardClient;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    await addStaffUser(t.server.database.db, t.slug, 'admin@browser-factors.example', 'admin');
    admin = await DashboardClient.loggedIn(t, 'admin@browser-factors.example');
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

  /** Sets up an authenticator for the account over HTTP; its secret. */
  async function enrolled(email: string): Promise<string> {
    const client = await DashboardClient.loggedIn(t, email);
    const { secret } = (await client.post('/account/totp/start', { password: STAFF_PASSWORD })).body as { secret: string };
    expect((await client.post('/account/totp/confirm', { code: await codeAt(secret) })).status).toBe(200);
    return secret;
  }

  async function submitPassword(page: Page, email: string): Promise<void> {
    await page.locator('input[name=email]').fill(email);
    await page.locator('input[name=password]').fill(STAFF_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  it('an account with an authenticator: after the password the page asks for the code; a wrong one is refused in words, the right one opens the board', async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, 'code@browser-factors.example', 'receptionist');
    const secret = await enrolled(user.email);

    const { page, errors, close } = await openLogin();
    try {
      await submitPassword(page, user.email);
      const code = page.getByLabel(/^Code/);
      const shown = async () => `${await code.count()} ${await page.locator('#alert').innerText()}`.trim();
      await expect.poll(shown).toBe('1');
      expect(await page.evaluate('document.activeElement && document.activeElement.name')).toBe('code');
      expect(page.url()).toMatch(/#\/login$/);
      await code.fill('12345x');
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => page.locator('#alert').innerText()).toMatch(/wrong or was already used/);
      expect(page.url()).toMatch(/#\/login$/);
      // A reload while the sign-in waits: the code step again, not the password.
      await page.reload();
      await expect.poll(() => code.count()).toBe(1);
      expect(await page.locator('input[name=password]').count()).toBe(0);

      await code.fill(await codeAt(secret, 1));
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/board$/);
      await expect.poll(() => page.locator('header').innerText()).toContain('My account');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  it("the hotel requires a second factor: the login lands on enrolment, and the account's first code opens the dashboard", async () => {
    expect((await admin.post('/hotel/second-factor', { required: true })).status).toBe(200);
    const { page, errors, close } = await openLogin();
    try {
      const user = await addStaffUser(t.server.database.db, t.slug, 'enrol@browser-factors.example', 'receptionist');
      await submitPassword(page, user.email);
      await expect.poll(() => page.url()).toMatch(/#\/account$/);
      await expect.poll(() => page.locator('h1').innerText()).toBe('My account');
      expect(await page.locator('.notice').innerText()).toMatch(/requires a second factor/);
      // Only the enrolment: no page links, and another route comes back here.
      expect(await page.locator('nav a').count()).toBe(0);
      await page.goto(`${t.baseUrl}/dashboard/#/board`);
      await expect.poll(() => page.url()).toMatch(/#\/account$/);

      await page.getByLabel('Your password').fill(STAFF_PASSWORD);
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const secret = page.locator('.totp-secret');
      await expect.poll(() => secret.count()).toBe(1);
      // The QR code is an image the browser drew (an SVG data URL the page's policy allows).
      expect(await page.evaluate("document.querySelector('img.totp-qr').naturalWidth")).toBeGreaterThan(0);
      // A wrong code: refused in words, the set-up stays.
      await page.getByLabel('Code from the app').fill('12345x');
      await page.getByRole('button', { name: 'Confirm' }).click();
      await expect.poll(() => page.locator('.field[data-field=code]').innerText()).toMatch(/wrong or was already used/);
      expect(page.url()).toMatch(/#\/account$/);
      await page.getByLabel('Code from the app').fill(await codeAt(await secret.innerText()));
      await page.getByRole('button', { name: 'Confirm' }).click();
      await expect.poll(() => page.locator('.recovery-codes li').count()).toBe(10);
      await expect.poll(() => page.locator('nav a').count()).toBeGreaterThan(0);
      await page.getByRole('link', { name: 'Continue to the board' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/board$/);
      expect(await page.evaluate("fetch('/dashboard/api/guests').then((r) => r.status)")).toBe(200);
      expect(errors).toEqual([]);
    } finally {
      await close();
      await admin.post('/hotel/second-factor', { required: false });
    }
  });

  it("display pairing: an admin's Pair a display shows a code; the display's first sign-in takes it and later ones on that screen need no code, another screen's does", async () => {
    const user = await addStaffUser(t.server.database.db, t.slug, 'screen@browser-factors.example', 'receptionist');
    await enrolled(user.email);
    const adminContext = await browser.newContext({ ignoreHTTPSErrors: true });
    const screen = await openLogin();
    const other = await openLogin();
    try {
      const adminPage = await adminContext.newPage();
      await logInToDashboard(adminPage, t.baseUrl, 'admin@browser-factors.example', STAFF_PASSWORD);
      await adminPage.goto(`${t.baseUrl}/dashboard/#/staff`);
      await adminPage.getByRole('button', { name: 'Pair a display' }).click();
      const shownCode = adminPage.locator('.pairing-code code');
      await expect.poll(() => shownCode.count()).toBe(1);
      const pairingCode = await shownCode.innerText();

      const page = screen.page;
      await page.locator('input[name=email]').fill(user.email);
      await page.locator('input[name=password]').fill(STAFF_PASSWORD);
      expect(await page.getByLabel('Pairing code').isVisible()).toBe(false);
      await page.locator('input[name=display]').check();
      await page.getByLabel('Pairing code').fill(pairingCode);
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/board$/);
      await expect.poll(() => page.locator('header').innerText()).toContain('Front-desk display');
      const device = (await page.context().cookies()).find((c) => c.name === '__Host-innsync_display');
      expect([device?.httpOnly, device?.secure, device?.sameSite]).toEqual([true, true, 'Strict']);

      // Later display sign-ins on this screen: no code asked.
      await page.getByRole('button', { name: 'Log out' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/login$/);
      await logInToDashboard(page, t.baseUrl, user.email, STAFF_PASSWORD, { display: true });
      await expect.poll(() => page.url()).toMatch(/#\/board$/);

      // Another screen, not paired: the display sign-in asks for the code.
      await other.page.locator('input[name=email]').fill(user.email);
      await other.page.locator('input[name=password]').fill(STAFF_PASSWORD);
      await other.page.locator('input[name=display]').check();
      await other.page.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => other.page.getByLabel(/^Code/).count()).toBe(1);
      expect([...screen.errors, ...other.errors]).toEqual([]);
    } finally {
      await adminContext.close();
      await screen.close();
      await other.close();
    }
  });
});
