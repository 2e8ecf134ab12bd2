import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The code, README and docs speak of the product only: the rules the code relies on are
// written in the repository's own docs/ (docs/pms-interface.md for the PMS API, README.md for
// configuration and commands), and comments cite those pages by a section's heading, never a
// document outside the repository or a ticket.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What is read: every text file of these folders, and these files at the top. */
const FOLDERS = ['src', 'test', 'bench', 'docs', 'public', 'scripts', '.ci'];
const TOP_FILES = ['README.md', 'package.json', 'vitest.config.ts', 'eslint.config.js'];
const BINARY = /\.(png|jpe?g|gif|webp|ico|woff2?|ttf|otf|pem|sqlite|gz|br)$/i;

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, entry.name);
    if (entry.name === 'node_modules') continue;
    if (entry.isDirectory()) out.push(...filesUnder(rel));
    else if (entry.isFile() && !BINARY.test(entry.name)) out.push(rel);
  }
  return out;
}

const files = [...FOLDERS.flatMap(filesUnder), ...TOP_FILES].sort();
const text = new Map(files.map((f) => [f, readFileSync(path.join(root, f), 'utf8')]));

/**
 * Citations of what lies outside the repository. Written in pieces so that this file does not
 * cite what it forbids.
 */
const OUTSIDE: { what: string; pattern: RegExp }[] = [
  { what: 'the product decisions document', pattern: new RegExp(['decisions', 'md'].join('\\.'), 'i') },
  { what: 'the operations document', pattern: new RegExp(['operations', 'md'].join('\\.'), 'i') },
  { what: 'the interface specification', pattern: new RegExp(['interface', 'spec'].join('-'), 'i') },
  { what: 'a section of the specification', pattern: new RegExp(`\\b${'spec'}\\s+§?\\d+(\\.\\d+)*`, 'i') },
  { what: 'an issue number', pattern: new RegExp(`\\b${'issue'}\\s+#?\\d+`, 'i') },
  { what: 'a penetration test', pattern: new RegExp(['pen', 'test'].join(''), 'i') },
  { what: 'the shared folder beside the repository', pattern: new RegExp(['\\.\\.', 'shared'].join('/')) },
];

/** A file's lines with comment leaders removed and continued lines joined, so a citation broken over two lines reads as one. */
function flattened(source: string): string {
  return source.replace(/\s*\n\s*(?:\/\/+|\*(?!\/)|#(?!#))?\s*/g, ' ');
}

/** A page of docs/ or README.md, optionally followed (after `,` or `:`) by a quoted section name. */
const CITATION = /(?<![\w/.-])(docs\/[\w-]+\.md|README\.md)(?:[,:]?\s*"([^"\n]+)")?/g;

/** A page's section names: its headings, and the bold lead-ins of its paragraphs and list items (`**Logs.**`). */
function sectionsOf(page: string): Set<string> {
  const source = readFileSync(path.join(root, page), 'utf8');
  const headings = [...source.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)];
  const leadIns = [...source.matchAll(/^(?:[-*]\s+)?\*\*([^*]+?)\*\*/gm)];
  return new Set([...headings, ...leadIns].map((m) => normalized(m[1] ?? '')));
}

function normalized(name: string): string {
  return name
    .replace(/`/g, '')
    .replace(/[.:]+$/, '')
    .trim()
    .toLowerCase();
}

describe('citations in the code, README and docs', () => {
  it('reads the folders it checks (a sanity check of the walk)', () => {
    expect(files).toContain('src/errors.ts');
    expect(files).toContain('docs/pms-interface.md');
    expect(files.some((f) => f.startsWith('test/pms/'))).toBe(true);
    expect(files.some((f) => f.startsWith('public/dashboard/'))).toBe(true);
  });

  it('nothing cites a document outside the repository, a specification section, an issue number or a penetration test', () => {
    const found: string[] = [];
    for (const [file, source] of text) {
      source.split('\n').forEach((line, i) => {
        for (const { what, pattern } of OUTSIDE) {
          const m = pattern.exec(line);
          if (m) found.push(`${file}:${i + 1}: ${what} ("${m[0]}")`);
        }
      });
      const joined = flattened(source);
      for (const { what, pattern } of OUTSIDE) {
        const m = pattern.exec(joined);
        if (m && !found.some((f) => f.startsWith(`${file}:`))) found.push(`${file}: ${what} over two lines ("${m[0]}")`);
      }
    }
    expect(found, 'cite the section of docs/*.md or README.md that states the rule instead').toEqual([]);
  });

  it('every docs page cited exists, and every quoted section name is a heading of that page', () => {
    const sections = new Map<string, Set<string> | null>();
    const wrong: string[] = [];
    for (const [file, source] of text) {
      for (const m of flattened(source).matchAll(CITATION)) {
        const page = m[1] ?? '';
        if (!sections.has(page)) {
          const exists = statSync(path.join(root, page), { throwIfNoEntry: false })?.isFile() ?? false;
          sections.set(page, exists ? sectionsOf(page) : null);
        }
        const headings = sections.get(page);
        if (headings === null || headings === undefined) wrong.push(`${file}: ${page} does not exist`);
        else if (m[2] !== undefined && !headings.has(normalized(m[2])))
          wrong.push(`${file}: ${page} has no section "${m[2]}"`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
