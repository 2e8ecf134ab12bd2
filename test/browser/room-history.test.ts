import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { dateIn, plusDays } from '../support/dates.js';
import { guest, startTestServer, type TestServer } from '../support/harness.js';

// docs/dashboard.md, the guest page: the room history shows the stay's arrival date for the
// first room (not when the row was written) and, for a move, when it happened.

const PASSWORD = 'lantern-quartz-meadow-7';
const DESK = 'desk@history.example';

describe("the guest page's room history", () => {
  let browser: Browser;
  let t: TestServer;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer('sqlite');
    await createStaffUser(t.server.database.db, t.slug, DESK, 'receptionist', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('a stay reported days after it began: the first room from its arrival date, the move with its time, now with the departure', async () => {
    const today = dateIn('UTC');
    const arrival = plusDays(today, -3);
    const departure = plusDays(today, 2);
    const stay = guest({ pmsGuestId: 'H-1', roomNumber: '305', checkInDate: arrival, checkOutDate: departure });
    const checkedIn = await t.post(`${t.pmsBase}/guests/checkin`, stay);
    expect(checkedIn.status).toBe(200);
    expect((await t.post(`${t.pmsBase}/guests/update`, { pmsGuestId: 'H-1', roomNumber: '401' })).status).toBe(200);
    const moves = (await t.server.database.db.selectFrom('room_assignments').select(['room_number', 'assigned_at']).orderBy('assigned_at').execute()).map(
      (r) => r.assigned_at,
    );

    const context = await browser.newContext({ ignoreHTTPSErrors: true, locale: 'en-GB', timezoneId: 'UTC' });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await logInToDashboard(page, t.baseUrl, DESK, PASSWORD);
    await page.goto(`${t.baseUrl}/dashboard/#/guest/${checkedIn.body.guestId}`);
    const rows = page.locator('.table-rooms tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    // Newest first: 401 since the move, until now (departure in two days); 305 from the arrival, until the move.
    const [current, first] = [rows.nth(0), rows.nth(1)];
    expect(await current.getAttribute('data-room')).toBe('401');
    expect(await current.locator('td').nth(1).locator('time').getAttribute('datetime')).toBe(moves[1]);
    expect(await current.locator('td').nth(1).innerText()).toMatch(/\(moved in\)$/);
    expect(await current.locator('td').nth(2).innerText()).toMatch(/^now \(departure \w{3} \d{1,2} \w{3}/);
    expect(await first.getAttribute('data-room')).toBe('305');
    expect(await first.locator('td').nth(1).locator('time').getAttribute('datetime')).toBe(arrival);
    expect(await first.locator('td').nth(1).innerText()).toMatch(/\(arrival\)$/);
    expect(await first.locator('td').nth(2).innerText()).toMatch(/\(moved out\)$/);
    expect(errors).toEqual([]);
    await context.close();
  });
});
