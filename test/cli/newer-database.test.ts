import fs from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { createTestStorage, testEngines } from '../support/harness.js';
import { lines, parseJsonOutput, runCli, storageEnv, type Storage } from './cli-helpers.js';

// docs/backup-restore.md: a database a newer release has migrated (a dump restored into an
// older release) is refused by `innsync migrate` and `innsync serve` with a message that
// says so and names the fix, not the migrator's "corrupted migrations".

describe.each(testEngines())('a database of a newer release (%s)', (engine) => {
  let storage: Storage;
  let env: Record<string, string>;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    env = storageEnv(storage);
    expect((await runCli(['migrate', '--json'], { env })).code).toBe(0);
    const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    try {
      await sql`insert into kysely_migration (name, timestamp) values (${'0999_from_a_later_release'}, ${new Date().toISOString()})`.execute(handle.db);
    } finally {
      await handle.close();
    }
  });
  afterAll(() => fs.rmSync(storage.dataDir, { recursive: true, force: true }));

  it('innsync migrate exits 1 with DATABASE_TOO_NEW, naming the unknown migration and the fix', async () => {
    const asJson = await runCli(['migrate', '--json'], { env });
    expect(asJson.code).toBe(1);
    const failure = JSON.parse(lines(asJson.stderr).at(-1)!);
    expect(failure).toMatchObject({ status: 'error', code: 'DATABASE_TOO_NEW' });
    expect(failure.message).toContain('0999_from_a_later_release');
    expect(failure.message).toMatch(/newer release of innsync.*run that release or a newer one, or restore a backup made by this release/);
    expect(failure.message).not.toMatch(/corrupted/);

    const plain = await runCli(['migrate'], { env });
    expect(plain.code).toBe(1);
    expect(lines(plain.stderr)).toEqual([expect.stringMatching(/^innsync: The database was written by a newer release of innsync/)]);
  });

  it('innsync serve refuses to start on it, with the same message', async () => {
    const r = await runCli(['serve'], { env: { ...env, PORT: '0', HTTP_PORT: '0', HOST: '127.0.0.1' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/newer release of innsync \(migrations this build does not know: 0999_from_a_later_release\)/);
  });

  it('a database this release wrote migrates as before', async () => {
    const fresh = await createTestStorage(engine);
    try {
      const r = parseJsonOutput(await runCli(['migrate', '--json'], { env: storageEnv(fresh) }));
      expect(r.applied.length).toBeGreaterThan(10);
      expect(parseJsonOutput(await runCli(['migrate', '--json'], { env: storageEnv(fresh) }))).toEqual({ applied: [] });
    } finally {
      fs.rmSync(fresh.dataDir, { recursive: true, force: true });
    }
  });
});
