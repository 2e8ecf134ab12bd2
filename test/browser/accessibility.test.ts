import fs from 'node:fs';
import { createRequire } from 'node:module';
import pino from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createStaffUser } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { DashboardClient, eventually } from '../support/dashboard-client.js';
import { createTestStorage, guest, startTestServer, uniqueKey, type TestServer } from '../support/harness.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

// Every page of the staff dashboard, and the API reference, checked with axe-core (all the
// WCAG 2.x A and AA rules and best practices it runs by default) in the light theme in
// English, the dark theme in German and at a tablet's width; none may report a violation,
// and no page may scroll sideways.

const PASSWORD = 'lantern-quartz-meadow-7';
const ADMIN = 'admin@a11y.example';
const DESK = 'desk@a11y.example';

interface Variant {
  name: string;
  colorScheme: 'light' | 'dark';
  language: string;
  width: number;
}

const VARIANTS: Variant[] = [
  { name: 'light theme, English, 1280 px', colorScheme: 'light', language: 'en', width: 1280 },
  { name: 'dark theme, German, 1280 px', colorScheme: 'dark', language: 'de', width: 1280 },
  { name: 'light theme, English, tablet 820 px', colorScheme: 'light', language: 'en', width: 820 },
];

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeNode {
  target: unknown[];
  failureSummary?: string;
}
interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: AxeNode[];
}

/**
 * axe's violations on the page as it stands, one readable line per rule (its elements and
 * why), and a line if the page scrolls sideways. The dashboard's CSP allows no inline
 * script, so axe is not added as a <script> (Playwright's addScriptTag would be refused):
 * its source is evaluated through the DevTools protocol, which CSP does not govern, and
 * the page's own policy stays in force for everything else.
 */
async function audit(page: Page, label: string): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)')) as AxeViolation[];
  const lines = violations.map((v) => {
    const targets = v.nodes.slice(0, 5).map((n) => n.target.join(' '));
    const more = v.nodes.length > 5 ? ` and ${v.nodes.length - 5} more` : '';
    const why = (v.nodes[0]?.failureSummary ?? '').replace(/\s+/g, ' ');
    return `${label}: ${v.id} (${v.impact ?? '?'}): ${v.help}, at ${targets.join(', ')}${more}. ${why}`;
  });
  const [scrollWidth, innerWidth] = (await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')) as [number, number];
  if (scrollWidth > innerWidth) lines.push(`${label}: the page scrolls sideways (${scrollWidth} px wide in a ${innerWidth} px window)`);
  return lines;
}

