import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { DataDirBusy } from '../db/data-dir-lock.js';
import { RestoreRefused, restoreSqlite } from '../db/sqlite-restore.js';
import { OperationError } from '../operations.js';
import { print, type JsonFlag } from './output.js';

/** `innsync restore <file>`: the counterpart of `innsync backup` (docs/backup-restore.md). */
export function addRestoreCommand(program: Command, json: JsonFlag): void {
  program
    .command('restore <file>')
    .description(
      "replace the SQLite database with a backup innsync backup wrote: checked first, brought to this build's schema, the previous database kept beside it; the server must be stopped (PostgreSQL: pg_restore, see docs/backup-restore.md)",
    )
    .action(async (file: string) => {
      const config = loadConfig();
      if (config.databaseUrl)
        throw new OperationError(
          'restore replaces the SQLite database; with DATABASE_URL (PostgreSQL) restore a pg_dump -Fc dump with pg_restore into a new, empty database, then run innsync migrate (docs/backup-restore.md)',
        );
      let r;
      try {
        r = await restoreSqlite(config.dataDir, file);
      } catch (err) {
        if (err instanceof RestoreRefused || err instanceof DataDirBusy) throw new OperationError(`restore refused: ${err.message}`);
        throw new OperationError(`restore failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      const schema = r.appliedMigrations.length > 0 ? `migrations applied to it: ${r.appliedMigrations.join(', ')}` : 'its schema was current';
      const previous = r.previous
        ? `; the previous database is kept as ${r.previous} (delete it once the restored data is confirmed)`
        : '; there was no previous database';
      print(json(), r, `restored ${r.file} into ${r.database} (${schema})${previous}`);
    });
}
