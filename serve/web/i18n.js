// Interface strings in every language that has a pack. The language follows the browser's, or the
// switch in the header (kept in localStorage). Answers come in the asker's language from the server.

// The languages and strings come from the server's language packs (GET /ui/i18n.json): a new
// language is a new pack, nothing here changes. A missing string falls back to the pivot language's.
export const LANGUAGES = [];
const STRINGS = {};
let PIVOT = "";
const HTML_LANG = {};
const NAMES = {};
let stringsLoaded;
// resolves once loadStrings has filled the tables (the page loads them as it starts)
export const ready = new Promise((resolve) => { stringsLoaded = resolve; });

export async function loadStrings(url = "./i18n.json") {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`interface strings: HTTP ${response.status}`);
  const data = await response.json();
  PIVOT = data.pivot;
  LANGUAGES.splice(0, LANGUAGES.length, ...data.languages.map((l) => l.code));
  for (const l of data.languages) { HTML_LANG[l.code] = l.html_lang; NAMES[l.code] = l.name; }
  Object.assign(STRINGS, data.strings);
  current = PIVOT;
  stringsLoaded();
}

export function languageName(lang) { return NAMES[lang] ?? lang; }
export function htmlLang() { return HTML_LANG[current] ?? current; }

export function pickLanguage(stored, browser) {
  if (LANGUAGES.includes(stored)) return stored;
  for (const tag of browser || []) {
    const base = String(tag).toLowerCase().split("-")[0];
    if (LANGUAGES.includes(base)) return base;
  }
  return PIVOT;
}

let current = "";
export function setLanguage(lang) { current = LANGUAGES.includes(lang) ? lang : PIVOT; }
export function language() { return current; }

export function t(key, vars = {}) {
  const text = STRINGS[current]?.[key] ?? STRINGS[PIVOT]?.[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(vars[name] ?? ""));
}

export async function missingKeys() {
  // for the tests: the keys of the pivot language's strings each language lacks, once they are loaded
  await ready;
  const out = {};
  for (const lang of LANGUAGES) out[lang] = Object.keys(STRINGS[PIVOT]).filter((k) => !(k in STRINGS[lang]));
  return out;
}