const today = new Date().toISOString().slice(0, 10);
const plusDays = (n: number): string => new Date(Date.parse(`${today}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

describe('accessibility of every page (axe-core)', () => {
  let browser: Browser;
  let t: TestServer;
  let fresh: { server: RunningServer; dataDir: string };
  const receiver = new WebhookReceiver();
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer('sqlite', { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    fresh = await startBareServer();
    await createStaffUser(t.server.database.db, t.slug, ADMIN, 'admin', PASSWORD);
    await createStaffUser(t.server.database.db, t.slug, DESK, 'receptionist', PASSWORD);
    await seed();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver.close();
    await t?.close();
    await fresh?.server.close();
    if (fresh) fs.rmSync(fresh.dataDir, { recursive: true, force: true });
  });

  /** A server without a hotel: its setup link shows the setup form. */
  async function startBareServer(): Promise<{ server: RunningServer; dataDir: string }> {
    const storage = await createTestStorage('sqlite');
    const config = loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: storage.dataDir, LOG_LEVEL: 'silent' });
    return { server: await startServer(config, pino({ level: 'silent' })), dataDir: storage.dataDir };
  }

  /**
   * Guests on two floors (arriving, departing, overdue, staying), a walk-in, a checked-out
   * guest, test-key requests and a refused one, a revoked key pair, a deactivated user, and
   * a webhook endpoint with deliveries beside a disabled one whose deliveries wait.
   */
  async function seed(): Promise<void> {
    const admin = await DashboardClient.loggedIn(t, ADMIN, PASSWORD);
    await adminSeed(admin);
    const base = `${t.pmsBase}`;
    const stays = [
      { pmsGuestId: 'A11Y-ARRIVE', roomNumber: '101', lastName: 'Arrival', checkInDate: today, checkOutDate: plusDays(2), adults: 2, children: 1 },
      { pmsGuestId: 'A11Y-DEPART', roomNumber: '102', lastName: 'Departure', checkInDate: plusDays(-3), checkOutDate: today },
      { pmsGuestId: 'A11Y-LATE', roomNumber: '203', lastName: 'Overdue', checkInDate: plusDays(-4), checkOutDate: plusDays(-1) },
      {
        pmsGuestId: 'A11Y-STAY',
        roomNumber: '204',
        lastName: 'Staying',
        checkInDate: plusDays(-1),
        checkOutDate: plusDays(3),
        adults: 1,
        email: 'staying@guest.example',
        phone: '+4930123456',
        language: 'de',
        nationality: 'DE',
      },
      { pmsGuestId: 'A11Y-GONE', roomNumber: '206', lastName: 'Gone', checkInDate: plusDays(-2), checkOutDate: today },
    ];
    for (const s of stays) expect((await t.post(`${base}/guests/checkin`, guest(s))).status).toBe(200);
    expect((await t.post(`${base}/guests/update`, { pmsGuestId: 'A11Y-STAY', roomNumber: '205' })).status).toBe(200);
    expect((await t.post(`${base}/guests/checkout`, { pmsGuestId: 'A11Y-GONE' })).status).toBe(200);
    const walkIn = await admin.post('/guests', { lastName: 'Walker', firstName: 'Wanda', roomNumber: '301', checkInDate: today, checkOutDate: plusDays(1) });
    expect(walkIn.status).toBe(201);
    // The test key's requests: a check-in and its idempotent replay; then two refused (4xx in the log).
    const test = { key: t.keys.test };
    const sandboxed = { ...test, idempotencyKey: uniqueKey() };
    const body = guest({ pmsGuestId: 'A11Y-T' });
    expect((await t.post(`${base}/guests/checkin`, body, sandboxed)).status).toBe(200);
    expect((await t.post(`${base}/guests/checkin`, body, sandboxed)).status).toBe(200);
    expect((await t.post(`${base}/guests/checkin`, { lastName: '' }, test)).status).toBe(422);
    expect((await t.post(`${base}/guests/checkin`, guest({ roomNumber: '101' }))).status).toBe(409);
    const rows = await t.server.database.db.selectFrom('guests').select(['id', 'pms_guest_id', 'last_name']).execute();
    for (const r of rows) ids[r.pms_guest_id ?? r.last_name] = r.id;
    // The request log is written in batches; the Requests page needs its rows.
    await eventually(async () => ((await admin.get('/requests?limit=50')).body.requests.length >= 11 ? true : undefined));
    await eventually(async () => (receiver.accepted().length >= 5 ? true : undefined));
  }

  async function adminSeed(admin: DashboardClient): Promise<void> {
    const url = await receiver.listen();
    const hook = await admin.post('/webhooks', { url });
    expect(hook.status).toBe(201);
    receiver.trust(hook.body.endpoint.secret);
    const paused = await admin.post('/webhooks', { url: `${url}/paused`, events: ['guest.checked_in'] });
    expect((await admin.post(`/webhooks/${paused.body.endpoint.endpointId}/disable`)).status).toBe(200);
    const pair = await admin.post('/keys');
    expect((await admin.post(`/keys/${pair.body.keyId}/revoke`)).status).toBe(200);
    await createStaffUser(t.server.database.db, t.slug, 'former@a11y.example', 'receptionist', PASSWORD);
    const former = (await admin.get('/users')).body.users.find((u: { email: string }) => u.email === 'former@a11y.example');
    expect((await admin.post(`/users/${former.id}/deactivate`)).status).toBe(200);
  }

  async function newPage(variant: Variant): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      colorScheme: variant.colorScheme,
      viewport: { width: variant.width, height: 1000 },
    });
    // The dashboard's language choice, as the header's picker keeps it.
    await context.addInitScript(`try { localStorage.setItem('innsync.language', ${JSON.stringify(variant.language)}); } catch {}`);
    return { context, page: await context.newPage() };
  }

  async function logIn(page: Page, email: string, options: { display?: boolean } = {}): Promise<void> {
    await logInToDashboard(page, t.baseUrl, email, PASSWORD, options);
    await page.locator('.board .tile').first().waitFor();
  }

  /** Goes to a dashboard route and waits for `ready` to be on the page. */
  async function open(page: Page, hash: string, ready: string): Promise<void> {
    await page.goto(`${t.baseUrl}/dashboard/${hash}`);
    await page.locator(ready).first().waitFor();
  }

  async function loggedOutPages(page: Page, found: string[]): Promise<void> {
    await open(page, '#/login', 'input[name=email]');
    found.push(...(await audit(page, 'login')));
    await page.locator('input[name=email]').fill('nobody@a11y.example');
    await page.locator('input[name=password]').fill('not-the-password');
    await page.locator('form button[type=submit]').click();
    await page.locator('#alert:not(:empty)').waitFor();
    found.push(...(await audit(page, 'login refused')));
    await page.goto(fresh.server.setupUrl ?? '');
    await page.locator('input[name=hotelSlug]').waitFor();
    found.push(...(await audit(page, 'setup link')));
    await page.goto(t.server.setupUrl ?? '');
    await page.locator('.view-setup .warning').waitFor();
    found.push(...(await audit(page, 'setup link once a hotel exists')));
    await page.goto(`${t.baseUrl}/api/pms/v1/docs`);
    found.push(...(await audit(page, 'API reference')));
  }

  async function boardStates(page: Page, found: string[]): Promise<void> {
    await open(page, '#/board', '.board .tile');
    found.push(...(await audit(page, 'board')));
    await page.locator('[data-filter=arriving]').click();
    await page.locator('[data-filter=arriving][aria-pressed=true]').waitFor();
    found.push(...(await audit(page, 'board, arrivals today')));
    await page.locator('[data-filter=overdue]').click();
    await page.locator('.tile-overdue').waitFor();
    found.push(...(await audit(page, 'board, overdue')));
    await page.locator('[data-filter=overdue]').click();
    await page.locator('.board-search').fill('no such guest');
    await page.locator('.board li.empty').waitFor();
    found.push(...(await audit(page, 'board, search without a match')));
    await page.locator('.board-search').fill('');
    await page.locator('.board-grouping').click();
    await page.locator('section.floor').first().waitFor();
    found.push(...(await audit(page, 'board, grouped by floor')));
    await page.locator('.board-grouping').click();
  }

  async function guestPages(page: Page, found: string[]): Promise<void> {
    await open(page, '#/list', '.table-guests tr[data-guest-id]');
    found.push(...(await audit(page, 'list')));
    await open(page, `#/guest/${ids['A11Y-STAY']}`, '#guest-details');
    found.push(...(await audit(page, 'PMS guest')));
    await open(page, `#/guest/${ids.Walker}`, 'form .fieldset-stay');
    found.push(...(await audit(page, 'walk-in guest with its edit form')));
    await page.locator('[data-action=checkout]').click();
    await page.locator('dialog[open]').waitFor();
    found.push(...(await audit(page, 'check-out confirmation dialog')));
    await page.locator('[data-dialog-cancel]').click();
    await open(page, `#/guest/${ids['A11Y-GONE']}`, '.status-checked-out');
    found.push(...(await audit(page, 'checked-out guest')));
    await open(page, '#/guest/no-such-guest', '.detail-body a[href="#/board"]');
    found.push(...(await audit(page, 'unknown guest')));
    await open(page, '#/walk-in', 'input[name=lastName]');
    found.push(...(await audit(page, 'walk-in')));
    await page.locator('input[name=roomNumber]').fill('101');
    await page.locator('input[name=email]').fill('not an e-mail');
    await page.locator('form button[type=submit]').click();
    await page.locator('.field-error').first().waitFor();
    found.push(...(await audit(page, 'walk-in with field errors')));
  }

  async function adminPages(page: Page, found: string[]): Promise<void> {
    await open(page, '#/activity', '.activity-entry');
    await page.locator('.entry-details summary').first().click();
    found.push(...(await audit(page, 'activity with an entry open')));
    await open(page, '#/keys', '.checklist tr[data-item]');
    found.push(...(await audit(page, 'keys with the go-live checklist')));
    await page.locator('[data-action=issue-key]').click();
    await page.locator('.new-keys code[data-key=live]').waitFor();
    await page.locator('#status:not(:empty)').waitFor();
    found.push(...(await audit(page, 'keys with a new key pair shown')));
    await open(page, '#/requests', '[data-action=open-request]');
    found.push(...(await audit(page, 'requests')));
    await page.locator('tr.status-4xx [data-action=open-request]').first().click();
    await page.locator('dialog[open] .request-detail-body').waitFor();
    found.push(...(await audit(page, 'request detail panel')));
    await page.locator('[data-dialog-close]').click();
    await open(page, '#/staff', '.table-users tr[data-user-id]');
    await page.locator('#require-second-factor').waitFor();
    found.push(...(await audit(page, 'staff')));
    await page.locator('[data-action=pair-display]').click();
    await page.locator('.pairing-code code').waitFor();
    found.push(...(await audit(page, 'staff with a display pairing code')));
    await open(page, '#/account', 'table.table-sessions tr[data-session-id]');
    await page.locator('section.account-passkeys [data-passkeys-only]').waitFor();
    await page.locator('[data-factor]').first().waitFor();
    found.push(...(await audit(page, 'my account')));
    // A refused new password (it is not changed): the reason under the field.
    await page.locator('input[name=currentPassword]').fill(PASSWORD);
    await page.locator('input[name=newPassword]').fill('password1234');
    await page.locator('input[name=newPasswordConfirm]').fill('password1234');
    await page.locator('form[aria-labelledby=account-password] button[type=submit]').click();
    await page.locator('[data-field=newPassword] .field-error').waitFor();
    found.push(...(await audit(page, 'my account with a refused password')));
    await open(page, '#/webhooks', '.table-deliveries tr[data-delivery-id]');
    await expect.poll(() => page.locator('.deliveries .loading').count()).toBe(0);
    found.push(...(await audit(page, 'webhooks')));
    // The guest pages above were views: the access trail lists them.
    await open(page, '#/access-trail', '.access-list .trail-entry');
    await page.locator('.security-list .trail-entry').first().waitFor();
    found.push(...(await audit(page, 'access trail')));
  }

  /** The Rooms page and the board as a room rack; the room list is emptied again after (the next variant's board has none). */
  async function roomPages(page: Page, found: string[]): Promise<void> {
    const admin = await DashboardClient.loggedIn(t, ADMIN, PASSWORD);
    const csv = 'room,floor,type,out_of_order_reason\n101,1,Double,\n102,1,Single,Water damage\n103,1,Single,\n201,2,Suite,\n';
    expect((await admin.post('/rooms/import', { csv })).status).toBe(200);
    try {
      await open(page, '#/rooms', 'table.table-rooms tr[data-room]');
      found.push(...(await audit(page, 'rooms')));
      await page.locator('#rooms-csv').fill('room\n,\n');
      await page.locator('form[aria-labelledby=rooms-import] button[type=submit]').click();
      await page.locator('.rooms-errors li').waitFor();
      found.push(...(await audit(page, 'rooms with import errors')));
      await open(page, '#/board', '.tile-vacant');
      found.push(...(await audit(page, 'board as a room rack')));
      await page.locator('[data-filter=vacant]').click();
      await page.locator('[data-filter=vacant][aria-pressed=true]').waitFor();
      found.push(...(await audit(page, 'board, vacant rooms')));
      await page.locator('[data-filter=vacant]').click();
      await open(page, '#/walk-in', 'input[name=roomNumber]');
      await page.locator('input[name=roomNumber]').fill('102');
      await page.locator('.room-warning:not([hidden])').waitFor();
      found.push(...(await audit(page, 'walk-in, room out of order')));
    } finally {
      expect((await admin.post('/rooms/import', { csv: 'room\n' })).status).toBe(200);
    }
  }

  async function otherSessions(variant: Variant, found: string[]): Promise<void> {
    const desk = await newPage(variant);
    try {
      await logIn(desk.page, DESK);
      await open(desk.page, '#/keys', '.view a[href="#/board"]');
      found.push(...(await audit(desk.page, 'administrators-only page')));
    } finally {
      await desk.context.close();
    }
    const display = await newPage(variant);
    try {
      await logIn(display.page, DESK, { display: true });
      found.push(...(await audit(display.page, 'front-desk display')));
    } finally {
      await display.context.close();
    }
  }

  it.each(VARIANTS)(
    '$name: no axe violation on any page, no sideways scrolling',
    async (variant) => {
      const found: string[] = [];
      const { context, page } = await newPage(variant);
      try {
        await loggedOutPages(page, found);
        await logIn(page, ADMIN);
        // The checks below are in the variant's language (the picker's stored choice took effect).
        expect(await page.evaluate('document.documentElement.lang')).toBe(variant.language);
        await boardStates(page, found);
        await guestPages(page, found);
        await adminPages(page, found);
        await roomPages(page, found);
      } finally {
        await context.close();
      }
      await otherSessions(variant, found);
      expect(found.join('\n')).toBe('');
    },
    120_000,
  );
});
