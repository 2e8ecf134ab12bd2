import type { Command } from 'commander';
import type { ListedSession } from '../operations.js';
import { readPassword } from './password.js';
import { print, type JsonFlag } from './output.js';
import { restrictionChanges, restrictionWords, type KeyRestrictionOptions } from './key-options.js';
import { CliError } from '../errors.js';
import { configFromEnv, withDb } from './storage.js';

// The use cases (operations.ts) and storage are loaded when a command runs.
const ops = () => import('../operations.js');

const when = (iso: string | null): string => (iso ? iso.replace('T', ' ').slice(0, 19) : 'never');

/** Hotels, their API key pairs and staff users (the same use cases as the dashboard's admin pages). */
export function addAccountCommands(program: Command, json: JsonFlag): void {
  const hotel = program.command('hotel').description('manage hotels');
  hotel
    .command('create <slug>')
    .description('create a hotel (slug: 2-63 characters of a-z, 0-9 and -, starting with a letter)')
    .requiredOption('--name <name>', 'the hotel name')
    .option('--time-zone <zone>', 'the hotel\'s IANA time zone, its "today" (default UTC), e.g. Europe/Berlin')
    .action(async (slug: string, opts: { name: string; timeZone?: string }) => {
      const { createHotel } = await ops();
      const h = await withDb(await configFromEnv(), (db) => createHotel(db, slug, opts.name, opts.timeZone));
      print(json(), { slug: h.slug, name: h.name, timeZone: h.timeZone }, `created hotel ${h.slug} (${h.name}, ${h.timeZone})`);
    });
  hotel
    .command('set-time-zone <slug> <zone>')
    .description('set a hotel\'s IANA time zone, its "today" on the board, e.g. Europe/Berlin (as the dashboard\'s Staff page does)')
    .action(async (slug: string, zone: string) => {
      const { changeHotelTimeZone } = await ops();
      const h = await withDb(await configFromEnv(), (db) => changeHotelTimeZone(db, slug, zone));
      print(json(), h, `time zone of ${h.slug} set to ${h.timeZone}`);
    });
  hotel
    .command('require-mfa <slug> <setting>')
    .description(
      'on: every staff sign-in at the hotel needs a second factor (an account without one sets one up at its next sign-in); off: only accounts that have one',
    )
    .action(async (slug: string, setting: string) => {
      const { requireSecondFactor } = await ops();
      const r = await withDb(await configFromEnv(), (db) => requireSecondFactor(db, slug, setting));
      print(json(), r, `${r.slug}: a second factor is ${r.requireSecondFactor ? 'required' : 'not required'} at sign-in`);
    });
  hotel
    .command('list')
    .description('list every hotel')
    .action(async () => {
      const { listHotels } = await ops();
      const hotels = await withDb(await configFromEnv(), (db) => listHotels(db));
      print(
        json(),
        { hotels },
        hotels.length ? hotels.map((h) => `${h.slug}  ${h.name}  ${h.timeZone}`).join('\n') : 'no hotels yet: innsync hotel create <slug> --name <name>',
      );
    });

  addKeyCommands(program, json);
  addUserCommands(program, json);
}

const NETWORKS_HELP = 'CIDR blocks the keys may be used from, comma-separated (e.g. 203.0.113.0/24,2001:db8::/32); none: any address';
const EXPIRES_HELP = 'the last day the keys work, YYYY-MM-DD (UTC); never: until revoked';

function addKeyCommands(program: Command, json: JsonFlag): void {
  const key = program.command('key').description('manage API key pairs');
  key
    .command('issue <slug>')
    .description('issue a live/test key pair; the plain keys are shown this once')
    .option('--networks <cidrs>', NETWORKS_HELP)
    .option('--expires <date>', EXPIRES_HELP)
    .option('--read-only', 'the keys may only read (GET /guests)')
    .action(async (slug: string, opts: KeyRestrictionOptions) => {
      const { issueKeyPair } = await ops();
      const config = await configFromEnv();
      const restrictions = restrictionChanges(opts);
      const pair = await withDb(config, (db) => issueKeyPair(db, slug, { maxActive: config.maxKeyPairsPerHotel, restrictions }));
      print(
        json(),
        pair,
        `key pair ${pair.keyId} for ${slug}\n  live: ${pair.live}\n  test: ${pair.test}\nStore both now: they are not shown again (only their SHA-256 hashes are kept).`,
      );
    });
  key
    .command('set <slug> <keyId>')
    .description('change what an active key pair may do: its networks, its last day, read-only or read-write')
    .option('--networks <cidrs>', NETWORKS_HELP)
    .option('--expires <date>', EXPIRES_HELP)
    .option('--read-only', 'the keys may only read (GET /guests)')
    .option('--read-write', 'the keys may read and write')
    .action(async (slug: string, keyId: string, opts: KeyRestrictionOptions) => {
      const { changeKeyRestrictions } = await ops();
      const changes = restrictionChanges(opts);
      if (Object.keys(changes).length === 0) throw new CliError('INVALID_ARGUMENT', 'name a change: --networks, --expires, --read-only or --read-write');
      const after = await withDb(await configFromEnv(), (db) => changeKeyRestrictions(db, slug, keyId, changes));
      print(json(), { keyId, ...after }, `key pair ${keyId}: ${restrictionWords(after)}`);
    });
  key
    .command('list <slug>')
    .description("list a hotel's key pairs (never the keys) and what each may do")
    .action(async (slug: string) => {
      const { listKeys } = await ops();
      const keys = await withDb(await configFromEnv(), (db) => listKeys(db, slug));
      const line = (k: (typeof keys)[number]) =>
        `${k.keyId}  ${k.revokedAt ? `revoked ${when(k.revokedAt)}` : 'active'}  created ${when(k.createdAt)}  last used ${when(k.lastUsedAt)}  ${restrictionWords(k)}`;
      print(json(), { keys }, keys.length ? keys.map(line).join('\n') : `no key pairs for ${slug}: innsync key issue ${slug}`);
    });
  key
    .command('revoke <keyId>')
    .description('revoke both keys of the pair at once')
    .action(async (keyId: string) => {
      const { revokeKeys } = await ops();
      await withDb(await configFromEnv(), (db) => revokeKeys(db, keyId));
      print(json(), { keyId, revoked: true }, `revoked key pair ${keyId}`);
    });
  key
    .command('reset-limits <keyId>')
    .description('reset the rate-limit counts of both keys of the pair, every endpoint, at once (the server keeps running)')
    .action(async (keyId: string) => {
      const { resetKeyLimits } = await ops();
      await withDb(await configFromEnv(), (db) => resetKeyLimits(db, keyId));
      print(json(), { keyId, reset: true }, `rate limits of key pair ${keyId} reset: its live and test keys start every endpoint's window afresh`);
    });
}

