import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { DashboardClient } from '../support/dashboard-client.js';
import { dateIn, plusDays } from '../support/dates.js';
import { guest, startTestServer, type TestServer } from '../support/harness.js';

// README.md (Rooms) and docs/dashboard.md: with a room list the board is a room rack:
// every room by floor, vacant ones plainly (a "Vacant" filter and count), rooms out of
// order with their reason, a PMS guest in a room not on the list marked so; the walk-in
// form offers the vacant rooms first and warns about an out-of-order or unlisted room.

const PASSWORD = 'lantern-quartz-meadow-7';
const ADMIN = 'admin@rack.example';
const DESK = 'desk@rack.example';
const CSV = ['room,floor,type,out_of_order_reason', '101,1,Double,', '102,1,Single,', '103,1,Single,', '201,2,Double,', '202,2,Suite,Water damage'].join('\n');

describe('the board as a room rack', () => {
  let browser: Browser;
  let t: TestServer;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer('sqlite');
    await createStaffUser(t.server.database.db, t.slug, ADMIN, 'admin', PASSWORD);
    await createStaffUser(t.server.database.db, t.slug, DESK, 'receptionist', PASSWORD);
    const today = dateIn('UTC');
    const stays = [
      { pmsGuestId: 'R-101', roomNumber: '101', lastName: 'Lovelace', checkInDate: plusDays(today, -1), checkOutDate: plusDays(today, 2) },
      { pmsGuestId: 'R-777', roomNumber: '777', lastName: 'Hopper', checkInDate: plusDays(today, -1), checkOutDate: plusDays(today, 1) },
    ];
    for (const s of stays) expect((await t.post(`${t.pmsBase}/guests/checkin`, guest(s))).status).toBe(200);
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await t?.close();
  });

  async function open(email: string): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 }, locale: 'en-GB', timezoneId: 'UTC' });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await logInToDashboard(page, t.baseUrl, email, PASSWORD);
    return { page, errors };
  }

  const state = (page: Page, room: string) => page.locator(`.tile[data-room="${room}"]`).getAttribute('data-state');
  const vacantCount = (page: Page) => page.locator('[data-filter=vacant] .day-count').innerText();

  it('an admin imports the list (a bad line named first); the board shows every room by floor, vacant, out of order and off the list', async () => {
    const desk = await open(DESK);
    // Without a room list the board is as before: guests only, no vacant filter.
    await desk.page.locator('.tile[data-room="101"]').waitFor();
    expect(await desk.page.locator('[data-filter=vacant]').count()).toBe(0);

    const { page, errors } = await open(ADMIN);
    await page.locator('.board-no-room-list a').click();
    await page.waitForURL(/#\/rooms$/);
    await page.locator('#rooms-csv').fill(`${CSV}\n,3,Single,`);
    await page.locator('form[aria-labelledby=rooms-import] button[type=submit]').click();
    await expect
      .poll(() => page.locator('.rooms-errors li').allInnerTexts())
      .toEqual(['Line 7, column room: The room number is empty: write the room number (e.g. 305).']);
    await page.locator('#rooms-csv').fill(CSV);
    await page.locator('form[aria-labelledby=rooms-import] button[type=submit]').click();
    await expect.poll(() => page.locator('table.table-rooms tbody tr').count()).toBe(5);
    expect(await page.locator('tr[data-room="202"]').innerText()).toContain('Water damage');

    await page.locator('nav a[href="#/board"]').click();
    await expect
      .poll(() => page.locator('section.floor h2').allInnerTexts())
      .toEqual(['Floor 1 (1 guest, 2 vacant rooms)', 'Floor 2 (0 guests, 1 vacant room)', 'Floor 7 (1 guest, 0 vacant rooms)']);
    expect(await state(page, '102')).toBe('vacant');
    expect(await state(page, '201')).toBe('vacant');
    expect(await state(page, '202')).toBe('out-of-order');
    expect(await page.locator('.tile[data-room="202"]').innerText()).toMatch(/Out of order\s+Water damage/);
    expect(await page.locator('.tile[data-room="777"]').innerText()).toContain('Not on the room list');
    expect(await page.locator('.tile[data-room="101"]').innerText()).not.toContain('Not on the room list');
    expect(await vacantCount(page)).toBe('3');

    // The receptionist's open board got the list without a reload.
    await expect.poll(() => vacantCount(desk.page)).toBe('3');
    expect(await state(desk.page, '202')).toBe('out-of-order');

    // The vacant filter shows the vacant rooms only.
    await page.locator('[data-filter=vacant]').click();
    await expect.poll(() => page.locator('.board .tile').evaluateAll((els) => els.map((e) => e.getAttribute('data-room')))).toEqual(['102', '103', '201']);
    expect(await page.locator('.summary').innerText()).toBe('Vacant: 3');

    // Live: a PMS check-in into 102 takes it off the vacant rooms; an admin's new room reaches the open boards.
    expect((await t.post(`${t.pmsBase}/guests/checkin`, guest({ roomNumber: '102', lastName: 'Turing' }))).status).toBe(200);
    await expect.poll(() => vacantCount(page)).toBe('2');
    await expect.poll(() => vacantCount(desk.page)).toBe('2');
    const admin = await DashboardClient.loggedIn(t, ADMIN, PASSWORD);
    expect((await admin.post('/rooms', { roomNumber: '301', type: 'Double' })).status).toBe(201);
    await expect.poll(() => vacantCount(desk.page)).toBe('3');
    expect(await state(desk.page, '301')).toBe('vacant');
    expect(errors).toEqual([]);
    expect(desk.errors).toEqual([]);
  }, 120_000);

  it('the walk-in form offers the vacant rooms first and warns about a room out of order or not on the list', async () => {
    const { page, errors } = await open(DESK);
    await page.goto(`${t.baseUrl}/dashboard/#/walk-in`);
    const room = page.locator('input[name=roomNumber]');
    const listId = await room.getAttribute('list');
    expect(listId).toBeTruthy();
    await expect
      .poll(() => page.locator(`datalist#${listId} option`).evaluateAll((els) => els.map((e) => e.getAttribute('value'))))
      .toEqual(['103', '201', '301', '202']);
    const warning = page.locator('.room-warning');
    await room.fill('202');
    await expect.poll(() => warning.innerText()).toBe('Room 202 is out of order: Water damage. You can still add the guest there.');
    await room.fill('999');
    await expect.poll(() => warning.innerText()).toBe('Room 999 is not on the room list. You can still add the guest there.');
    await room.fill('103');
    await expect.poll(() => warning.isHidden()).toBe(true);
    // A warning, not a refusal: the guest goes into the out-of-order room.
    await room.fill('202');
    await page.locator('input[name=lastName]').fill('Walker');
    await page.locator('form button[type=submit]').click();
    await expect.poll(() => page.locator('.form-success').innerText()).toContain('Walker added to room 202.');
    await page.locator('nav a[href="#/board"]').click();
    await expect.poll(() => page.locator('.tile[data-room="202"]').innerText()).toContain('Walker');
    expect(await page.locator('.tile[data-room="202"]').innerText()).toContain('Out of order: Water damage');
    expect(errors).toEqual([]);
  }, 120_000);

  it("a vacant room's tile opens the walk-in form for that room; an out-of-order room's and a display's are not links", async () => {
    const admin = await DashboardClient.loggedIn(t, ADMIN, PASSWORD);
    for (const roomNumber of ['501', '503']) expect((await admin.post('/rooms', { roomNumber })).status).toBe(201);
    expect((await admin.post('/rooms', { roomNumber: '502', outOfOrderReason: 'Painting' })).status).toBe(201);
    const { page, errors } = await open(DESK);
    await page.locator('.tile[data-room="502"]').waitFor();
    expect(await page.locator('div.tile[data-room="502"]').count()).toBe(1); // out of order: no walk-in link
    await page.locator('a.tile[data-room="501"]').click();
    await expect.poll(() => page.url()).toMatch(/#\/walk-in\/501$/);
    expect(await page.locator('input[name=roomNumber]').inputValue()).toBe('501');
    expect(await page.locator('nav a[href="#/walk-in"]').getAttribute('aria-current')).toBe('page');
    await page.locator('input[name=lastName]').fill('Tilewalker');
    await page.locator('form button[type=submit]').click();
    await expect.poll(() => page.locator('.form-success').innerText()).toContain('Tilewalker added to room 501.');
    await page.locator('nav a[href="#/board"]').click();
    // textContent: floor 5 may be below the fold, where the browser has not laid the tile out (innerText is then empty).
    await expect.poll(() => page.locator('.tile[data-room="501"]').textContent()).toContain('Tilewalker');
    // The plain walk-in route still starts with an empty room.
    await page.goto(`${t.baseUrl}/dashboard/#/walk-in`);
    await page.locator('input[name=roomNumber]').waitFor();
    expect(await page.locator('input[name=roomNumber]').inputValue()).toBe('');
    expect(errors).toEqual([]);

    const display = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 }, locale: 'en-GB', timezoneId: 'UTC' });
    contexts.push(display);
    const screen = await display.newPage();
    await logInToDashboard(screen, t.baseUrl, DESK, PASSWORD, { display: true });
    await screen.locator('.tile[data-room="503"][data-state="vacant"]').waitFor();
    expect(await screen.locator('a.tile').count()).toBe(0);
  }, 120_000);

  it("a walk-in guest's page offers the vacant rooms for a move and warns, in a move's words, about a room out of order or not on the list", async () => {
    const admin = await DashboardClient.loggedIn(t, ADMIN, PASSWORD);
    for (const roomNumber of ['401', '402']) expect((await admin.post('/rooms', { roomNumber })).status).toBe(201);
    expect((await admin.post('/rooms', { roomNumber: '403', outOfOrderReason: 'Painting' })).status).toBe(201);
    const today = dateIn('UTC');
    const added = await admin.post('/guests', { lastName: 'Mover', roomNumber: '401', checkInDate: today, checkOutDate: plusDays(today, 2) });
    expect(added.status, added.text).toBe(201);
    const { page, errors } = await open(DESK);
    await page.goto(`${t.baseUrl}/dashboard/#/guest/${added.body.guest.id}`);
    const room = page.locator('form input[name=roomNumber]');
    await expect.poll(() => room.inputValue()).toBe('401');
    const listId = await room.getAttribute('list');
    expect(listId).toBeTruthy();
    const offered = () => page.locator(`datalist#${listId} option`).evaluateAll((els) => els.map((e) => e.getAttribute('value')));
    await expect.poll(offered).toContain('402');
    // The room it holds and the other guests' rooms are not offered; an out-of-order room comes after the vacant ones.
    expect(await offered()).not.toContain('401');
    expect(await offered()).not.toContain('101');
    expect((await offered()).indexOf('403')).toBeGreaterThan((await offered()).indexOf('402'));
    const warning = page.locator('.room-warning');
    expect(await warning.isHidden()).toBe(true);
    await room.fill('403');
    await expect.poll(() => warning.innerText()).toBe('Room 403 is out of order: Painting. You can still move the guest there.');
    await room.fill('999');
    await expect.poll(() => warning.innerText()).toBe('Room 999 is not on the room list. You can still move the guest there.');
    await room.fill('402');
    await expect.poll(() => warning.isHidden()).toBe(true);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.locator('.subtitle').innerText()).toContain('Room 402');
    expect(errors).toEqual([]);
  }, 120_000);
});
