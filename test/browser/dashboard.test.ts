import { createHash } from 'node:crypto';
import fs from 'node:fs';
import pino from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createHotel, createStaffUser, issueKeyPair } from '../../src/operations.js';
import { startServer } from '../../src/server.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { DashboardClient } from '../support/dashboard-client.js';
import { createTestStorage, startTestServer, testEngines, uniqueKey, type TestServer, databaseEnv } from '../support/harness.js';
import { loggedRows } from '../support/request-log.js';
import { scaled } from '../support/test-run.js';

// Tests: the dashboard in a real browser (Debian's chromium through
// playwright-core), against the real server over HTTPS, on both engines.

const PASSWORD = 'lantern-quartz-meadow-7';

function guest(pmsGuestId: string, roomNumber: string, lastName: string) {
  return { pmsGuestId, lastName, firstName: 'Ada', roomNumber, checkInDate: '2026-11-23', checkOutDate: '2026-11-26' };
}

async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  // The certificate is the self-signed one the server generated on first start.
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  // A CSP violation is reported on the console; none may happen.
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) errors.push(msg.text());
  });
  return { context, page, errors };
}

function logIn(page: Page, baseUrl: string, email: string): Promise<void> {
  return logInToDashboard(page, baseUrl, email, PASSWORD);
}

