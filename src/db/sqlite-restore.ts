import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { secureDataDir } from './data-dir.js';
import { holdExclusive } from './data-dir-lock.js';
import { sqliteFile } from './database.js';
import { knownMigrations, migrateToLatest } from './migrations.js';

/**
 * `innsync restore <file>` (docs/backup-restore.md): puts a backup in the place of the
 * SQLite database in DATA_DIR.
 *
 * 1. The file is checked where it lies (a regular file, SQLite's header, no write-ahead log
 *    or hot journal beside it).
 * 2. DATA_DIR's lock is taken exclusively (data-dir-lock.ts): refused while a server or
 *    another command has the database open; nothing opens it until the restore ends.
 * 3. The file is copied into DATA_DIR under a temporary name (0600), and the copy is
 *    checked: `PRAGMA integrity_check`, the migrations table, no migration this build
 *    does not know (a newer release's database is refused); pending migrations are applied
 *    to the copy (an older release's backup comes back at this build's schema), then every
 *    table and column this build uses must be there. The copy is fsynced.
 * 4. The swap: the current database is checkpointed into one file (its WAL emptied and
 *    removed), kept as innsync.sqlite.before-restore-<time> (a hard link, 0600), and the
 *    copy renamed over innsync.sqlite in one step; then the folder is fsynced.
 *
 * Until step 4 nothing in DATA_DIR changes but the temporary copy, which a refusal removes.
 */

export class RestoreRefused extends Error {}

export interface RestoreResult {
  /** The backup restored (absolute path). */
  file: string;
  /** The database it became. */
  database: string;
  /** Where the database it replaced is kept (null: there was none). */
  previous: string | null;
  /** Migrations applied to the backup to bring it to this build's schema. */
  appliedMigrations: string[];
}

const SQLITE_HEADER = 'SQLite format 3\0';
const COMPANIONS = ['-wal', '-shm', '-journal'];

export async function restoreSqlite(dataDir: string, source: string, now = new Date()): Promise<RestoreResult> {
  const file = path.resolve(source);
  checkSourceFile(file);
  secureDataDir(dataDir);
  const lock = holdExclusive(dataDir);
  try {
    const stamp = now.toISOString().replace(/[-:]/g, '');
    const temp = path.join(dataDir, `innsync.sqlite.restore-${stamp}.tmp`);
    let appliedMigrations: string[];
    try {
      copyPrivate(file, temp);
      appliedMigrations = await prepareCopy(temp, file);
      matchOwner(temp, dataDir);
    } catch (err) {
      removeWithCompanions(temp);
      throw err;
    }
    let previous: string | null;
    try {
      previous = swapIn(dataDir, temp, stamp);
    } catch (err) {
      // Failed before its rename (the copy is still there): the database was not replaced.
      if (fs.existsSync(temp)) removeWithCompanions(temp);
      throw err;
    }
    return { file, database: sqliteFile(dataDir), previous, appliedMigrations };
  } finally {
    lock.release();
  }
}

function checkSourceFile(file: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new RestoreRefused(`${file} does not exist: name the backup file innsync backup wrote`);
  }
  if (!stat.isFile()) throw new RestoreRefused(`${file} is not a file: name the backup file innsync backup wrote`);
  const head = Buffer.alloc(SQLITE_HEADER.length);
  const fd = fs.openSync(file, 'r');
  let read: number;
  try {
    read = fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (read < head.length || head.toString('latin1') !== SQLITE_HEADER)
    throw new RestoreRefused(`${file} is not an SQLite database: name a backup file innsync backup wrote`);
  for (const suffix of ['-wal', '-journal']) {
    const beside = `${file}${suffix}`;
    if (fs.existsSync(beside) && fs.statSync(beside).size > 0)
      throw new RestoreRefused(
        `${file} has ${beside} beside it: it is a database in use or not closed cleanly, not a backup (part of it would be left behind); restore a file innsync backup wrote`,
      );
  }
}

/** Copies `from` to a new file `to` created 0600 before a byte is written. */
function copyPrivate(from: string, to: string): void {
  const out = fs.openSync(to, 'wx', 0o600);
  try {
    const input = fs.openSync(from, 'r');
    try {
      const buffer = Buffer.alloc(1 << 20);
      for (let position = 0; ;) {
        const n = fs.readSync(input, buffer, 0, buffer.length, position);
        if (n === 0) break;
        fs.writeSync(out, buffer, 0, n);
        position += n;
      }
    } finally {
      fs.closeSync(input);
    }
  } finally {
    fs.closeSync(out);
  }
}

