import fs from 'node:fs';
import path from 'node:path';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * DATA_DIR readable by the service's user alone, whatever the umask (README.md, Personal data): created
 * 0700; an existing one, its tls/ folder and every file in them (database, WAL, shared
 * memory, certificate, key, backups) tightened to 0700/0600 when looser. Returns the paths
 * it tightened, for the caller's warning.
 */
export function secureDataDir(dataDir: string): string[] {
  const tightened: string[] = [];
  fs.mkdirSync(dataDir, { recursive: true, mode: DIR_MODE });
  for (const dir of [dataDir, path.join(dataDir, 'tls')]) {
    if (!fs.existsSync(dir)) continue;
    tighten(dir, DIR_MODE, tightened);
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.isFile()) tighten(path.join(dir, entry.name), FILE_MODE, tightened);
    }
  }
  return tightened;
}

/** Creates `file` empty with mode 0600 unless it exists (SQLite gives its WAL and shared-memory files the database file's mode). */
export function createPrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', FILE_MODE));
}

function tighten(p: string, mode: number, out: string[]): void {
  const current = fs.statSync(p).mode & 0o777;
  if ((current & ~mode) === 0) return;
  fs.chmodSync(p, mode);
  out.push(p);
}
