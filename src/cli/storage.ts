import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { Hotel } from '../db/repositories/hotel.repository.js';

// Storage for the commands that need it, loaded when one runs: `--version` and `--help`
// load no database driver (README.md, Operating it).

/** The environment's configuration (config.ts), read when a command runs. */
export async function configFromEnv(): Promise<Config> {
  return (await import('../config.js')).loadConfig();
}

/** Opens storage, applies pending migrations, runs `fn`, closes storage. */
export async function withDb<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  const [{ openDatabase }, { migrateToLatest }] = await Promise.all([import('../db/database.js'), import('../db/migrations.js')]);
  const handle = openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    sqliteSynchronous: config.sqliteSynchronous,
    sqliteReader: config.sqliteReader,
    sqliteGroupCommitMs: config.sqliteGroupCommitMs,
  });
  try {
    await migrateToLatest(handle.db);
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}

/** The hotel with this slug, or HOTEL_NOT_FOUND. */
export async function hotelOf(db: Db, slug: string): Promise<Hotel> {
  return (await import('../operations.js')).hotelBySlug(db, slug);
}
