import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';

/**
 * Who uses the SQLite database in DATA_DIR (docs/backup-restore.md). Every process that
 * opens it (the server, every `innsync` command) holds a shared lock on DATA_DIR/innsync.lock
 * for as long as it has the database open; `innsync restore` needs the lock exclusively, so
 * it never swaps the database under a running server, and nothing opens the database while
 * a restore swaps it.
 *
 * The lock is SQLite's own file lock on an empty database file: a read transaction held
 * open (shared) or BEGIN EXCLUSIVE. Those are POSIX record locks, which the kernel drops
 * when the process ends, however it ends (kill -9 included): a crashed server never leaves
 * a stale lock behind, unlike a pid file. Nothing is ever written to the file.
 *
 * A process must not open and close the lock file by other means (fs.readFileSync, …):
 * POSIX drops all of a process's locks on a file when any descriptor of it is closed.
 */

const LOCK_FILE_NAME = 'innsync.lock';

/** How long a process opening the database waits for a restore under way to finish. */
const SHARED_WAIT_MS = 5_000;

export class DataDirBusy extends Error {}

export interface DataDirLock {
  release(): void;
}

function lockFile(dataDir: string): string {
  return path.join(dataDir, LOCK_FILE_NAME);
}

function openLock(dataDir: string): SqliteDatabase.Database {
  const file = lockFile(dataDir);
  // Created 0600 only when missing: opening and closing it here while this process already
  // holds it (a second database handle) would drop the process's lock.
  if (!fs.existsSync(file)) {
    fs.closeSync(fs.openSync(file, 'a', 0o600));
    // Made by root (an `innsync` command under sudo): the service's user, DATA_DIR's owner, must open it too.
    if (process.getuid?.() === 0) {
      const owner = fs.statSync(dataDir);
      fs.chownSync(file, owner.uid, owner.gid);
    }
  }
  return new SqliteDatabase(file, { fileMustExist: true });
}

function busy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

function held(lock: SqliteDatabase.Database): DataDirLock {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      lock.close();
    },
  };
}

/**
 * Held while this process has the database open. Several processes may hold it at once
 * (the server and `innsync key issue`, say). Waits up to 5 s for a restore under way.
 */
export function holdShared(dataDir: string): DataDirLock {
  const lock = openLock(dataDir);
  try {
    lock.pragma(`busy_timeout = ${SHARED_WAIT_MS}`);
    lock.exec('BEGIN');
    lock.prepare('select count(*) from sqlite_master').get();
  } catch (err) {
    lock.close();
    if (busy(err))
      throw new DataDirBusy(
        `DATA_DIR ${path.resolve(dataDir)} is being restored (innsync restore holds ${LOCK_FILE_NAME}): start again when the restore has finished`,
      );
    throw err;
  }
  return held(lock);
}

/**
 * Held by `innsync restore` for the whole restore; refused at once (DataDirBusy) while any
 * process holds the shared lock.
 */
export function holdExclusive(dataDir: string): DataDirLock {
  const lock = openLock(dataDir);
  try {
    lock.pragma('busy_timeout = 0');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    if (busy(err))
      throw new DataDirBusy(
        `the database in DATA_DIR ${path.resolve(dataDir)} is in use by a running server (innsync serve) or another innsync command: stop the server (e.g. systemctl stop innsync), wait for the command to end, and run innsync restore again`,
      );
    throw err;
  }
  return held(lock);
}
