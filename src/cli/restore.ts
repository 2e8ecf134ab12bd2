import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { print, type JsonFlag } from './output.js';
import { configFromEnv } from './storage.js';

/** `innsync restore <file>`: the counterpart of `innsync backup` (docs/backup-restore.md). */
export function addRestoreCommand(program: Command, json: JsonFlag): void {
  program
    .command('restore <file>')
    .description(
      "replace the SQLite database with a backup innsync backup wrote: checked first, brought to this build's schema, the previous database kept beside it; the server must be stopped (PostgreSQL: pg_restore, see docs/backup-restore.md)",
    )
    .action(async (file: string) => {
      const config = await configFromEnv();
      if (config.databaseUrl) throw new CliError('RESTORE_UNSUPPORTED');
      // Loaded when the command runs: --version and --help load no database driver.
      const [{ DataDirBusy }, { RestoreRefused, restoreSqlite }] = await Promise.all([import('../db/data-dir-lock.js'), import('../db/sqlite-restore.js')]);
      let r;
      try {
        r = await restoreSqlite(config.dataDir, file);
      } catch (err) {
        if (err instanceof RestoreRefused || err instanceof DataDirBusy) throw new CliError('RESTORE_REFUSED', `restore refused: ${err.message}`);
        throw new CliError('RESTORE_FAILED', `restore failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      const schema = r.appliedMigrations.length > 0 ? `migrations applied to it: ${r.appliedMigrations.join(', ')}` : 'its schema was current';
      const previous = r.previous
        ? `; the previous database is kept as ${r.previous} (delete it once the restored data is confirmed)`
        : '; there was no previous database';
      print(json(), r, `restored ${r.file} into ${r.database} (${schema})${previous}`);
    });
}
