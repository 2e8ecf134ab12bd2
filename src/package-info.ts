import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** This package's root, from src/ (tests) or dist/src/ (built). */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error('package root not found from the source tree');
}

/** The version in package.json (`innsync --version`). */
export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
