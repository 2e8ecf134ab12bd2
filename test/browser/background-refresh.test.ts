import type { Browser, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { guest, startTestServer, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Security": a refetch the page makes by itself after a live event says so
// (X-Background-Refresh: 1) and does not keep the session alive; what the user opens does not.

const PASSWORD = 'background-password-1';
const DESK = 'desk@background.example';

describe('the dashboard marks the refetches it makes by itself', () => {
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

  it("the board's first load is the user's; the refetch after a PMS check-in is background", async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      const seen: { url: string; background: string | null }[] = [];
      let finished = 0;
      const isGuests = (req: Request) => new URL(req.url()).pathname === '/dashboard/api/guests';
      page.on('request', (req: Request) => {
        if (isGuests(req)) seen.push({ url: new URL(req.url()).search, background: req.headers()['x-background-refresh'] ?? null });
      });
      page.on('requestfinished', (req: Request) => {
        if (isGuests(req)) finished += 1;
      });
      await logInToDashboard(page, t.baseUrl, DESK, PASSWORD);
      // Connected, and both first fetches answered: the board's own and the one after the stream's
      // `ready` (in either order, or coalesced into one more run); a change now reaches the
      // page as a live event only.
      await page.locator('#live-indicator[data-live="connected"]').waitFor({ state: 'attached' });
      await expect.poll(() => seen.length >= 2 && finished === seen.length).toBe(true);
      expect(seen.some((r) => r.background === null)).toBe(true);
      const before = seen.length;
      expect((await t.post(`${t.pmsBase}/guests/checkin`, guest({ pmsGuestId: 'BG-1', roomNumber: '512', lastName: 'Quiet' }))).status).toBe(200);
      await page.locator('[data-room="512"]').waitFor();
      const after = seen.slice(before);
      expect(after.length).toBeGreaterThan(0);
      for (const r of after) expect(r.background, r.url).toBe('1');
    } finally {
      await context.close();
    }
  });
});