describe.each(testEngines())('dashboard in the browser (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  const admin = `admin-${engine}@hotel.example`;
  const receptionist = `desk-${engine}@hotel.example`;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    await createStaffUser(t.server.database.db, t.slug, admin, 'admin', PASSWORD);
    await createStaffUser(t.server.database.db, t.slug, receptionist, 'receptionist', PASSWORD);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('the first-run setup link creates the first hotel and its admin in the browser, who lands on the board; afterwards the link is dead', async () => {
    const storage = await createTestStorage(engine);
    const config = loadConfig({
      PORT: '0',
      HTTP_PORT: 'off',
      HOST: '127.0.0.1',
      DATA_DIR: storage.dataDir,
      ...databaseEnv(storage),
      LOG_LEVEL: 'silent',
    });
    const server = await startServer(config, pino({ level: 'silent' }));
    const { context, page, errors } = await newPage(browser);
    try {
      expect(server.setupUrl).toMatch(/^https:\/\/localhost:\d+\/dashboard\/#\/setup\/.+/);
      const setupUrl = server.setupUrl ?? '';
      await page.goto(setupUrl);
      await page.locator('input[name=hotelSlug]').fill('seaside-inn');
      await page.locator('input[name=hotelName]').fill('Seaside Inn');
      await page.locator('input[name=email]').fill('owner@seaside.example');
      await page.locator('input[name=password]').fill(PASSWORD);
      await page.locator('input[name=passwordConfirm]').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create hotel' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/board$/);
      await expect.poll(() => page.locator('header').innerText()).toContain('Seaside Inn');
      const users = await server.database.db.selectFrom('staff_users').select(['email', 'role']).execute();
      expect(users).toEqual([{ email: 'owner@seaside.example', role: 'admin' }]);

      // The same link, opened again (a fresh browser without the session), is refused.
      const second = await newPage(browser);
      await second.page.goto(setupUrl);
      await expect
        .poll(() => second.page.locator('main').innerText())
        .toMatch(/A hotel already exists, so the setup link no longer works: sign in, or ask an admin/);
      expect(await second.page.locator('main').innerText()).toContain('innsync user create');
      expect(await second.page.locator('input[name=hotelSlug]').count()).toBe(0);
      await second.context.close();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await server.close();
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    }
  });

  it('login with e-mail and password; a wrong password shows an error and stays on the login page; logout returns to it', async () => {
    const { context, page, errors } = await newPage(browser);
    try {
      await page.goto(`${t.baseUrl}/dashboard/`);
      await expect.poll(() => page.url()).toMatch(/#\/login$/);
      await page.locator('input[name=email]').fill(admin);
      await page.locator('input[name=password]').fill('not-the-password');
      await page.getByRole('button', { name: 'Log in' }).click();
      await expect.poll(() => page.locator('#alert').innerText()).toMatch(/wrong|not correct/i);
      expect(page.url()).toMatch(/#\/login$/);

      await logIn(page, t.baseUrl, admin);
      const cookies = await context.cookies();
      const session = cookies.find((c) => c.name === '__Host-innsync_session');
      expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict' });
      await page.getByRole('button', { name: 'Log out' }).click();
      await expect.poll(() => page.url()).toMatch(/#\/login$/);
      const after = await t.api('GET', '/dashboard/api/session', { key: null, headers: { cookie: `__Host-innsync_session=${session?.value ?? ''}` } });
      expect(after.status).toBe(401);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a live-key check-in through the API appears on an open room board without reload; a test-key one never does', async () => {
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, receptionist);
      await expect.poll(() => page.locator('#live-indicator').getAttribute('data-live')).toBe('connected');
      // The browser speaks HTTP/2 to the service (ALPN), so its event stream and
      // every other request share one connection instead of HTTP/1.1's six per host.
      expect(await page.evaluate("performance.getEntriesByType('navigation')[0].nextHopProtocol")).toBe('h2');
      let navigations = 0;
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) navigations++;
      });

      // The test-key check-in is sent first: when the live one's tile is there, the
      // test one's event would have been delivered before it, had there been one.
      const sandbox = await t.post(`${t.pmsBase}/guests/checkin`, guest('P-TEST-1', '701', 'Sandbox'), { key: t.keys.test });
      expect(sandbox.status).toBe(200);
      const live = await t.post(`${t.pmsBase}/guests/checkin`, guest('P-LIVE-1', '702', 'Lovelace'), {});
      expect(live.status).toBe(200);

      const tile = page.locator('[data-room="702"]');
      await tile.waitFor({ timeout: scaled(5_000) });
      // The tile may be drawn before its text is: wait for the guest's name in it.
      await expect.poll(() => tile.innerText(), { timeout: scaled(5_000) }).toContain('Lovelace');
      expect(await tile.getAttribute('data-guest-id')).toBe(live.body.guestId);
      expect(await page.locator('[data-room="701"]').count()).toBe(0);
      expect(navigations).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('a reconnecting board loses no change: a check-in made while its stream was down (server restart) is on the board once the stream is back', async () => {
    const storage = await createTestStorage(engine);
    const env = { PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: storage.dataDir, ...databaseEnv(storage), LOG_LEVEL: 'silent' };
    let server = await startServer(loadConfig(env), pino({ level: 'silent' }));
    const { context, page, errors } = await newPage(browser);
    try {
      await createHotel(server.database.db, 'restart-inn', 'Restart Inn');
      const keys = await issueKeyPair(server.database.db, 'restart-inn');
      await createStaffUser(server.database.db, 'restart-inn', 'desk@restart.example', 'receptionist', PASSWORD);
      const base = `https://127.0.0.1:${server.httpsPort}`;
      await logIn(page, base, 'desk@restart.example');
      const indicator = page.locator('#live-indicator');
      await expect.poll(() => indicator.getAttribute('data-live')).toBe('connected');

      // The stream goes down with the server, and stays down (reconnects are refused)
      // until the check-in below has been made on the restarted server.
      await page.route('**/dashboard/api/events', (route) => route.abort());
      const port = server.httpsPort;
      await server.close();
      await expect.poll(() => indicator.getAttribute('data-live')).not.toBe('connected');
      server = await startServer(loadConfig({ ...env, PORT: String(port) }), pino({ level: 'silent' }));
      const agent = new Agent({ connect: { rejectUnauthorized: false } });
      const res = await request(`${base}/api/pms/v1/restart-inn/guests/checkin`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${keys.live}`, 'content-type': 'application/json', 'idempotency-key': 'gap-1' },
        body: JSON.stringify(guest('P-GAP-1', '751', 'Offline')),
      });
      await res.body.dump();
      await agent.close();
      expect(res.statusCode).toBe(200);
      expect(await page.locator('[data-room="751"]').count()).toBe(0);

      await page.unroute('**/dashboard/api/events');
      await expect.poll(() => indicator.getAttribute('data-live')).toBe('connected');
      await page.locator('[data-room="751"]').waitFor({ timeout: scaled(10_000) });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await server.close();
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    }
  });

  it('a receptionist adds a walk-in guest; a taken room shows the conflict next to the room field, naming who holds it', async () => {
    const held = await t.post(`${t.pmsBase}/guests/checkin`, guest('P-HOLD-1', '801', 'Holder'), {});
    expect(held.status).toBe(200);
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, receptionist);
      await page.goto(`${t.baseUrl}/dashboard/#/walk-in`);
      await page.locator('input[name=lastName]').fill('Walker');
      await page.locator('input[name=firstName]').fill('Jo');
      await page.locator('input[name=roomNumber]').fill('801');
      await page.locator('input[name=checkInDate]').fill('2026-11-23');
      await page.locator('input[name=checkOutDate]').fill('2026-11-24');
      await page.getByRole('button', { name: 'Add guest' }).click();

      const roomError = page.locator('[data-field="roomNumber"] .field-error');
      await expect.poll(() => roomError.innerText()).toContain('Holder');
      expect(await roomError.innerText()).toContain('801');
      expect(await page.locator('input[name=roomNumber]').getAttribute('aria-invalid')).toBe('true');

      await page.locator('input[name=roomNumber]').fill('802');
      await page.getByRole('button', { name: 'Add guest' }).click();
      // The confirmation belongs to the walk-in page; the form is ready for the next guest.
      await expect.poll(() => page.locator('.form-success').innerText()).toContain('added to room 802');
      expect(page.url()).toMatch(/#\/walk-in$/);
      expect(await page.locator('input[name=lastName]').inputValue()).toBe('');
      await page.goto(`${t.baseUrl}/dashboard/#/board`);
      const tile = page.locator('[data-room="802"]');
      await tile.waitFor({ timeout: scaled(5_000) });
      expect(await tile.getAttribute('data-source')).toBe('receptionist');
      expect(await tile.innerText()).toContain('Walker');
      const stored = await t.server.database.db.selectFrom('guests').select(['source', 'pms_guest_id', 'status']).where('room_number', '=', '802').execute();
      expect(stored).toEqual([{ source: 'receptionist', pms_guest_id: null, status: 'active' }]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('staff check out a PMS guest only after a confirmation saying the PMS will send it again on its next sync', async () => {
    const pms = await t.post(`${t.pmsBase}/guests/checkin`, guest('P-OUT-1', '851', 'Departing'), {});
    expect(pms.status).toBe(200);
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, receptionist);
      await page.locator('[data-room="851"]').click();
      await expect.poll(() => page.url()).toContain(`#/guest/${String(pms.body.guestId)}`);
      await page.locator('button[data-action="checkout"]').click();
      const dialog = page.locator('dialog[open]');
      await dialog.waitFor();
      expect(await dialog.innerText()).toMatch(/send this guest again on its next sync/);
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      const listed = async () => ((await t.api('GET', `${t.pmsBase}/guests?pmsGuestId=P-OUT-1`)).body.guests as unknown[]).length;
      expect(await listed()).toBe(1);

      await page.locator('button[data-action="checkout"]').click();
      await page.getByRole('button', { name: 'Confirm check-out' }).click();
      await expect.poll(listed).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('Craft: works with the keyboard alone: log in, reach a room tile with Tab, open it with Enter, open and close the check-out dialog with Escape', async () => {
    const pms = await t.post(`${t.pmsBase}/guests/checkin`, guest('P-KEY-1', '861', 'Keyboard'), {});
    expect(pms.status).toBe(200);
    const { context, page, errors } = await newPage(browser);
    try {
      await page.goto(`${t.baseUrl}/dashboard/#/login`);
      await expect.poll(() => page.evaluate('document.activeElement && document.activeElement.name')).toBe('email');
      await page.keyboard.type(receptionist);
      await page.keyboard.press('Tab');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.url()).toMatch(/#\/board$/);
      await page.locator('[data-room="861"]').waitFor();

      let onTile = false;
      for (let i = 0; i < 60 && !onTile; i++) {
        await page.keyboard.press('Tab');
        onTile = (await page.evaluate('document.activeElement && document.activeElement.dataset && document.activeElement.dataset.room')) === '861';
      }
      expect(onTile).toBe(true);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.url()).toContain(`#/guest/${String(pms.body.guestId)}`);

      let onCheckout = false;
      for (let i = 0; i < 60 && !onCheckout; i++) {
        await page.keyboard.press('Tab');
        onCheckout = (await page.evaluate('document.activeElement && document.activeElement.dataset && document.activeElement.dataset.action')) === 'checkout';
      }
      expect(onCheckout).toBe(true);
      await page.keyboard.press('Enter');
      await page.locator('dialog[open]').waitFor();
      await page.keyboard.press('Escape');
      await expect.poll(() => page.locator('dialog[open]').count()).toBe(0);
      const listed = await t.api('GET', `${t.pmsBase}/guests?pmsGuestId=P-KEY-1`);
      expect(listed.body.guests).toHaveLength(1);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('Craft: readable at 1280 px and on a tablet (820 px): no page scrolls sideways, tiles keep their size', async () => {
    expect((await t.post(`${t.pmsBase}/guests/checkin`, guest('P-WIDE-1', '871', 'Wide'), {})).status).toBe(200);
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, admin);
      for (const viewport of [
        { width: 1280, height: 900 },
        { width: 820, height: 1180 },
      ]) {
        await page.setViewportSize(viewport);
        for (const route of ['board', 'list', 'activity', 'keys', 'requests', 'staff', 'walk-in']) {
          await page.goto(`${t.baseUrl}/dashboard/#/${route}`);
          await page.locator('main h1').waitFor();
          const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
          expect(overflow, `${route} at ${viewport.width} px`).toBeLessThanOrEqual(0);
        }
        await page.goto(`${t.baseUrl}/dashboard/#/board`);
        const tile = page.locator('[data-room="871"]');
        await tile.waitFor();
        // Measured until stable: a live event may redraw the board meanwhile.
        await expect.poll(async () => (await tile.boundingBox())?.width ?? 0).toBeGreaterThanOrEqual(140);
      }
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the list sorts by a column both ways and filters as the receptionist types; a guest detail shows every field and the room history of a move made by the PMS', async () => {
    const tag = engine === 'sqlite' ? 'Sq' : 'Pg';
    const a = await t.post(
      `${t.pmsBase}/guests/checkin`,
      {
        ...guest('P-LIST-A', '1201', `Aardvark${tag}`),
        email: 'aardvark@guest.example',
        phone: '+4930123456',
        language: 'de',
        nationality: 'DE',
        adults: 2,
        children: 1,
      },
      {},
    );
    const z = await t.post(`${t.pmsBase}/guests/checkin`, guest('P-LIST-Z', '1202', `Zebra${tag}`), {});
    expect([a.status, z.status]).toEqual([200, 200]);
    const moved = await t.post(`${t.pmsBase}/guests/update`, { pmsGuestId: 'P-LIST-A', roomNumber: '1203' }, {});
    expect(moved.status).toBe(200);
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, receptionist);
      await page.goto(`${t.baseUrl}/dashboard/#/list`);
      const rows = page.locator('tbody tr[data-guest-id]');
      await rows.first().waitFor();
      const names = async () => (await rows.allInnerTexts()).map((r) => (/(Aardvark|Zebra)/.exec(r) ?? [''])[0]).filter(Boolean);

      await page.locator('button[data-sort="name"]').click();
      await expect.poll(() => page.locator('th:has(button[data-sort="name"])').getAttribute('aria-sort')).toBe('ascending');
      await expect.poll(async () => (await names()).join(',')).toBe('Aardvark,Zebra');
      await page.locator('button[data-sort="name"]').click();
      await expect.poll(() => page.locator('th:has(button[data-sort="name"])').getAttribute('aria-sort')).toBe('descending');
      await expect.poll(async () => (await names()).join(',')).toBe('Zebra,Aardvark');

      await page.locator('input[name=search]').fill(`zebra${tag.toLowerCase()}`);
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.first().getAttribute('data-room')).toBe('1202');
      await page.locator('input[name=search]').fill('P-LIST-A');
      await expect.poll(() => rows.count()).toBe(1);
      expect(await rows.first().getAttribute('data-room')).toBe('1203');

      await rows.first().locator('a').click();
      await expect.poll(() => page.url()).toContain(`#/guest/${String(a.body.guestId)}`);
      const detail = page.locator('dl.details');
      await detail.waitFor();
      const text = await detail.innerText();
      for (const v of [`Aardvark${tag}`, 'Ada', 'P-LIST-A', '1203', 'Mon 23 Nov', 'Thu 26 Nov', 'aardvark@guest.example', '+4930123456'])
        expect(text).toContain(v);
      // One date format: the day's name, day and month; the machine-readable date beside it.
      expect(await detail.locator('[data-field="checkInDate"] time').getAttribute('datetime')).toBe('2026-11-23');
      const history = page.locator('table.table-rooms tbody tr');
      await expect.poll(() => history.count()).toBe(2);
      expect(await page.locator('table.table-rooms tr[data-room="1203"]').innerText()).toMatch(/now/);
      expect(await page.locator('table.table-rooms tr[data-room="1201"]').count()).toBe(1);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("another staff member's walk-in appears on an open board, and a PMS check-in on an open activity log, without reload", async () => {
    const other = await DashboardClient.loggedIn(t, admin, PASSWORD);
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, receptionist);
      await expect.poll(() => page.locator('#live-indicator').getAttribute('data-live')).toBe('connected');
      const added = await other.post('/guests', { lastName: 'Colleague', roomNumber: '1301', checkInDate: '2026-11-23', checkOutDate: '2026-11-24' });
      expect(added.status).toBe(201);
      const tile = page.locator('[data-room="1301"]');
      await tile.waitFor({ timeout: scaled(5_000) });
      expect(await tile.getAttribute('data-source')).toBe('receptionist');

      await page.goto(`${t.baseUrl}/dashboard/#/activity`);
      await page.locator('li.activity-entry').first().waitFor();
      // Details being read stay open when a live change re-renders the list.
      const reading = page.locator('li.activity-entry').first();
      const readingId = await reading.getAttribute('data-entry-id');
      await reading.locator('summary').click();
      await expect.poll(() => reading.locator('details').getAttribute('open')).toBe('');
      let navigations = 0;
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) navigations++;
      });
      expect((await t.post(`${t.pmsBase}/guests/checkin`, guest('P-LIVELOG-1', '1302', 'Livelog'), {})).status).toBe(200);
      const entry = page.locator('li.activity-entry[data-actor-type="pms"]', { hasText: 'Livelog' });
      await entry.waitFor({ timeout: scaled(5_000) });
      expect(await page.locator('li.activity-entry').first().innerText()).toContain('Livelog');
      expect(await page.locator(`li.activity-entry[data-entry-id="${readingId}"] details`).getAttribute('open')).toBe('');
      expect(await entry.locator('details').getAttribute('open')).toBeNull();
      expect(navigations).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the activity log shows a pms entry (key id, live) and a staff entry (the user) side by side', async () => {
    const pms = await t.post(`${t.pmsBase}/guests/checkin`, guest('P-ACT-1', '901', 'Activity'), {});
    expect(pms.status).toBe(200);
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, receptionist);
      await page.goto(`${t.baseUrl}/dashboard/#/walk-in`);
      await page.locator('input[name=lastName]').fill('Staffer');
      await page.locator('input[name=roomNumber]').fill('902');
      await page.locator('input[name=checkInDate]').fill('2026-11-23');
      await page.locator('input[name=checkOutDate]').fill('2026-11-24');
      await page.getByRole('button', { name: 'Add guest' }).click();
      await expect.poll(() => page.locator('.form-success').innerText()).toContain('added to room 902');

      await page.goto(`${t.baseUrl}/dashboard/#/activity`);
      const pmsEntry = page.locator('li.activity-entry[data-actor-type="pms"]', { hasText: 'Activity' }).first();
      const staffEntry = page.locator('li.activity-entry[data-actor-type="staff"]', { hasText: 'Staffer' }).first();
      await pmsEntry.waitFor({ timeout: scaled(5_000) });
      await staffEntry.waitFor({ timeout: scaled(5_000) });
      // One line per entry; who exactly (key id and mode) is in its details.
      expect(await staffEntry.locator('.entry-line').innerText()).toMatch(/Staffer.* checked in to 902 · .+@.+ · \d\d:\d\d/);
      await pmsEntry.locator('summary').click();
      expect(await pmsEntry.innerText()).toContain(t.keys.keyId);
      expect(await pmsEntry.innerText()).toMatch(/live/i);
      expect(await staffEntry.innerText()).toContain(receptionist);
      expect(await staffEntry.getAttribute('data-action')).toBe('guest.checked_in');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('issuing a key pair shows both keys once; revoking the pair makes the API answer 401', async () => {
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, admin);
      await page.goto(`${t.baseUrl}/dashboard/#/keys`);
      await page.getByRole('button', { name: 'Issue key pair' }).click();
      const liveKey = (await page.locator('code[data-key="live"]').innerText()).trim();
      const testKey = (await page.locator('code[data-key="test"]').innerText()).trim();
      expect(liveKey).toMatch(/^pms_live_[0-9A-Za-z]{38}$/);
      expect(testKey).toMatch(/^pms_test_[0-9A-Za-z]{38}$/);
      const listed = await t.api('GET', `${t.pmsBase}/guests`, { key: liveKey });
      expect(listed.status).toBe(200);

      // Shown once: after leaving the page and coming back, no plain key is on it.
      await page.goto(`${t.baseUrl}/dashboard/#/board`);
      await page.goto(`${t.baseUrl}/dashboard/#/keys`);
      await page.locator('tr[data-key-id]').first().waitFor();
      expect(await page.locator('code[data-key]').count()).toBe(0);
      expect(await page.content()).not.toContain(liveKey);

      const keyId = await t.server.database.db.selectFrom('api_keys').select('pair_id').where('key_hash', '=', sha256(liveKey)).executeTakeFirstOrThrow();
      const row = page.locator(`tr[data-key-id="${keyId.pair_id}"]`);
      await row.getByRole('button', { name: 'Revoke' }).click();
      await page.getByRole('button', { name: 'Revoke key pair' }).click();
      await expect.poll(() => row.getAttribute('data-status')).toBe('revoked');
      expect((await t.api('GET', `${t.pmsBase}/guests`, { key: liveKey })).status).toBe(401);
      expect((await t.api('GET', `${t.pmsBase}/guests`, { key: testKey })).status).toBe(401);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the request-log explorer shows a 422 check-in with its payload and response', async () => {
    const bad = await t.api('POST', `${t.pmsBase}/guests/checkin`, {
      idempotencyKey: uniqueKey(),
      body: { pmsGuestId: 'P-BAD-1', lastName: 'Broken', roomNumber: '990', checkInDate: '2026-02-30', checkOutDate: '2026-03-02' },
    });
    expect(bad.status).toBe(422);
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, admin);
      await page.goto(`${t.baseUrl}/dashboard/#/requests`);
      await page.locator('select[name=status]').selectOption('4xx');
      const row = page.locator(`tr[data-request-id="${bad.body.requestId}"]`);
      // The request log is written in batches (every 200 ms): refresh until the row is there.
      await expect
        .poll(async () => {
          if ((await row.count()) === 0) await page.getByRole('button', { name: 'Refresh' }).click();
          return row.count();
        })
        .toBe(1);
      expect(await row.getAttribute('data-status')).toBe('422');
      expect(await row.getAttribute('class')).toContain('status-4xx');
      await row.locator('[data-action="open-request"]').click();
      const payload = page.locator('[data-field="requestBody"]');
      await payload.waitFor();
      expect(await payload.innerText()).toContain('2026-02-30');
      expect(await page.locator('[data-field="responseBody"]').innerText()).toContain('INVALID_DATE_FORMAT');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the request-log explorer marks an idempotent replay "replay", and its link leads to the original request\'s row', async () => {
    const idempotencyKey = uniqueKey('replay');
    const body = { pmsGuestId: `P-REPLAY-${engine}`, lastName: 'Again', roomNumber: `RP-${engine}`, checkInDate: '2026-11-23', checkOutDate: '2026-11-25' };
    const first = await t.api('POST', `${t.pmsBase}/guests/checkin`, { idempotencyKey, body });
    expect(first.status).toBe(200);
    const again = await t.api('POST', `${t.pmsBase}/guests/checkin`, { idempotencyKey, body });
    expect(again.body._idempotent).toBe(true);
    const originalId = first.body.requestId as string;
    // The replay's own id is its row's: the answer repeats the original's requestId.
    let replayId = '';
    await expect
      .poll(async () => {
        const rows = await t.server.database.db.selectFrom('request_log').select('id').where('idempotency_key', '=', idempotencyKey).execute();
        replayId = rows.find((r) => r.id !== originalId)?.id ?? '';
        return rows.length;
      })
      .toBe(2);
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, admin);
      await page.goto(`${t.baseUrl}/dashboard/#/requests`);
      const replay = page.locator(`tr[data-request-id="${replayId}"]`);
      const original = page.locator(`tr[data-request-id="${originalId}"]`);
      await replay.waitFor();
      // Two "200" rows of one check-in: the replay says so, the original does not.
      expect(await replay.locator('.replay-mark').innerText()).toMatch(/^replay$/i);
      expect(await original.locator('.replay-mark').count()).toBe(0);
      expect(await replay.getAttribute('data-replay-of')).toBe(originalId);
      await replay.getByRole('link', { name: 'original request' }).click();
      await expect.poll(() => page.url()).toContain(`#/requests/${originalId}`);
      // The list again, the original's row picked out and its time button focused.
      await expect.poll(() => page.locator(`tr[data-request-id="${originalId}"]`).getAttribute('aria-current')).toBe('true');
      expect(await page.locator(`tr[data-request-id="${originalId}"]`).getAttribute('class')).toContain('row-target');
      expect(await page.evaluate("document.activeElement && document.activeElement.closest('tr')?.dataset.requestId")).toBe(originalId);
      // Opened, the replay's panel names its original.
      await page.locator(`tr[data-request-id="${replayId}"] [data-action="open-request"]`).click();
      await expect.poll(async () => page.locator('.request-detail').innerText()).toContain(`Replay of\n${originalId}`);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('the request-log explorer lists a request no valid key sent only under "No valid key", marked, with its cut User-Agent and full size', async () => {
    const ua = `explorer-${'u'.repeat(400)}`;
    const denied = await t.api('GET', `${t.pmsBase}/guests`, { key: 'not-a-key', headers: { 'user-agent': ua } });
    expect(denied.status).toBe(401);
    await loggedRows(t.server.database.db, [denied.body.requestId as string]);
    const { context, page, errors } = await newPage(browser);
    try {
      await logIn(page, t.baseUrl, admin);
      await page.goto(`${t.baseUrl}/dashboard/#/requests`);
      const row = page.locator(`tr[data-request-id="${denied.body.requestId}"]`);
      await page.locator('tbody tr').first().waitFor();
      // Not among the hotel's own requests (its row is written already)…
      expect(await row.count()).toBe(0);
      // …but under "No valid key", marked.
      await page.locator('select[name=sender]').selectOption('none');
      await expect
        .poll(async () => {
          if ((await row.count()) === 0) await page.getByRole('button', { name: 'Refresh' }).click();
          return row.count();
        })
        .toBe(1);
      expect(await row.getAttribute('data-authenticated')).toBe('false');
      expect(await row.locator('.mode-none').innerText()).toBe('no valid key');
      await row.locator('[data-action="open-request"]').click();
      const note = page.locator('[data-note="unauthenticated"]');
      await note.waitFor();
      expect(await note.innerText()).toContain('No valid key sent this request');
      expect(await page.locator(`[data-cut="${Buffer.byteLength(ua)}"]`).innerText()).toContain('in all');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
