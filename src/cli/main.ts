import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { backupSqlite, openDatabase, type Db } from '../db/database.js';
import { migrateToLatest } from '../db/migrations.js';
import { findHotelBySlug, type Hotel } from '../db/repositories/hotel.repository.js';
import { ApiError } from '../errors.js';
import { runRetention } from '../jobs/retention.js';
import { eraseGuest, exportGuest, type GuestSelector } from '../privacy/guest-privacy.js';
import { OperationError } from '../operations.js';
import { closeOnSignals, createLogger, startServer } from '../server.js';
import { addAccountCommands } from './accounts.js';
import { addRestoreCommand } from './restore.js';
import { print, type JsonFlag } from './output.js';
import { packageVersion } from '../package-info.js';
import { addEndpoint, listEndpoints, removeEndpoint, rotateSecret, type EndpointView } from '../webhooks/endpoints.js';
import { EVENT_TYPES } from '../webhooks/events.js';

// operations.md: every command honours the same environment; --json prints one JSON
// object on stdout and nothing else there; failures exit non-zero with one line on stderr.

export class CliFailure extends Error {}

/** Opens storage, applies pending migrations, runs `fn`, closes storage. */
export async function withDb<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  const handle = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqliteSynchronous: config.sqliteSynchronous });
  try {
    await migrateToLatest(handle.db);
    return await fn(handle.db);
  } finally {
    await handle.close();
  }
}

interface SelectorOptions {
  pmsGuestId?: string;
  guestId?: string;
}

function toSelector(opts: SelectorOptions): GuestSelector {
  if ((opts.pmsGuestId === undefined) === (opts.guestId === undefined))
    throw new CliFailure('name the guest with exactly one of --pms-guest-id <id> or --guest-id <id>');
  return opts.pmsGuestId !== undefined ? { pmsGuestId: opts.pmsGuestId } : { guestId: opts.guestId ?? '' };
}

async function hotelOf(db: Db, slug: string): Promise<Hotel> {
  const hotel = await findHotelBySlug(db, slug);
  if (!hotel) throw new OperationError(`no hotel with slug "${slug}"`);
  return hotel;
}

export function buildCli(): Command {
  const program = new Command('innsync')
    .description(
      'innsync: the hotel PMS guest integration service.\nConfiguration comes from the environment (PORT, HTTP_PORT, HOST, DATA_DIR, DATABASE_URL, TLS_CERT_FILE, TLS_KEY_FILE, TRUST_PROXY, LOG_LEVEL, SQLITE_SYNCHRONOUS, GUEST_RETENTION_DAYS, METRICS_PORT, METRICS_HOST, HEADERS_TIMEOUT_SECONDS, REQUEST_TIMEOUT_SECONDS, KEEP_ALIVE_TIMEOUT_SECONDS, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_IP, WEBHOOK_ALLOW_PRIVATE_NETWORKS, WEBHOOK_MAX_ENDPOINTS_PER_HOTEL; see the README).',
    )
    .version(packageVersion(), '--version', 'print the version and exit')
    .option('--json', 'print one JSON object on stdout (a failure: one JSON object on stderr)')
    // operations.md: a failure is one line on stderr, so usage errors too (no help dump;
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
  addAccountCommands(program, json, withDb);
  addGuestCommands(program, json);
  addWebhookCommands(program, json);

  program.addHelpText(
    'after',
    `
Commands in full:
  innsync serve
  innsync migrate
  innsync hotel create <slug> --name <name>
  innsync key issue <slug>
  innsync key revoke <keyId>
  innsync key reset-limits <keyId>
  innsync hotel list
  innsync key list <slug>
  innsync user create <slug> --email <email> --role admin|receptionist   (password: prompted, or on stdin)
  innsync user list <slug>
  innsync user deactivate <slug> <email>
  innsync user set-password <slug> <email>   (password: prompted, or on stdin)
  innsync purge
  innsync backup <file>
  innsync restore <file>   (the server stopped)
  innsync guest erase <slug> (--pms-guest-id <id> | --guest-id <id>)
  innsync guest export <slug> (--pms-guest-id <id> | --guest-id <id>)
  innsync webhook add <slug> <url> [--events a,b]
  innsync webhook list <slug>
  innsync webhook remove <endpointId>
  innsync webhook rotate-secret <endpointId>
Add --json to print one JSON object on stdout.`,
  );
  return program;
}