/** Checks the copy, applies pending migrations to it, and fsyncs it. Returns the migrations applied. */
async function prepareCopy(temp: string, file: string): Promise<string[]> {
  const sqlite = new SqliteDatabase(temp, { fileMustExist: true });
  let open = true;
  try {
    try {
      // One self-contained file: no WAL beside the copy while it is checked and moved.
      sqlite.pragma('journal_mode = DELETE');
      const result = sqlite.pragma('integrity_check') as Array<{ integrity_check: string }>;
      const problems = result.map((r) => r.integrity_check).filter((m) => m !== 'ok');
      if (problems.length > 0)
        throw new RestoreRefused(`${file} fails SQLite's integrity check (${problems.slice(0, 3).join('; ')}): it is damaged; restore another backup`);
    } catch (err) {
      if (err instanceof RestoreRefused) throw err;
      throw new RestoreRefused(`${file} cannot be read as a database (${reason(err)}): it is damaged; restore another backup`);
    }

    const before = tablesOf(sqlite);
    if (!before.has('kysely_migration')) throw new RestoreRefused(`${file} is an SQLite database but not an innsync database (it has no migrations table)`);
    const done = (sqlite.prepare('select name from kysely_migration order by name').all() as Array<{ name: string }>).map((r) => r.name);
    const known = new Set(knownMigrations());
    if (!done.includes('0001_initial'))
      throw new RestoreRefused(`${file} is an SQLite database but not an innsync database (its migrations are not innsync's)`);
    const unknown = done.filter((name) => !known.has(name));
    if (unknown.length > 0)
      throw new RestoreRefused(
        `${file} was written by a newer release of innsync (migrations this build does not know: ${unknown.join(', ')}): restore it with that release or a newer one`,
      );

    // The pragmas the server opens the database with, so migrations behave as they do at start.
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('secure_delete = ON');
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) });
    let applied: string[];
    try {
      applied = await migrateToLatest(db);
    } catch (err) {
      throw new RestoreRefused(`${file} could not be brought to this build's schema (${reason(err)}): restore another backup`);
    } finally {
      open = false;
      await db.destroy();
    }
    const missing = await missingFromSchema(temp);
    if (missing.length > 0)
      throw new RestoreRefused(`${file} is not a complete innsync database (missing: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''})`);
    fsyncPath(temp);
    return applied;
  } finally {
    if (open) sqlite.close();
  }
}

/** Tables and their columns, as `table.column` and `table`. */
function tablesOf(sqlite: SqliteDatabase.Database): Map<string, Set<string>> {
  const tables = sqlite.prepare(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`).all() as Array<{ name: string }>;
  const out = new Map<string, Set<string>>();
  for (const { name } of tables) {
    const columns = sqlite.prepare('select name from pragma_table_info(?)').all(name) as Array<{ name: string }>;
    out.set(name, new Set(columns.map((c) => c.name)));
  }
  return out;
}

/** Every table and column this build's migrations create that `file` lacks. */
async function missingFromSchema(file: string): Promise<string[]> {
  const want = await expectedSchema();
  const copy = new SqliteDatabase(file, { fileMustExist: true, readonly: true });
  try {
    const have = tablesOf(copy);
    const missing: string[] = [];
    for (const [table, columns] of want) {
      const got = have.get(table);
      if (!got) missing.push(`table ${table}`);
      else for (const c of columns) if (!got.has(c)) missing.push(`column ${table}.${c}`);
    }
    return missing;
  } finally {
    copy.close();
  }
}

/** The tables and columns of a database this build's migrations created (in memory). */
async function expectedSchema(): Promise<Map<string, Set<string>>> {
  const sqlite = new SqliteDatabase(':memory:');
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) });
  try {
    await migrateToLatest(db);
    return tablesOf(sqlite);
  } finally {
    await db.destroy();
  }
}

/**
 * Puts `temp` in the place of the database; returns where the previous one is kept. The
 * previous database is first made one file (SQLite moves its WAL into it and removes the
 * WAL and shared-memory files), so no WAL of the old database is ever left beside the new
 * one: SQLite would replay it into the restored file.
 */
function swapIn(dataDir: string, temp: string, stamp: string): string | null {
  const live = sqliteFile(dataDir);
  let previous: string | null = null;
  if (fs.existsSync(live) && fs.statSync(live).size > 0) {
    consolidate(live);
    previous = path.join(dataDir, `innsync.sqlite.before-restore-${stamp}`);
    // The current file stays whole under its new name; innsync.sqlite is replaced in one step below.
    fs.linkSync(live, previous);
    fs.chmodSync(previous, 0o600);
    // Left only when the old database could not be checkpointed: they move with it, paired by name.
    for (const suffix of COMPANIONS) {
      if (!fs.existsSync(`${live}${suffix}`)) continue;
      fs.renameSync(`${live}${suffix}`, `${previous}${suffix}`);
      fs.chmodSync(`${previous}${suffix}`, 0o600);
    }
  } else {
    for (const suffix of COMPANIONS) fs.rmSync(`${live}${suffix}`, { force: true });
  }
  fs.renameSync(temp, live);
  fsyncPath(dataDir);
  return previous;
}

/** Moves the WAL of the current database into it and removes the WAL (journal mode DELETE). */
function consolidate(live: string): void {
  let sqlite: SqliteDatabase.Database;
  try {
    sqlite = new SqliteDatabase(live, { fileMustExist: true });
  } catch {
    return; // not readable as a database: it is kept aside as it is, with its companions
  }
  try {
    sqlite.pragma('busy_timeout = 0');
    const mode = sqlite.pragma('journal_mode = DELETE', { simple: true }) as string;
    if (mode !== 'delete') throw Object.assign(new Error(`journal mode is ${mode}`), { code: 'SQLITE_BUSY' });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_BUSY'))
      throw new RestoreRefused(
        `${live} is open in another program (not innsync, which would hold DATA_DIR's lock: the sqlite3 shell?): close it and run innsync restore again`,
      );
    // A damaged database: kept aside as it is, with its companions.
  } finally {
    sqlite.close();
  }
}

/** When run as root (sudo), the restored file gets the owner of DATA_DIR, so the service's user can open it. */
function matchOwner(file: string, dataDir: string): void {
  if (process.getuid?.() !== 0) return;
  const owner = fs.statSync(dataDir);
  fs.chownSync(file, owner.uid, owner.gid);
}

function removeWithCompanions(file: string): void {
  for (const suffix of ['', ...COMPANIONS]) fs.rmSync(`${file}${suffix}`, { force: true });
}

function fsyncPath(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