function addUserCommands(program: Command, json: JsonFlag): void {
  const user = program.command('user').description('manage staff users');
  user
    .command('create <slug>')
    .description('create a staff user; the password is asked for on a terminal (not shown), or read from stdin')
    .requiredOption('--email <email>', 'the e-mail address used to log in')
    .requiredOption('--role <role>', 'admin or receptionist')
    .action(async (slug: string, opts: { email: string; role: string }) => {
      const { createStaffUser } = await ops();
      const password = await readPassword();
      const u = await withDb(await configFromEnv(), (db) => createStaffUser(db, slug, opts.email, opts.role, password));
      print(json(), u, `created ${u.role} ${u.email} (${u.userId})`);
    });
  user
    .command('list <slug>')
    .description("list a hotel's staff users")
    .action(async (slug: string) => {
      const { listStaff } = await ops();
      const users = await withDb(await configFromEnv(), (db) => listStaff(db, slug));
      const line = (u: (typeof users)[number]) => `${u.email}  ${u.role}  ${u.deactivatedAt ? `deactivated ${when(u.deactivatedAt)}` : 'active'}`;
      print(json(), { users }, users.length ? users.map(line).join('\n') : `no users at ${slug}: innsync user create ${slug} --email … --role admin`);
    });
  user
    .command('deactivate <slug> <email>')
    .description('deactivate a staff user: logged out at once, no further logins')
    .action(async (slug: string, email: string) => {
      const { deactivateStaff } = await ops();
      const r = await withDb(await configFromEnv(), (db) => deactivateStaff(db, slug, email));
      print(json(), r, `deactivated ${r.email}`);
    });
  user
    .command('role <slug> <email> <role>')
    .description("change a staff user's role to admin or receptionist (as an admin does on the Staff page); the hotel keeps an active admin")
    .action(async (slug: string, email: string, role: string) => {
      const { setStaffRole } = await ops();
      const r = await withDb(await configFromEnv(), (db) => setStaffRole(db, slug, email, role));
      print(json(), r, r.changed ? `${r.email} is now ${r.role}` : `${r.email} is ${r.role} already: nothing changed`);
    });

  user
    .command('sessions <slug> <email>')
    .description("list a staff user's dashboard sessions: id, device, IP, started, last seen, display")
    .action(async (slug: string, email: string) => {
      const { listStaffSessions } = await ops();
      const r = await withDb(await configFromEnv(), (db) => listStaffSessions(db, slug, email));
      print(json(), r, r.sessions.length ? sessionTable(r.sessions) : `${r.email} has no live dashboard sessions`);
    });

  user
    .command('mfa-reset <slug> <email>')
    .description("remove a staff user's second factors (authenticator app and recovery codes); their sessions end")
    .action(async (slug: string, email: string) => {
      const { resetStaffFactors } = await ops();
      const r = await withDb(await configFromEnv(), (db) => resetStaffFactors(db, slug, email));
      print(json(), r, `second factors of ${r.email} removed; their sessions ended`);
    });
  user
    .command('set-password <slug> <email>')
    .description("set a staff user's password (asked for on a terminal, or read from stdin); their sessions end")
    .action(async (slug: string, email: string) => {
      const { setStaffPasswordByEmail } = await ops();
      const password = await readPassword();
      const r = await withDb(await configFromEnv(), (db) => setStaffPasswordByEmail(db, slug, email, password));
      print(json(), r, `password of ${r.email} changed; their sessions ended`);
    });
}

/** `innsync user sessions` as a table: one line a session under a header, columns aligned. */
function sessionTable(sessions: ListedSession[]): string {
  const rows = [
    ['ID', 'DEVICE', 'IP', 'STARTED', 'LAST SEEN', 'DISPLAY'],
    ...sessions.map((s) => [s.id, s.device, s.ip ?? '-', when(s.createdAt), when(s.lastSeenAt), s.display ? 'yes' : 'no']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