/** A hotel's webhook endpoints (decisions.md, Events); the same use cases as the dashboard's Webhooks page. */
function addWebhookCommands(program: Command, json: JsonFlag): void {
  const webhook = program.command('webhook').description("manage a hotel's webhook endpoints (events out)");
  const describe = (e: EndpointView): string =>
    `${e.endpointId}  ${e.enabled ? 'enabled ' : 'disabled'}  ${e.url}  events: ${e.events === 'all' ? 'all' : e.events.join(',')}` +
    (e.disabledReason ? `\n    ${e.disabledReason}` : '');
  webhook
    .command('add <slug> <url>')
    .description(`add an endpoint; its signing secret is shown this once (event types: ${EVENT_TYPES.join(', ')})`)
    .option('--events <types>', 'comma-separated event types (default: all)')
    .action(async (slug: string, url: string, opts: { events?: string }) => {
      const config = loadConfig();
      const events = opts.events
        ?.split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const e = await withDb(config, async (db) =>
        addEndpoint(
          db,
          (await hotelOf(db, slug)).id,
          { url, events },
          { allowPrivateNetworks: config.webhookAllowPrivateNetworks, maxEndpointsPerHotel: config.webhookMaxEndpointsPerHotel },
        ),
      );
      print(json(), e, `${describe(e)}\n  secret: ${e.secret}\nStore the secret now: it is not shown again (rotate it with innsync webhook rotate-secret).`);
    });
  webhook
    .command('list <slug>')
    .description("list a hotel's endpoints")
    .action(async (slug: string) => {
      const endpoints = await withDb(loadConfig(), async (db) => listEndpoints(db, (await hotelOf(db, slug)).id));
      print(json(), { endpoints }, endpoints.length ? endpoints.map(describe).join('\n') : `no webhook endpoints for ${slug}`);
    });
  webhook
    .command('remove <endpointId>')
    .description('remove an endpoint and its deliveries')
    .action(async (endpointId: string) => {
      const r = await withDb(loadConfig(), (db) => removeEndpoint(db, null, endpointId));
      print(json(), r, `removed webhook endpoint ${endpointId}`);
    });
  webhook
    .command('rotate-secret <endpointId>')
    .description('give an endpoint a new signing secret, shown this once; the old one keeps signing for 24 hours')
    .action(async (endpointId: string) => {
      const e = await withDb(loadConfig(), (db) => rotateSecret(db, null, endpointId));
      print(json(), e, `${describe(e)}\n  new secret: ${e.secret}\nThe previous secret also signs until ${e.previousSecretUntil ?? ''}.`);
    });
}

/** Running and keeping the service: serve, migrate, purge, backup. */
function addServiceCommands(program: Command, json: JsonFlag): void {
  program
    .command('serve')
    .description('serve the API over HTTPS (what `npm start` runs)')
    .action(async () => {
      const config = loadConfig();
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
      const config = loadConfig();
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
      'run the retention jobs now (request log 90 days, idempotency records 24 hours, webhook events 30 days, expired dashboard sessions, guests GUEST_RETENTION_DAYS)',
    )
    .action(async () => {
      const config = loadConfig();
      const r = await withDb(config, (db) => runRetention(db, config.guestRetentionDays));
      const guests =
        config.guestRetentionDays === null
          ? 'guest anonymisation is off (GUEST_RETENTION_DAYS=off)'
          : `anonymised ${r.guests} guest stays checked out over ${config.guestRetentionDays} days ago`;
      const purged = `purged ${r.requestLog} request-log rows, ${r.idempotency} idempotency records, ${r.webhookEvents} webhook events and ${r.sessions} expired dashboard sessions`;
      print(json(), r, `${purged}; ${guests}`);
    });

  program
    .command('backup <file>')
    .description('write a consistent copy of the SQLite database to <file> while the server keeps serving (PostgreSQL: use pg_dump)')
    .action(async (file: string) => {
      const config = loadConfig();
      if (config.databaseUrl) throw new CliFailure('backup copies the SQLite database; with DATABASE_URL (PostgreSQL) use pg_dump instead');
      let result: { file: string; bytes: number };
      try {
        result = await backupSqlite(config.dataDir, file);
      } catch (err) {
        throw new CliFailure(`backup failed: ${err instanceof Error ? err.message : String(err)}`);
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
      const r = await withDb(loadConfig(), async (db) => eraseGuest(db, await hotelOf(db, slug), selector, { type: 'system', id: null, mode: null }));
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
      const doc = await withDb(loadConfig(), async (db) => exportGuest(db, await hotelOf(db, slug), selector));
      // The export is a JSON document with or without --json.
      process.stdout.write(`${JSON.stringify(doc, null, json() ? undefined : 2)}\n`);
    },
  );
}

/** operations.md: non-zero on failure; a usage error (unknown command or option, a missing argument) is told apart. */
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
    const known = err instanceof ApiError || err instanceof OperationError || err instanceof ConfigError || err instanceof CliFailure;
    const reason = err instanceof Error ? err.message : String(err);
    if (argv.includes('--json')) {
      const code = err instanceof ApiError ? err.code : err instanceof ConfigError ? 'CONFIG_ERROR' : known ? 'FAILED' : 'INTERNAL_ERROR';
      process.stderr.write(`${JSON.stringify({ status: 'error', code, message: known ? reason : `failed: ${reason}` })}\n`);
    } else process.stderr.write(`innsync: ${known ? reason : `failed: ${reason}`}\n`);
    process.exitCode = EXIT_FAILURE;
  }
}
