import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { createHotel, verifyPassword } from '../../src/operations.js';
import { createTestStorage } from '../support/harness.js';
import { BIN, childEnv, parseJsonOutput, PROJECT_ROOT, runCli, storageEnv, type Storage } from './cli-helpers.js';

// README.md: `innsync user create` asks for the password on a terminal without showing it,
// twice (a typo nobody can see must not become the password); two that differ are refused
// (PASSWORD_MISMATCH) and nothing is stored. Piped on stdin it is read once. `script` (util-linux)
// gives the command a real pseudo-terminal, as an operator's shell would.

/** Runs `innsync args` on a pseudo-terminal, typing the next of `answers` at each password prompt; its output is the terminal's. */
async function onTerminal(args: string[], env: Record<string, string>, answers: string[]): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: PROJECT_ROOT,
    env: childEnv({ LOG_LEVEL: 'silent', ...env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  let answered = 0;
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    screen += d;
    const prompts = screen.split(/Password(?: again)?: /).length - 1;
    for (; answered < prompts; answered++) child.stdin.write(`${answers[answered] ?? ''}\r`);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearTimeout(timer);
  return { code, screen };
}

describe('innsync user create on a terminal (sqlite)', () => {
  let storage: Storage;
  let env: Record<string, string>;
  let handle: DatabaseHandle;
  const slug = 'tty-hotel';

  beforeAll(async () => {
    storage = await createTestStorage('sqlite');
    env = storageEnv(storage);
    handle = openDatabase({ databaseUrl: null, dataDir: storage.dataDir });
    await migrateToLatest(handle.db);
    await createHotel(handle.db, slug, 'TTY Hotel');
  });
  afterAll(async () => {
    await handle.close();
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  const hashOf = async (email: string) =>
    (await handle.db.selectFrom('staff_users').select('password_hash').where('email', '=', email).executeTakeFirst())?.password_hash ?? null;

  it('asks twice and creates the user when both agree; the password is never shown', async () => {
    const r = await onTerminal(['user', 'create', slug, '--email', 'same@tty.example', '--role', 'admin'], env, ['typed-twice-4567', 'typed-twice-4567']);
    expect(r.code).toBe(0);
    expect(r.screen).toContain('Password: ');
    expect(r.screen).toContain('Password again: ');
    expect(r.screen).toContain('created admin same@tty.example');
    expect(r.screen).not.toContain('typed-twice');
    expect(await verifyPassword('typed-twice-4567', (await hashOf('same@tty.example')) ?? '')).toBe(true);
  }, 60_000);

  it('two passwords that differ are refused (exit 1, PASSWORD_MISMATCH with --json) and no user is created', async () => {
    const text = await onTerminal(['user', 'create', slug, '--email', 'typo@tty.example', '--role', 'admin'], env, ['first-password-1', 'first-passwrod-1']);
    expect(text.code).toBe(1);
    expect(text.screen).toContain('innsync: the two passwords typed differ: run the command again and type the same password twice');
    const json = await onTerminal(['user', 'create', slug, '--email', 'typo@tty.example', '--role', 'admin', '--json'], env, [
      'one-password-1',
      'another-one-2',
    ]);
    expect(json.code).toBe(1);
    expect(json.screen).toContain('"code":"PASSWORD_MISMATCH"');
    expect(await hashOf('typo@tty.example')).toBeNull();
  }, 60_000);

  it('piped on stdin the password is read once (no prompt)', async () => {
    const r = await runCli(['user', 'create', slug, '--email', 'piped@tty.example', '--role', 'receptionist', '--json'], {
      env,
      input: 'quiet-harbor-lamp-890\n',
    });
    expect(parseJsonOutput(r)).toMatchObject({ email: 'piped@tty.example', role: 'receptionist' });
    expect(r.stderr).toBe('');
    expect(await verifyPassword('quiet-harbor-lamp-890', (await hashOf('piped@tty.example')) ?? '')).toBe(true);
  });
});
