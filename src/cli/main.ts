import { Command, CommanderError } from 'commander';
import type { GuestSelector } from '../privacy/guest-privacy.js';
import { ApiError, CliError, type CliErrorCode } from '../errors.js';
import { addAccountCommands } from './accounts.js';
import { addRestoreCommand } from './restore.js';
import { print, type JsonFlag } from './output.js';
import { packageVersion } from '../package-info.js';
import { configFromEnv, hotelOf, withDb } from './storage.js';
import { addWebhookCommands } from './webhooks.js';
import { addOperatorCommands } from './operator.js';

// README.md, "Operating it": every command reads the same environment; --json prints one JSON
// object on stdout and nothing else there; failures exit non-zero with one line on stderr.

// Each command loads the modules it needs when it runs (`await import(…)`), so `--version`
// and `--help` load no web server or database driver.

export { withDb };

/** A command's failure: its code (CLI_ERRORS in errors.ts, OPERATION_FAILED unless named) and a sentence naming the fix. */
export class CliFailure extends CliError {
  constructor(message: string, code: CliErrorCode = 'OPERATION_FAILED') {
    super(code, message);
  }
}

interface SelectorOptions {
  pmsGuestId?: string;
  guestId?: string;
}

function toSelector(opts: SelectorOptions): GuestSelector {
  if ((opts.pmsGuestId === undefined) === (opts.guestId === undefined))
    throw new CliFailure('name the guest with exactly one of --pms-guest-id <id> or --guest-id <id>', 'INVALID_ARGUMENT');
  return opts.pmsGuestId !== undefined ? { pmsGuestId: opts.pmsGuestId } : { guestId: opts.guestId ?? '' };
}

export function buildCli(): Command {
  const program = new Command('innsync')
    .description(
      'innsync: the hotel PMS guest integration service.\nConfiguration comes from the environment (PORT, HTTP_PORT, HOST, DATA_DIR, DATABASE_URL, DATABASE_LISTEN_URL, TLS_CERT_FILE, TLS_KEY_FILE, TRUST_PROXY, LOG_LEVEL, SQLITE_SYNCHRONOUS, SQLITE_READER, SQLITE_GROUP_COMMIT_MS, GUEST_RETENTION_DAYS, METRICS_PORT, METRICS_HOST, HEADERS_TIMEOUT_SECONDS, REQUEST_TIMEOUT_SECONDS, KEEP_ALIVE_TIMEOUT_SECONDS, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_IP, WEBHOOK_ALLOW_PRIVATE_NETWORKS, WEBHOOK_MAX_ENDPOINTS_PER_HOTEL, REQUEST_LOG; see the README).',
    )
    .version(packageVersion(), '--version', 'print the version and exit')
    .option('--json', 'print one JSON object on stdout (a failure: one JSON object on stderr)')
    // A failure is one line on stderr, so usage errors too (no help dump;
    // commander's "(Did you mean …?)" hint is joined onto the same line).
    .configureOutput({
      outputError: (str, write) =>
        write(
          `innsync: ${str
            .replace(/^error: /, '')
            .trim()
            .split(/\s*\n\s*/)
            .join(' ')}\n`,
        ),
    })
    .exitOverride();
  const json = (): boolean => Boolean(program.opts<{ json?: boolean }>().json);
  addServiceCommands(program, json);
  addRestoreCommand(program, json);
  addAccountCommands(program, json);
  addGuestCommands(program, json);
  addWebhookCommands(program, json);
  addOperatorCommands(program, json);

  program.addHelpText(
    'after',
    `
Commands in full:
  innsync serve
  innsync migrate
  innsync hotel create <slug> --name <name> [--time-zone <zone>]
  innsync hotel set-time-zone <slug> <zone>
  innsync hotel require-mfa <slug> on|off
  innsync key issue <slug> [--networks <cidr,…>] [--expires <YYYY-MM-DD>] [--read-only]
  innsync key set <slug> <keyId> [--networks <cidr,…>|none] [--expires <YYYY-MM-DD>|never] [--read-only|--read-write]
  innsync key revoke <keyId>
  innsync key reset-limits <keyId>
  innsync hotel list
  innsync key list <slug>
  innsync user create <slug> --email <email> --role admin|receptionist   (password: prompted, or on stdin)
  innsync user list <slug>
  innsync user deactivate <slug> <email>
  innsync user role <slug> <email> admin|receptionist
  innsync user set-password <slug> <email>   (password: prompted, or on stdin)
  innsync user mfa-reset <slug> <email>
  innsync user sessions <slug> <email>
  innsync purge
  innsync backup <file>
  innsync restore <file>   (the server stopped)
  innsync guest erase <slug> (--pms-guest-id <id> | --guest-id <id>)
  innsync guest export <slug> (--pms-guest-id <id> | --guest-id <id>)
  innsync webhook add <slug> <url> [--events a,b]
  innsync webhook list <slug>
  innsync webhook remove <endpointId>
  innsync webhook rotate-secret <endpointId>
  innsync webhook enable <endpointId>
  innsync webhook disable <endpointId>
  innsync webhook test <endpointId> [--wait <seconds>]
  innsync webhook deliveries <endpointId> [--limit <n>]
  innsync operator token create --name <name>
  innsync operator token list
  innsync operator token revoke <tokenId>
  innsync operator log [--limit <n>]
Add --json to print one JSON object on stdout.`,
  );
  return program;
}

