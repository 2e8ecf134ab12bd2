import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ERRORS, ERRORS } from '../../src/errors.js';
import { createTestStorage, testEngines } from '../support/harness.js';
import { parseJsonOutput, PROJECT_ROOT, runCli, storageEnv, type Storage } from './cli-helpers.js';

// README.md, Operating it: every failure of the command carries its own code with --json
// (CLI_ERRORS in errors.ts, or the API's code for a use case it shares), `hotel
// set-time-zone` changes a hotel's day, `--help` lists every command and option, and
// `--version` / `--help` load no web server or database driver.

/** The JSON failure of a command run with --json: exit 1, nothing on stdout, one object on stderr. */
function failure(r: { code: number | null; stdout: string; stderr: string }): { status: string; code: string; message: string } {
  expect([r.code, r.stdout]).toEqual([1, '']);
  return JSON.parse(r.stderr) as { status: string; code: string; message: string };
}

describe('the command line’s error codes and help', () => {
  it('every CLI code is its own (none is an API code), documented in README.md, with a sentence', () => {
    const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    for (const [code, meaning] of Object.entries(CLI_ERRORS)) {
      expect(Object.keys(ERRORS), code).not.toContain(code);
      expect(readme, code).toContain(`\`${code}\``);
      expect(meaning, code).toMatch(/^[A-Z`].*\.$/);
    }
    expect(Object.keys(CLI_ERRORS)).not.toContain('FAILED');
  });

  it('--help lists --time-zone, hotel set-time-zone and the webhook commands; set-time-zone has its own --help', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('innsync hotel create <slug> --name <name> [--time-zone <zone>]');
    expect(help.stdout).toContain('innsync hotel set-time-zone <slug> <zone>');
    for (const sub of ['enable <endpointId>', 'disable <endpointId>', 'test <endpointId>', 'deliveries <endpointId>'])
      expect(help.stdout).toContain(`innsync webhook ${sub}`);
    const own = await runCli(['hotel', 'set-time-zone', '--help']);
    expect([own.code, own.stdout]).toEqual([0, expect.stringContaining('Usage: innsync hotel set-time-zone [options] <slug> <zone>')]);
  }, 60_000);

  it('--version and --help load no web server or database module (commander only); a command that needs storage loads it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-modules-'));
    try {
      // A module-resolution hook that records every module the command loads.
      fs.writeFileSync(
        path.join(dir, 'hooks.mjs'),
        "import fs from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); fs.appendFileSync(process.env.LOADED_MODULES_FILE, r.url + '\\n'); return r; }\n",
      );
      fs.writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
      const loaded = async (args: string[], env: Record<string, string> = {}): Promise<string[]> => {
        const file = path.join(dir, `loaded-${args.join('-')}.txt`);
        const r = await runCli(args, { env: { ...env, LOADED_MODULES_FILE: file, NODE_OPTIONS: `--import ${path.join(dir, 'register.mjs')}` } });
        expect(r.code, r.stderr).toBe(0);
        return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
      };
      const heavy = /\/node_modules\/(fastify|@fastify\/[^/]+|kysely|pg|better-sqlite3|pino)\//;
      for (const args of [['--version'], ['--help'], ['webhook', '--help']]) {
        const modules = await loaded(args);
        expect(
          modules.some((m) => m.includes('/node_modules/commander/')),
          args.join(' '),
        ).toBe(true);
        expect(
          modules.filter((m) => heavy.test(m) || m.includes('/dist/src/server.js')),
          args.join(' '),
        ).toEqual([]);
      }
      // The hook sees what a command that opens storage loads.
      const withStorage = await loaded(['hotel', 'list'], { DATA_DIR: path.join(dir, 'data') });
      expect(withStorage.some((m) => m.includes('/node_modules/better-sqlite3/'))).toBe(true);
      expect(withStorage.some((m) => m.includes('/node_modules/kysely/'))).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.each(testEngines())('innsync hotel set-time-zone and failure codes (%s)', (engine) => {
  let storage: Storage;
  let env: Record<string, string>;
  const slug = `codes-${engine}`;
  const cli = (args: string[], input?: string) => runCli(args, { env, input });

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    env = storageEnv(storage);
    parseJsonOutput(await cli(['hotel', 'create', slug, '--name', 'Codes Hotel', '--json']));
  });
  afterAll(() => fs.rmSync(storage.dataDir, { recursive: true, force: true }));

  it('set-time-zone sets the zone hotel list shows (text and --json); an unknown zone or hotel is refused with its code', async () => {
    const text = await cli(['hotel', 'set-time-zone', slug, 'Europe/Berlin']);
    expect([text.code, text.stdout]).toEqual([0, `time zone of ${slug} set to Europe/Berlin\n`]);
    expect(parseJsonOutput(await cli(['hotel', 'set-time-zone', slug, 'America/New_York', '--json']))).toEqual({
      slug,
      name: 'Codes Hotel',
      timeZone: 'America/New_York',
    });
    expect(parseJsonOutput(await cli(['hotel', 'list', '--json'])).hotels).toEqual([expect.objectContaining({ slug, timeZone: 'America/New_York' })]);
    expect(failure(await cli(['hotel', 'set-time-zone', slug, 'Mars/Olympus_Mons', '--json']))).toEqual({
      status: 'error',
      code: 'INVALID_ARGUMENT',
      message: 'unknown time zone "Mars/Olympus_Mons": use an IANA time zone name such as "Europe/Berlin" or "America/New_York"',
    });
    expect(failure(await cli(['hotel', 'set-time-zone', 'no-such-hotel', 'UTC', '--json'])).code).toBe('HOTEL_NOT_FOUND');
    expect(parseJsonOutput(await cli(['hotel', 'list', '--json'])).hotels[0].timeZone).toBe('America/New_York');
  }, 120_000);

  it('--json failures: each its own code (HOTEL_EXISTS, USER_EXISTS, USER_NOT_FOUND, KEY_PAIR_NOT_FOUND, INVALID_ARGUMENT, CONFIG_ERROR), never FAILED', async () => {
    expect(failure(await cli(['hotel', 'create', slug, '--name', 'Again', '--json'])).code).toBe('HOTEL_EXISTS');
    parseJsonOutput(await cli(['user', 'create', slug, '--email', 'twice@codes.example', '--role', 'admin', '--json'], 'first-password-1'));
    const again = failure(await cli(['user', 'create', slug, '--email', 'twice@codes.example', '--role', 'admin', '--json'], 'other-password-2'));
    expect(again).toEqual({ status: 'error', code: 'USER_EXISTS', message: `hotel "${slug}" already has a user with e-mail twice@codes.example` });
    expect(failure(await cli(['user', 'deactivate', slug, 'nobody@codes.example', '--json'])).code).toBe('USER_NOT_FOUND');
    expect(failure(await cli(['key', 'revoke', 'key_nope', '--json'])).code).toBe('KEY_PAIR_NOT_FOUND');
    expect(failure(await cli(['user', 'create', slug, '--email', 'x@codes.example', '--role', 'owner', '--json'], 'some-password-3')).code).toBe(
      'INVALID_ARGUMENT',
    );
    expect(failure(await cli(['guest', 'erase', slug, '--json'])).code).toBe('INVALID_ARGUMENT');
    expect(failure(await runCli(['hotel', 'list', '--json'], { env: { ...env, SQLITE_SYNCHRONOUS: 'sometimes' } })).code).toBe('CONFIG_ERROR');
  }, 120_000);
});
