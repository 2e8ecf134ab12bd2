import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaffUser } from '../../src/operations.js';
import { launchChromium, logInToDashboard } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/harness.js';

// docs/dashboard.md, walk-in and edit forms: a language or nationality typed as a code or
// as one entry's exact name is sent as that entry's code; anything else (a part of a name,
// nonsense) is an error at the field in the user's language and nothing is sent. The form
// never turns what was typed into other data.

const PASSWORD = 'lantern-quartz-meadow-7';
const DESK = 'desk@codes.example';

interface Case {
  language: string;
  nationality: string;
  /** The stored codes, or null when the form must refuse and send nothing. */
  stored: { language: string; nationality: string } | null;
}

const ENGLISH: Case[] = [
  { language: 'German', nationality: 'Germany', stored: { language: 'de', nationality: 'DE' } },
  { language: 'fr', nationality: 'fr', stored: { language: 'fr', nationality: 'FR' } },
  { language: 'SPANISH', nationality: 'united kingdom', stored: { language: 'es', nationality: 'GB' } },
  { language: 'Deutsch', nationality: 'Österreich', stored: null }, // German names on an English page: not the page's, not English
  { language: 'Germ', nationality: 'Germ', stored: null }, // a part of a name is not a pick
  { language: 'Klingon', nationality: 'Atlantis', stored: null },
];

const GERMAN: Case[] = [
  { language: 'Deutsch', nationality: 'Deutschland', stored: { language: 'de', nationality: 'DE' } },
  { language: 'Französisch', nationality: 'osterreich', stored: { language: 'fr', nationality: 'AT' } }, // case and accents aside
  { language: 'English', nationality: 'Germany', stored: { language: 'en', nationality: 'DE' } }, // English names are understood everywhere
  { language: 'IT', nationality: 'it', stored: { language: 'it', nationality: 'IT' } },
  { language: 'Deu', nationality: 'Deutsch', stored: null }, // "Deutsch" is a language, not a country
  { language: 'xyz', nationality: 'Nirgendwo', stored: null },
];

describe('the walk-in form sends the code of the language and country typed, or says it cannot tell', () => {
  let browser: Browser;
  let t: TestServer;
  const contexts: BrowserContext[] = [];
  let room = 500;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await startTestServer('sqlite');
    await createStaffUser(t.server.database.db, t.slug, DESK, 'receptionist', PASSWORD);
  });
  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await t?.close();
  });

  async function open(locale: string): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 }, locale, timezoneId: 'UTC' });
    contexts.push(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await logInToDashboard(page, t.baseUrl, DESK, PASSWORD);
    return { page, errors };
  }

  const storedGuest = async (roomNumber: string) => {
    const list = await t.api('GET', `${t.pmsBase}/guests?roomNumber=${roomNumber}`);
    return list.body.guests[0] as { language: string | null; nationality: string | null } | undefined;
  };

  async function tryWalkIn(page: Page, c: Case, labels: { language: string; nationality: string }) {
    const roomNumber = String(++room);
    await page.goto(`${t.baseUrl}/dashboard/#/walk-in`);
    await page.locator('input[name=lastName]').fill('Walker');
    await page.locator('input[name=roomNumber]').fill(roomNumber);
    await page.locator('input[name=language]').fill(c.language);
    await page.locator('input[name=nationality]').fill(c.nationality);
    // What was typed stays whole in the input (no length limit cuts "Germany" to "Ge").
    expect(await page.locator('input[name=nationality]').inputValue()).toBe(c.nationality);
    await page.locator('form button[type=submit]').click();
    if (c.stored) {
      await page.locator('.form-success a').first().waitFor();
      expect(await storedGuest(roomNumber), JSON.stringify(c)).toMatchObject(c.stored);
      return null;
    }
    await page.locator('[data-field=nationality] .field-error').waitFor();
    const messages = {
      language: await page.locator('[data-field=language] .field-error').innerText(),
      nationality: await page.locator('[data-field=nationality] .field-error').innerText(),
    };
    expect(messages.language.startsWith(`${labels.language}: `), messages.language).toBe(true);
    expect(messages.nationality.startsWith(`${labels.nationality}: `), messages.nationality).toBe(true);
    expect(messages.nationality).toContain(c.nationality);
    expect(await storedGuest(roomNumber), `nothing is sent for ${JSON.stringify(c)}`).toBeUndefined();
    return messages;
  }

  it('in English: names and codes become codes; German names, parts of names and nonsense are errors at their fields', async () => {
    const { page, errors } = await open('en-GB');
    for (const c of ENGLISH) {
      const messages = await tryWalkIn(page, c, { language: 'Language', nationality: 'Nationality' });
      if (messages) {
        expect(messages.nationality).toBe(
          `Nationality: “${c.nationality}” is not a country on the list. Pick one from the list, or type its two-letter code (such as “DE”).`,
        );
        expect(messages.language).toBe(
          `Language: “${c.language}” is not a language on the list. Pick one from the list, or type its two-letter code (such as “de”).`,
        );
      }
    }
    expect(errors).toEqual([]);
  });

  it('in German: German and English names and codes become codes; the rest are errors in German', async () => {
    const { page, errors } = await open('de-DE');
    for (const c of GERMAN) {
      const messages = await tryWalkIn(page, c, { language: 'Sprache', nationality: 'Nationalität' });
      if (messages) {
        expect(messages.nationality).toBe(
          `Nationalität: „${c.nationality}“ ist kein Land der Liste. Wählen Sie eines aus der Liste oder geben Sie seinen zweistelligen Code ein (etwa „DE“).`,
        );
        expect(await page.locator('#alert').innerText()).toBe('Der Gast konnte nicht hinzugefügt werden: Bitte korrigieren Sie die markierten Felder.');
      }
    }
    expect(errors).toEqual([]);
  });

  it('the edit form of a walk-in guest does the same: a name is saved as its code, nonsense is refused at the field', async () => {
    const { page, errors } = await open('en-GB');
    // PMS guests are edited in the PMS; a walk-in is edited here.
    await page.goto(`${t.baseUrl}/dashboard/#/walk-in`);
    const walkInRoom = String(++room);
    await page.locator('input[name=lastName]').fill('Editable');
    await page.locator('input[name=roomNumber]').fill(walkInRoom);
    await page.locator('form button[type=submit]').click();
    await page.locator('.form-success a').first().click();
    await page.locator('form input[name=nationality]').waitFor();
    await page.locator('form input[name=nationality]').fill('Nowhere Land');
    await page.locator('form button[type=submit]').click();
    await page.locator('[data-field=nationality] .field-error').waitFor();
    expect(await storedGuest(walkInRoom)).toMatchObject({ nationality: null });
    await page.locator('form input[name=nationality]').fill('France');
    await page.locator('form button[type=submit]').click();
    await expect.poll(async () => (await storedGuest(walkInRoom))?.nationality).toBe('FR');
    expect(errors).toEqual([]);
  });
});
