import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { issueKeyPair, revokeKeys } from '../../src/operations.js';
import { guest, startTestServer, testEngines, directDatabaseUrl } from '../support/harness.js';
import { freePort, startPostgresCluster, type PostgresCluster } from '../support/postgres-cluster.js';
import { getJson, parseJsonOutput, postJson, runCli, spawnServe, waitForExit, waitForHttps } from './cli-helpers.js';

// docs/backup-restore.md, PostgreSQL: the procedure run exactly as the page writes it.
// Data goes in through the HTTPS API; pg_dump --format=custom; a new, empty database on
// another cluster, owned by a role of its own (not a superuser); pg_restore --no-owner
// --no-privileges --exit-on-error --single-transaction; innsync migrate; innsync serve.

const run = promisify(execFile);
const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Every table of the public schema with its rows (sorted), and every index definition. */
async function contents(url: string): Promise<{ tables: Record<string, string[]>; indexes: string[] }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const names = await client.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`,
    );
    const tables: Record<string, string[]> = {};
    for (const { table_name: name } of names.rows) {
      const rows = await client.query(`select * from "${name}"`);
      tables[name] = rows.rows.map((r) => JSON.stringify(r)).sort();
    }
    const indexes = await client.query<{ indexdef: string }>(`select indexdef from pg_indexes where schemaname = 'public' order by indexname`);
    return { tables, indexes: indexes.rows.map((r) => r.indexdef) };
  } finally {
    await client.end();
  }
}

describe.runIf(testEngines().includes('postgres'))('PostgreSQL restore as docs/backup-restore.md writes it', () => {
  const dirs: string[] = [];
  let target: PostgresCluster | null = null;
  afterAll(() => {
    target?.stop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it(
    'pg_dump -Fc, pg_restore into a new, empty database on another cluster (a role of its own), innsync migrate, innsync serve: every row and index is there; guests, activity and keys work (a live key, the test key; a revoked key stays refused)',
    { timeout: 300_000 },
    async () => {
      // The source: a server on PostgreSQL, filled through the HTTPS API.
      const t = await startTestServer('postgres');
      const sourceUrl = directDatabaseUrl(t.config);
      const base = `${t.pmsBase}`;
      const stays = [guest({ pmsGuestId: 'PMS-STAYING' }), guest({ pmsGuestId: 'PMS-UPDATED' }), guest({ pmsGuestId: 'PMS-LEFT' })];
      for (const g of stays) expect((await t.post(`${base}/guests/checkin`, g)).status).toBe(200);
      expect((await t.post(`${base}/guests/update`, { pmsGuestId: 'PMS-UPDATED', firstName: 'Grace' })).status).toBe(200);
      expect((await t.post(`${base}/guests/checkout`, { pmsGuestId: 'PMS-LEFT' })).status).toBe(200);
      const revoked = await issueKeyPair(t.server.database.db, t.slug);
      await revokeKeys(t.server.database.db, revoked.keyId);
      expect((await t.api('GET', `${base}/guests`, { key: revoked.live })).status).toBe(401);
      // Stopped, so the request log is written whole and nothing changes between dump and comparison.
      await t.close();
      const before = await contents(sourceUrl);
      expect(before.tables.activity_log?.length).toBeGreaterThanOrEqual(4);
      expect(before.tables.api_keys?.length).toBe(4);

      // 1. pg_dump --format=custom --file=innsync.dump "$DATABASE_URL"
      const work = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-pgdump-'));
      dirs.push(work);
      const dump = path.join(work, 'innsync.dump');
      await run(path.join(PG_BIN, 'pg_dump'), ['--format=custom', `--file=${dump}`, sourceUrl]);

      // 2. A new, empty database owned by the service's role (another cluster: a new machine).
      target = await startPostgresCluster();
      const admin = new pg.Client({ connectionString: target.adminUrl });
      await admin.connect();
      try {
        await admin.query(`create role innsync login`);
        await admin.query(`create database innsync owner innsync`);
      } finally {
        await admin.end();
      }
      const targetUrl = target.adminUrl.replace('postgres://postgres@', 'postgres://innsync@').replace(/\/postgres$/, '/innsync');

      // 3. pg_restore --no-owner --no-privileges --exit-on-error --single-transaction --dbname="$NEW_DATABASE_URL" innsync.dump
      await run(path.join(PG_BIN, 'pg_restore'), ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${targetUrl}`, dump]);

      // 4. innsync migrate (nothing pending for a dump of this release).
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-pgrestored-'));
      dirs.push(dataDir);
      const env = { DATA_DIR: dataDir, DATABASE_URL: targetUrl };
      expect(parseJsonOutput(await runCli(['migrate', '--json'], { env }))).toEqual({ applied: [] });

      // Every row of every table, and every index (the invariants: unique indexes), came across.
      const after = await contents(targetUrl);
      expect(Object.keys(after.tables)).toEqual(Object.keys(before.tables));
      expect(after).toEqual(before);

      // 5. innsync serve on it: the keys work as they did.
      const port = await freePort();
      const proc = spawnServe({ ...env, PORT: String(port), HTTP_PORT: 'off', HOST: '127.0.0.1' });
      try {
        const { agent } = await waitForHttps(proc, dataDir, port, 90_000);
        const api = `https://127.0.0.1:${port}${base}`;
        const listed = await getJson(agent, `${api}/guests`, t.keys.live);
        expect(listed.status, listed.text).toBe(200);
        const roster = (listed.body as { guests: Array<{ pmsGuestId: string; firstName: string }> }).guests;
        expect(roster.map((g) => g.pmsGuestId).sort()).toEqual(['PMS-STAYING', 'PMS-UPDATED']);
        expect(roster.find((g) => g.pmsGuestId === 'PMS-UPDATED')?.firstName).toBe('Grace');
        expect((await postJson(agent, `${api}/guests/checkin`, t.keys.live, guest({ pmsGuestId: 'PMS-AFTER-RESTORE' }))).status).toBe(200);
        // The checked-out guest can come back: its stay's history is there, its room free.
        expect((await postJson(agent, `${api}/guests/checkin`, t.keys.live, stays[2])).status).toBe(200);
        expect((await getJson(agent, `${api}/guests`, t.keys.test)).status).toBe(200);
        expect((await getJson(agent, `${api}/guests`, revoked.live)).status).toBe(401);
        await agent.close();
      } finally {
        proc.child.kill('SIGTERM');
        await waitForExit(proc, 60_000);
      }
    },
  );
});
