// The dashboard's languages. Every text the dashboard shows is looked up with t(text):
// the English text is the key, and each language has one catalogue,
// /dashboard/assets/i18n/<lang>.json, mapping the English texts to its own. A translator
// edits that file only. A text with a count ({n}) may be an object of plural forms
// ({ "one": "…", "other": "…" }, the categories of Intl.PluralRules).
// Dates, languages and countries are named by the browser's Intl in the chosen language
// (format.js).

export const LANGUAGES = [
  ['en', 'English'],
  ['de', 'Deutsch'],
  ['fr', 'Français'],
  ['es', 'Español'],
];

const STORAGE_KEY = 'innsync.language';
// English dates read "Mon 23 Nov" (day before month) whatever the browser's region.
const LOCALES = { en: 'en-GB', de: 'de-DE', fr: 'fr-FR', es: 'es-ES' };

const state = { lang: 'en', catalogue: {}, english: {} };

export const currentLanguage = () => state.lang;

/** The language to start in: the one chosen before, else the browser's first we have, else English. */
export function preferredLanguage() {
  const known = new Set(LANGUAGES.map(([code]) => code));
  let stored = null;
  try {
    stored = localStorage.getItem(STORAGE_KEY);
  } catch {
    // storage disabled: fall back to the browser's languages
  }
  if (stored && known.has(stored)) return stored;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const code = String(tag).slice(0, 2).toLowerCase();
    if (known.has(code)) return code;
  }
  return 'en';
}

async function loadCatalogue(lang) {
  const res = await fetch(`/dashboard/assets/i18n/${lang}.json`, { credentials: 'same-origin' });
  if (!res.ok) throw new Error(`The ${lang} texts could not be loaded (HTTP ${res.status}).`);
  return res.json();
}

/** Loads a language's catalogue and makes it current; `remember` keeps the choice in this browser. */
export async function setLanguage(lang, { remember = false } = {}) {
  const [catalogue, english] = await Promise.all([loadCatalogue(lang), Object.keys(state.english).length > 0 ? state.english : loadCatalogue('en')]);
  Object.assign(state, { lang, catalogue, english });
  document.documentElement.lang = lang;
  if (remember) {
    try {
      localStorage.setItem(STORAGE_KEY, lang);
    } catch {
      // the choice lasts for this page only
    }
  }
  cache.clear();
}

function pick(entry, params) {
  if (entry === null || typeof entry !== 'object') return entry;
  const category = intl('plural', (loc) => new Intl.PluralRules(loc)).select(Number(params?.n ?? 0));
  return entry[category] ?? entry.other;
}

/** The text in the current language, with {name} replaced by params.name. */
export function t(text, params) {
  const entry = state.catalogue[text] ?? state.english[text] ?? text;
  const chosen = pick(entry, params) ?? text;
  if (!params) return chosen;
  return chosen.replace(/\{(\w+)\}/g, (whole, name) => (params[name] === undefined ? whole : String(params[name])));
}

// ---------------------------------------------------------------------------
// The language's Intl objects (format.js formats with them)

const cache = new Map();
/** An Intl object for the current language, made once per language and kind (`make` gets the locale). */
export function intl(kind, make) {
  const key = `${state.lang}:${kind}`;
  if (!cache.has(key)) cache.set(key, make(LOCALES[state.lang] ?? state.lang));
  return cache.get(key);
}

/** Marks a text for the catalogue where it is stored to be translated later with t(). */
export const tk = (text) => text;
