import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { guest, startTestServer, testEngines, uniqueKey, type TestServer } from '../support/harness.js';

// docs/dashboard.md, go-live checklist, in a real browser: the Keys page shows the API base
// URL of the hotel, a curl line with a placeholder key, the API reference, and each active
// pair's checklist in words (✓ shown / — not yet), per key.

const PASSWORD = 'lantern-quartz-meadow-7';

describe.each(testEngines())('the go-live checklist on the Keys page (%s)', (engine) => {
  let browser: Browser;
  let t: TestServer;
  const admin = `admin-k-${engine}@hotel.example`;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer(engine);
    await createStaffUser(t.server.database.db, t.slug, admin, 'admin', PASSWORD);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the base URL, a curl line without the real key, the API reference and what the test key has shown', async () => {
    const base = `${t.pmsBase}`;
    const g = guest();
    const key = { key: t.keys.test };
    expect((await t.post(`${base}/guests/checkin`, g, key)).status).toBe(200);
    expect((await t.post(`${base}/guests/update`, { pmsGuestId: g.pmsGuestId, roomNumber: 'T-9' }, { ...key, idempotencyKey: uniqueKey() })).status).toBe(200);
    // A rehearsed 409 (the test key's trigger room), then the guest into another room.
    const occupied = guest({ roomNumber: 'innsync-test-409' });
    expect((await t.post(`${base}/guests/checkin`, occupied, key)).status).toBe(409);
    expect((await t.post(`${base}/guests/checkin`, { ...occupied, roomNumber: 'T-10' }, key)).status).toBe(200);
    // The request log (and the checklist with it) is written in batches.
    await expect
      .poll(async () => (await t.server.database.db.selectFrom('key_checklist').select('item').where('pair_id', '=', t.keys.keyId).execute()).length)
      .toBe(4);

    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await logInToDashboard(page, t.baseUrl, admin, PASSWORD);
      await page.getByRole('link', { name: 'Keys' }).click();

      const baseUrl = `${t.baseUrl}${base}`;
      expect(await page.locator('code[data-value="base-url"]').innerText()).toBe(baseUrl);
      expect(await page.locator('code[data-value="curl"]').innerText()).toBe(`curl -H "Authorization: Bearer pms_test_…" ${baseUrl}/guests`);
      expect(await page.getByRole('button', { name: 'Copy the command' }).count()).toBe(1);
      expect(await page.getByRole('link', { name: 'API reference' }).getAttribute('href')).toBe('/api/pms/v1/docs');
      expect(await page.content()).not.toContain(t.keys.test);

      const checklist = page.getByRole('region', { name: `Go-live checklist of key pair ${t.keys.keyId}` });
      await checklist.waitFor();
      const cell = (item: string, mode: string) => checklist.locator(`tr[data-item="${item}"] td[data-mode="${mode}"]`);
      for (const item of ['checkin', 'update', 'room_move', 'conflict_handled']) {
        expect(await cell(item, 'test').getAttribute('data-shown'), item).toBe('true');
        expect(await cell(item, 'test').innerText()).toMatch(/^✓ shown /);
        expect(await cell(item, 'live').innerText()).toBe('— not yet');
      }
      for (const item of ['checkout', 'sync', 'idempotent_replay', 'retry_after_honoured']) {
        expect(await cell(item, 'test').innerText(), item).toBe('— not yet');
      }
      expect(await checklist.locator('tr[data-item="conflict_handled"] th').innerText()).toContain('innsync-test-409');
      // Each behaviour is named and defined in its row header.
      const moveHeader = await checklist.locator('tr[data-item="room_move"] th').innerText();
      expect(moveHeader).toContain('Room move');
      expect(moveHeader).toContain('roomNumber');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
