import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { lines, parseJsonOutput, runCli, storageEnv } from './cli-helpers.js';

// README.md, Operating it: `innsync operator token create|list|revoke` and `innsync
// operator log` (docs/admin-api.md): a token shown once and kept as its SHA-256, refused
// by the running server once revoked; the provisioning API's requests, newest first.

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

describe.each(testEngines())('innsync operator token and operator log (%s)', (engine) => {
  let t: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    t = await startTestServer(engine);
    env = storageEnv(t.config);
  });
  afterAll(() => t.close());

  const cli = (args: string[]) => runCli(args, { env });
  const hotels = (token: string) => t.api('GET', '/api/admin/v1/hotels', { key: token });
  let created: { tokenId: string; name: string; token: string };

  it('token create prints the token once (op_, 38 base62 characters); only its SHA-256 is stored; the server takes it', async () => {
    created = parseJsonOutput(await cli(['operator', 'token', 'create', '--name', 'Fleet sync', '--json']));
    expect(Object.keys(created).sort()).toEqual(['name', 'token', 'tokenId']);
    expect(created.tokenId).toMatch(/^opt_/);
    expect(created.name).toBe('Fleet sync');
    expect(created.token).toMatch(/^op_[0-9A-Za-z]{38}$/);
    const rows = await t.server.database.db.selectFrom('operator_tokens').selectAll().execute();
    expect(rows.map((r) => r.token_sha256)).toEqual([sha256(created.token)]);
    expect(JSON.stringify(rows)).not.toContain(created.token);
    expect((await hotels(created.token)).status).toBe(200);

    const text = await cli(['operator', 'token', 'create', '--name', 'Second']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^operator token opt_\S+ \(Second\):\n {2}op_[0-9A-Za-z]{38}\nIt is shown this once: store it now\.\n$/);
  }, 60_000);

  it('token list shows every token (never the token) with its last use; log shows the API requests newest first', async () => {
    const list = parseJsonOutput(await cli(['operator', 'token', 'list', '--json']));
    expect(list.tokens).toHaveLength(2);
    expect(list.tokens[0]).toEqual({
      tokenId: created.tokenId,
      name: 'Fleet sync',
      createdAt: expect.any(String),
      revokedAt: null,
      lastUsedAt: expect.any(String),
    });
    expect(list.tokens[1]).toMatchObject({ name: 'Second', lastUsedAt: null });
    expect(JSON.stringify(list)).not.toContain('op_');
    expect((await cli(['operator', 'token', 'list'])).stdout).toContain(`${created.tokenId}  active`);

    expect((await t.api('GET', '/api/admin/v1/hotels/no-such-hotel', { key: created.token })).status).toBe(404);
    // The row is written as the answer ends.
    const db = t.server.database.db;
    await expect.poll(async () => (await db.selectFrom('operator_request_log').select('id').where('status', '=', 404).execute()).length).toBe(1);
    const log = parseJsonOutput(await cli(['operator', 'log', '--limit', '2', '--json']));
    expect(log.requests).toEqual([
      expect.objectContaining({ method: 'GET', route: '/api/admin/v1/hotels/:slug', status: 404, tokenId: created.tokenId }),
      expect.objectContaining({ method: 'GET', route: '/api/admin/v1/hotels', status: 200, tokenId: created.tokenId }),
    ]);
    const text = await cli(['operator', 'log']);
    expect(lines(text.stdout)[0]).toMatch(/^\S+ {2}404 {2}GET \/api\/admin\/v1\/hotels\/:slug {2}\d+ ms {2}opt_\S+ {2}\S+$/);
  }, 60_000);

  it('token revoke: the running server refuses the token at once; an unknown id is OPERATOR_TOKEN_NOT_FOUND; bad arguments fail', async () => {
    expect(parseJsonOutput(await cli(['operator', 'token', 'revoke', created.tokenId, '--json']))).toEqual({ tokenId: created.tokenId, revoked: true });
    const refused = await hotels(created.token);
    expect([refused.status, refused.body.code]).toEqual([401, 'UNAUTHORIZED']);
    const list = parseJsonOutput(await cli(['operator', 'token', 'list', '--json']));
    expect(list.tokens[0].revokedAt).toEqual(expect.any(String));

    const unknown = await cli(['operator', 'token', 'revoke', 'opt_nothing', '--json']);
    expect([unknown.code, unknown.stdout]).toEqual([1, '']);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ status: 'error', code: 'OPERATOR_TOKEN_NOT_FOUND' });
    const blank = await cli(['operator', 'token', 'create', '--name', '  ', '--json']);
    expect([blank.code, JSON.parse(blank.stderr).code]).toEqual([1, 'INVALID_ARGUMENT']);
    expect((await cli(['operator', 'token', 'create'])).code).toBe(2);
    expect((await cli(['operator', 'log', '--limit', '0'])).code).toBe(2);
  }, 60_000);

  it('--help lists the operator commands', async () => {
    const help = await cli(['--help']);
    for (const line of [
      'innsync operator token create --name <name>',
      'innsync operator token list',
      'innsync operator token revoke <tokenId>',
      'innsync operator log [--limit <n>]',
    ])
      expect(help.stdout).toContain(line);
  }, 60_000);
});
