import fs from 'node:fs';
import pino from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { throughPgBouncer } from '../support/pgbouncer.js';
import { freePort } from '../support/postgres-cluster.js';
import { createTestStorage, type TestStorage } from '../support/harness.js';
import { testEngines } from '../support/engines.js';

// DATABASE_LISTEN_URL (README.md, "Operating it"; docs/deployment.md, "Through PgBouncer"):
// the LISTEN session for live changes needs a session of its own. A start whose LISTEN
// address cannot be reached, or does not hear the service's own changes (a pooler in
// transaction mode), fails with a message naming the variable.

const postgres = testEngines().includes('postgres');

describe.runIf(postgres)('DATABASE_LISTEN_URL (postgres)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  async function storage(): Promise<TestStorage & { direct: string; pooled: string }> {
    const s = await createTestStorage('postgres');
    dirs.push(s.dataDir);
    const direct = s.databaseListenUrl ?? s.databaseUrl ?? '';
    return { ...s, direct, pooled: throughPgBouncer(direct, inject('pgBouncerPort')) };
  }

  const start = (env: Record<string, string>) =>
    startServer(loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env }), pino({ level: 'silent' }));

  it.runIf(inject('pgBouncerPort') > 0)('through PgBouncer in transaction mode with the LISTEN session direct, the service starts and serves', async () => {
    const s = await storage();
    const server = await start({ DATA_DIR: s.dataDir, DATABASE_URL: s.pooled, DATABASE_LISTEN_URL: s.direct });
    await server.close();
  });

  it.runIf(inject('pgBouncerPort') > 0)(
    'a DATABASE_LISTEN_URL through PgBouncer in transaction mode (the default when DATABASE_URL leads there) is refused at start, naming the variable and the fix',
    async () => {
      const s = await storage();
      await expect(start({ DATA_DIR: s.dataDir, DATABASE_URL: s.pooled })).rejects.toMatchObject({
        code: 'CONFIG_ERROR',
        message: expect.stringMatching(
          /^DATABASE_LISTEN_URL \(default: DATABASE_URL\) does not hear the changes this service makes: .*direct connection to the primary/,
        ),
      });
    },
  );

  it('an unreachable DATABASE_LISTEN_URL is refused at start, naming the variable', async () => {
    const s = await storage();
    const nowhere = new URL(s.direct);
    nowhere.port = String(await freePort());
    await expect(start({ DATA_DIR: s.dataDir, DATABASE_URL: s.direct, DATABASE_LISTEN_URL: nowhere.toString() })).rejects.toMatchObject({
      code: 'CONFIG_ERROR',
      message: expect.stringMatching(/^DATABASE_LISTEN_URL \(default: DATABASE_URL\) could not be reached for live changes: .*ECONNREFUSED/),
    });
  });

  it('DATABASE_LISTEN_URL without DATABASE_URL, or not a postgres:// URL, is a configuration error naming it', () => {
    expect(() => loadConfig({ DATABASE_LISTEN_URL: 'postgres://x@127.0.0.1/x' })).toThrow(
      /^DATABASE_LISTEN_URL is used only with PostgreSQL: set DATABASE_URL too/,
    );
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x', DATABASE_LISTEN_URL: 'mysql://x' })).toThrow(
      /^DATABASE_LISTEN_URL must start with postgres:\/\//,
    );
    expect(loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/x' }).databaseListenUrl).toBe('postgres://x@127.0.0.1/x');
  });
});
