import { InvalidArgumentError, type Command } from 'commander';
import { print, type JsonFlag } from './output.js';
import { configFromEnv, withDb } from './storage.js';

// README.md, "Operating it": the provisioning API's tokens and request log
// (docs/admin-api.md). The service code is loaded when a command runs.

const service = () => import('../admin/tokens.js');

/** At most this many request-log rows are shown. */
const MAX_LOG_ROWS = 1000;

function logLimit(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_LOG_ROWS)
    throw new InvalidArgumentError(`--limit must be a whole number from 1 to ${MAX_LOG_ROWS}.`);
  return Number(raw);
}

export function addOperatorCommands(program: Command, json: JsonFlag): void {
  const operator = program.command('operator').description('the provisioning API (/api/admin/v1): operator tokens and its request log');
  const token = operator.command('token').description('operator tokens: create, list, revoke');
  token
    .command('create')
    .description('create an operator token; it is shown this once (only its SHA-256 is kept)')
    .requiredOption('--name <name>', 'what the token is for (1 to 100 characters)')
    .action(async (opts: { name: string }) => {
      const { createOperatorToken } = await service();
      const t = await withDb(await configFromEnv(), (db) => createOperatorToken(db, opts.name));
      print(json(), t, `operator token ${t.tokenId} (${t.name}):\n  ${t.token}\nIt is shown this once: store it now.`);
    });
  token
    .command('list')
    .description('list the operator tokens (never a token itself)')
    .action(async () => {
      const { listOperatorTokens } = await service();
      const tokens = await withDb(await configFromEnv(), (db) => listOperatorTokens(db));
      const line = (t: (typeof tokens)[number]) =>
        `${t.tokenId}  ${t.revokedAt ? `revoked ${t.revokedAt}` : 'active'}  created ${t.createdAt}  last used ${t.lastUsedAt ?? 'never'}  ${t.name}`;
      print(json(), { tokens }, tokens.length ? tokens.map(line).join('\n') : 'no operator tokens');
    });
  token
    .command('revoke <tokenId>')
    .description('revoke an operator token: its next request is refused')
    .action(async (tokenId: string) => {
      const { revokeOperatorToken } = await service();
      const r = await withDb(await configFromEnv(), (db) => revokeOperatorToken(db, tokenId));
      print(json(), r, `revoked operator token ${tokenId}`);
    });
  operator
    .command('log')
    .description('the latest requests of the provisioning API, newest first (no bodies)')
    .option('--limit <n>', `how many (1 to ${MAX_LOG_ROWS}, default 50)`, logLimit, 50)
    .action(async (opts: { limit: number }) => {
      const { latestOperatorRequests } = await service();
      const requests = await withDb(await configFromEnv(), (db) => latestOperatorRequests(db, opts.limit));
      const line = (r: (typeof requests)[number]) =>
        `${r.at}  ${r.status}  ${r.method} ${r.route}  ${Math.round(r.durationMs)} ms  ${r.tokenId ?? 'no valid token'}  ${r.clientIp}`;
      print(json(), { requests }, requests.length ? requests.map(line).join('\n') : 'no requests logged');
    });
}
