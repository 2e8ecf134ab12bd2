import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium } from '../support/chromium.js';
import { dateIn, plusDays } from '../support/dates.js';
import { DashboardClient } from '../support/dashboard-client.js';
import { guest, startTestServer, type TestServer } from '../support/harness.js';

// Today at a glance: the board counts arrivals and departures today, guests in
// house and overdue guests, each a filter, and marks tiles in words; "today" is the hotel's
// own day. The hotel's zone is chosen so that its date differs from UTC's (and the
// browser's, which runs in UTC here) at the moment the test runs.

const PASSWORD = 'lantern-quartz-meadow-7';

describe("the board's day", () => {
  let browser: Browser;
  let t: TestServer;
  // UTC+14 and UTC-11: at any moment one of them is on another date than UTC.
  const zone = ['Pacific/Kiritimati', 'Pacific/Pago_Pago'].find((z) => dateIn(z) !== dateIn('UTC')) ?? 'Pacific/Kiritimati';
  const today = dateIn(zone);

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer('sqlite');
    await createStaffUser(t.server.database.db, t.slug, 'admin@today.example', 'admin', PASSWORD);
    const admin = await DashboardClient.loggedIn(t, 'admin@today.example', PASSWORD);
    const set = await admin.patch('/hotel', { timeZone: zone });
    expect(set.body.hotel.timeZone).toBe(zone);
    expect((await admin.patch('/hotel', { timeZone: 'Mars/Olympus' })).body.errors[0].message).toBe(
      'timeZone must be an IANA time zone name such as "Europe/Berlin" or "America/New_York".',
    );
    const stays = [
      { pmsGuestId: 'ARRIVE', roomNumber: '101', lastName: 'Arrival', checkInDate: today, checkOutDate: plusDays(today, 2), adults: 2, children: 1 },
      { pmsGuestId: 'DEPART', roomNumber: '102', lastName: 'Departure', checkInDate: plusDays(today, -3), checkOutDate: today },
      { pmsGuestId: 'LATE', roomNumber: '103', lastName: 'Overdue', checkInDate: plusDays(today, -4), checkOutDate: plusDays(today, -1) },
      { pmsGuestId: 'STAY', roomNumber: '104', lastName: 'Staying', checkInDate: plusDays(today, -1), checkOutDate: plusDays(today, 3), adults: 1 },
    ];
    for (const s of stays) expect((await t.post(`${t.pmsBase}/guests/checkin`, guest(s))).status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const countOf = async (page: Page, key: string) => Number(await page.locator(`[data-filter=${key}] .day-count`).innerText());
  const rooms = async (page: Page) => page.locator('.board [data-room]').evaluateAll((els) => els.map((e) => e.getAttribute('data-room')));

  it("counts and filters by the hotel's day, and marks each tile in words", async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, timezoneId: 'UTC', viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(`${t.baseUrl}/dashboard/#/login`);
      await page.locator('input[name=email]').fill('admin@today.example');
      await page.locator('input[name=password]').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.locator('[data-room="104"]').waitFor();
      expect([await countOf(page, 'arriving'), await countOf(page, 'departing'), await countOf(page, 'all'), await countOf(page, 'overdue')]).toEqual([
        1, 1, 4, 1,
      ]);

      const arriving = page.locator('[data-room="101"]');
      expect(await arriving.innerText()).toContain('Arriving today');
      expect(await arriving.innerText()).toContain('2 nights, 2 left · 2 adults, 1 child');
      expect(await page.locator('[data-room="102"]').innerText()).toContain('Departing today');
      expect(await page.locator('[data-room="103"]').innerText()).toContain('Overdue');
      expect(await page.locator('[data-room="104"]').innerText()).toContain('4 nights, 3 left · 1 adult');
      // Not by colour alone: the state is in the tile's text, and so in its accessible name.
      expect(await page.getByRole('link', { name: /Room 103.*Overdue/ }).count()).toBe(1);

      for (const [key, expected] of [
        ['arriving', ['101']],
        ['departing', ['102']],
        ['overdue', ['103']],
      ] as const) {
        await page.locator(`[data-filter=${key}]`).click();
        expect(await page.locator(`[data-filter=${key}]`).getAttribute('aria-pressed')).toBe('true');
        await expect.poll(() => rooms(page)).toEqual(expected);
      }
      await page.locator('[data-filter=all]').click();
      await expect.poll(() => rooms(page)).toEqual(['101', '102', '103', '104']);

      // Find a room or a guest at once: "/" jumps to the search box; room, name or PMS id.
      await page.locator('body').press('/');
      expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe('Find a room or a guest');
      await page.keyboard.type('depart');
      await expect.poll(() => rooms(page)).toEqual(['102']);
      await page.getByLabel('Find a room or a guest').fill('10');
      await expect.poll(() => rooms(page)).toEqual(['101', '102', '103', '104']);
      await page.getByLabel('Find a room or a guest').fill('late');
      await expect.poll(() => rooms(page)).toEqual(['103']);
      await page.getByLabel('Find a room or a guest').fill('nobody');
      await expect.poll(() => page.locator('.board .empty').innerText()).toBe('No room, name or PMS id contains “nobody”.');
    } finally {
      await context.close();
    }
  });

  it("an admin sees and changes the hotel's time zone on the Staff page", async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, timezoneId: 'UTC', viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(`${t.baseUrl}/dashboard/#/login`);
      await page.locator('input[name=email]').fill('admin@today.example');
      await page.locator('input[name=password]').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/board$/);
      await page.getByRole('link', { name: 'Staff' }).click();
      const select = page.getByLabel('Time zone');
      expect(await select.inputValue()).toBe(zone);
      await select.selectOption('Europe/Berlin');
      await page.getByRole('button', { name: 'Save time zone' }).click();
      await expect
        .poll(async () => (await t.server.database.db.selectFrom('hotels').select('time_zone').where('slug', '=', t.slug).executeTakeFirstOrThrow()).time_zone)
        .toBe('Europe/Berlin');
    } finally {
      await context.close();
    }
  });
});
