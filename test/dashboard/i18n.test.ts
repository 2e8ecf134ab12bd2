import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/errors.js';
import { ASSETS, LANGUAGES, readCatalogue, usedTexts, type Catalogue, type Entry } from '../../scripts/i18n-texts.js';
import { startTestServer, type TestServer } from '../support/harness.js';

// The dashboard's texts live in one catalogue per language (public/dashboard/assets/i18n);
// the English text is the key. A translator edits one file; these checks say what is missing.

const placeholders = (entry: Entry): string[] => {
  const forms = typeof entry === 'string' ? [entry] : Object.values(entry);
  return [...new Set(forms.flatMap((f) => [...f.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '')))].sort();
};

describe('the dashboard catalogues', () => {
  const used = usedTexts();
  const english = readCatalogue('en');

  it('the English catalogue lists exactly the texts the pages use (npm run i18n writes it)', () => {
    expect(used.size).toBeGreaterThan(300);
    expect(Object.keys(english).sort()).toEqual([...used.keys()].sort());
  });

  it.each(LANGUAGES.filter((l) => l !== 'en'))('%s translates every text, keeping its placeholders', (lang) => {
    const catalogue: Catalogue = readCatalogue(lang);
    const missing = Object.keys(english).filter((text) => catalogue[text] === undefined);
    expect(missing).toEqual([]);
    const unused = Object.keys(catalogue).filter((text) => english[text] === undefined);
    expect(unused).toEqual([]);
    for (const [text, entry] of Object.entries(english)) {
      const translated = catalogue[text] as Entry;
      expect({ text, placeholders: placeholders(translated) }).toEqual({ text, placeholders: placeholders(entry) });
      if (typeof translated === 'object') expect(translated.other, text).toBeTypeOf('string');
    }
  });

  it('a count that reads differently in the singular has plural forms in English', () => {
    for (const text of ['{n} nights', '{n} adults', '{n} children', '{n} guests in house', '{n} entries shown']) {
      expect(english[text], text).toMatchObject({ one: expect.stringContaining('{n}'), other: expect.stringContaining('{n}') });
    }
  });
});

describe("the server's refusals in the dashboard's languages", () => {
  let KNOWN_CODES: string[];
  beforeAll(async () => {
    // A browser module (no types): imported by its path.
    const module = join(ASSETS, 'server-messages.js');
    ({ KNOWN_CODES } = (await import(module)) as { KNOWN_CODES: string[] });
  });

  it('the dashboard words each refusal by a code of the registry (or its own NETWORK_ERROR)', () => {
    for (const code of KNOWN_CODES) expect(code in ERRORS || code === 'NETWORK_ERROR', code).toBe(true);
  });

  it('every dashboard error of the registry has its own sentence in every language', () => {
    const dashboardCodes = Object.entries(ERRORS).filter(([, e]) => e.meaning.startsWith('Dashboard'));
    expect(dashboardCodes.length).toBeGreaterThan(8);
    for (const [code] of dashboardCodes) expect(KNOWN_CODES, code).toContain(code);
  });
});

describe('the catalogues as served', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer('sqlite');
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(LANGUAGES)('GET /dashboard/assets/i18n/%s.json is the catalogue, as JSON', async (lang) => {
    const res = await t.api('GET', `/dashboard/assets/i18n/${lang}.json`, { key: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(readCatalogue(lang));
  });
});