/** Running and keeping the service: serve, migrate, purge, backup. */
function addServiceCommands(program: Command, json: JsonFlag): void {
  program
    .command('serve')
    .description('serve the API over HTTPS (what `npm start` runs)')
    .action(async () => {
      const config = await configFromEnv();
      const { closeOnSignals, createLogger, startServer } = await import('../server.js');
      const logger = createLogger(config.logLevel);
      const server = await startServer(config, logger);
      closeOnSignals(server, logger);
      // For the person at the terminal; stdout carries the JSON log lines.
      if (server.setupUrl) process.stderr.write(`\nFirst run: open this link to create your hotel and its admin (it works once):\n  ${server.setupUrl}\n\n`);
      else process.stderr.write(`\nStaff dashboard: https://localhost:${server.httpsPort}/dashboard/\n\n`);
    });

  program
    .command('migrate')
    .description('apply pending schema migrations and exit')
    .action(async () => {
      const config = await configFromEnv();
      const [{ openDatabase }, { migrateToLatest }] = await Promise.all([import('../db/database.js'), import('../db/migrations.js')]);
      const handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      try {
        const applied = await migrateToLatest(handle.db);
        print(json(), { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
      } finally {
        await handle.close();
      }
    });

  program
    .command('purge')
    .description(
      'run the retention jobs now (request log 90 days, idempotency records 24 hours, webhook events 30 days, expired dashboard sessions, display pairings unused 90 days and expired pairing codes, guests GUEST_RETENTION_DAYS, access trail ACCESS_LOG_RETENTION_DAYS, provisioning API request log 90 days)',
    )
    .action(async () => {
      const config = await configFromEnv();
      const { runRetention } = await import('../jobs/retention.js');
      const r = await withDb(config, (db) => runRetention(db, config.guestRetentionDays, Date.now(), config.accessLogRetentionDays));
      const guests =
        config.guestRetentionDays === null
          ? 'guest anonymisation is off (GUEST_RETENTION_DAYS=off)'
          : `anonymised ${r.guests} guest stays checked out over ${config.guestRetentionDays} days ago`;
      const purged = `purged ${r.requestLog} request-log rows, ${r.idempotency} idempotency records, ${r.webhookEvents} webhook events, ${r.sessions} expired dashboard sessions, ${r.pairedDisplays} unused display pairings, ${r.pairingCodes} expired pairing codes, ${r.accessLog} access entries, ${r.securityEvents} security events and ${r.operatorRequestLog} provisioning API request-log rows`;
      print(json(), r, `${purged}; ${guests}`);
    });

  program
    .command('backup <file>')
    .description('write a consistent copy of the SQLite database to <file> while the server keeps serving (PostgreSQL: use pg_dump)')
    .action(async (file: string) => {
      const config = await configFromEnv();
      if (config.databaseUrl)
        throw new CliFailure('backup copies the SQLite database; with DATABASE_URL (PostgreSQL) use pg_dump instead', 'BACKUP_UNSUPPORTED');
      const { backupSqlite } = await import('../db/database.js');
      let result: { file: string; bytes: number };
      try {
        result = await backupSqlite(config.dataDir, file);
      } catch (err) {
        throw new CliFailure(`backup failed: ${err instanceof Error ? err.message : String(err)}`, 'BACKUP_FAILED');
      }
      print(json(), result, `wrote ${result.file} (${result.bytes} bytes)`);
    });
}

/** A guest's personal data: erase (GDPR Art. 17) or export (Art. 15). */
function addGuestCommands(program: Command, json: JsonFlag): void {
  const guest = program.command('guest').description("a guest's personal data: erase (GDPR Art. 17) or export (Art. 15)");
  const selectorOptions = (c: Command): Command =>
    c
      .option('--pms-guest-id <id>', 'every stay with this PMS guest id')
      .option('--guest-id <id>', 'the stay with this guest id (and, for a PMS guest, every stay with its pmsGuestId)');
  selectorOptions(guest.command('erase <slug>').description("erase a checked-out guest's personal data everywhere the service keeps it")).action(
    async (slug: string, opts: SelectorOptions) => {
      const selector = toSelector(opts);
      const { eraseGuest } = await import('../privacy/guest-privacy.js');
      const r = await withDb(await configFromEnv(), async (db) => eraseGuest(db, await hotelOf(db, slug), selector, { type: 'system', id: null, mode: null }));
      const e = r.erased;
      print(
        json(),
        r,
        `erased the personal data of ${e.guests} stay(s): ${e.activity} activity entries, ${e.idempotency} idempotency records and ${e.requestLog} request-log bodies changed`,
      );
    },
  );
  selectorOptions(guest.command('export <slug>').description('print everything held about one guest as one JSON document')).action(
    async (slug: string, opts: SelectorOptions) => {
      const selector = toSelector(opts);
      const { exportGuest } = await import('../privacy/guest-privacy.js');
      const doc = await withDb(await configFromEnv(), async (db) => exportGuest(db, await hotelOf(db, slug), selector));
      // The export is a JSON document with or without --json.
      process.stdout.write(`${JSON.stringify(doc, null, json() ? undefined : 2)}\n`);
    },
  );
}

/** README.md, "Operating it": non-zero on failure; a usage error (unknown command or option, a missing argument) is told apart. */
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

export async function main(argv: string[]): Promise<void> {
  const program = buildCli();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; usage errors (already printed by commander) exit 2.
      process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    // Each failure carries its own code: the API's (ERRORS) or the command's (CLI_ERRORS), both in errors.ts.
    const known = err instanceof ApiError || err instanceof CliError;
    const reason = err instanceof Error ? err.message : String(err);
    if (argv.includes('--json')) {
      const code = known ? err.code : 'INTERNAL_ERROR';
      process.stderr.write(`${JSON.stringify({ status: 'error', code, message: known ? reason : `failed: ${reason}` })}\n`);
    } else process.stderr.write(`innsync: ${known ? reason : `failed: ${reason}`}\n`);
    process.exitCode = EXIT_FAILURE;
  }
}
