import { existsSync, readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// README.md, "Supported platforms": package.json's `engines.node` is the range of Node.js versions
// the service supports, and every package `npm ci` installs (dev tools included: npm warns for
// them too) must run on the whole of it. A package whose own `engines.node` leaves out part of
// that range makes `npm ci` warn (EBADENGINE) on those versions of Node.js.

interface LockEntry {
  readonly version?: string;
  readonly optional?: boolean;
  readonly engines?: { readonly node?: string } | readonly string[];
}

const root = new URL('../../', import.meta.url);

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(new URL(file, root), 'utf8')) as T;
}

// The lockfile's packages that npm ci installs here: an optional package for another platform
// (another os, cpu or libc) is left out by npm, so it is not in node_modules.
function installedPackages(): [string, LockEntry][] {
  const lock = readJson<{ packages: Record<string, LockEntry> }>('package-lock.json');
  return Object.entries(lock.packages).filter(
    ([path, entry]) => path !== '' && (entry.optional !== true || existsSync(new URL(path, root))),
  );
}

function declaredNodeRange(entry: LockEntry): string | undefined {
  return Array.isArray(entry.engines) ? undefined : (entry.engines as { node?: string } | undefined)?.node;
}

describe('the supported versions of Node.js', () => {
  const supported = readJson<{ engines: { node: string } }>('package.json').engines.node;

  it('README.md names the range package.json declares', () => {
    const readme = readFileSync(new URL('README.md', root), 'utf8');
    expect(semver.validRange(supported)).not.toBeNull();
    expect(readme.includes(`\`${supported}\``), `README.md names engines.node ${supported}`).toBe(true);
  });

  it('every installed package runs on every supported version', () => {
    const packages = installedPackages();
    const narrower = packages.flatMap(([path, entry]) => {
      const range = declaredNodeRange(entry);
      const name = path.replace(/^node_modules\//, '').replaceAll('/node_modules/', ' > ');
      return range === undefined || semver.subset(supported, range) ? [] : [`${name}@${entry.version} (node ${range})`];
    });
    expect(packages.length).toBeGreaterThan(300);
    expect(narrower).toEqual([]);
  });
});
