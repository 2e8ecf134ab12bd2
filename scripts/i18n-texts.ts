// The dashboard's texts: every literal passed to t() or tk() in public/dashboard/assets.
// `npm run i18n` writes the English catalogue from them and lists what each other
// language still lacks; test/dashboard/i18n.test.ts holds the catalogues to them.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's root: the nearest folder up from this file (source or built) with package.json. */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}

export const ASSETS = join(projectRoot(), 'public', 'dashboard', 'assets');
const CATALOGUES = join(ASSETS, 'i18n');
export const LANGUAGES = ['en', 'de', 'fr', 'es'] as const;

export type Entry = string | Record<string, string>;
export type Catalogue = Record<string, Entry>;

const CALL = /\bt[k]?\(\s*(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)")/g;

function scriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? scriptFiles(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

/** Each text with the asset files (relative paths) that use it. */
export function usedTexts(): Map<string, string[]> {
  const texts = new Map<string, string[]>();
  for (const file of scriptFiles(ASSETS)) {
    for (const m of readFileSync(file, 'utf8').matchAll(CALL)) {
      const text = (m[1] ?? m[2] ?? '').replace(/\\(.)/g, '$1');
      const files = texts.get(text) ?? [];
      files.push(relative(ASSETS, file));
      texts.set(text, files);
    }
  }
  return texts;
}

export function readCatalogue(lang: string): Catalogue {
  return JSON.parse(readFileSync(join(CATALOGUES, `${lang}.json`), 'utf8')) as Catalogue;
}

/** The English catalogue: every used text, itself, keeping plural forms already written. */
function englishCatalogue(used: Map<string, string[]>): Catalogue {
  const current = readCatalogue('en');
  const sorted = [...used.keys()].sort((a, b) => a.localeCompare(b, 'en'));
  return Object.fromEntries(sorted.map((text) => [text, typeof current[text] === 'object' ? current[text] : text]));
}

function main(): void {
  const used = usedTexts();
  const english = englishCatalogue(used);
  writeFileSync(join(CATALOGUES, 'en.json'), `${JSON.stringify(english, null, 2)}\n`);
  for (const lang of LANGUAGES.filter((l) => l !== 'en')) {
    const catalogue = readCatalogue(lang);
    const missing = Object.keys(english).filter((text) => catalogue[text] === undefined);
    const unused = Object.keys(catalogue).filter((text) => english[text] === undefined);
    console.log(`${lang}: ${missing.length} missing, ${unused.length} no longer used`);
    for (const text of missing) console.log(`  missing: ${JSON.stringify(text)}`);
    for (const text of unused) console.log(`  unused: ${JSON.stringify(text)}`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
