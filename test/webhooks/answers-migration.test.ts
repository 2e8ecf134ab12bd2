import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, sqliteFile } from '../../src/db/database.js';
import { migrateTo, migrateToLatest } from '../../src/db/migrations.js';
import { createTestStorage, testEngines } from '../support/harness.js';

// Migration 0012: receivers' answer bodies stored by earlier builds (they may echo a
// guest's data) are cleared and no longer kept; nothing of them is left in the files.

const run = promisify(execFile);
const ECHOED = 'echoed.guest.4711@example.org';

describe.each(testEngines())('migration 0012_webhook_answers_not_kept (%s)', (engine) => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('a stored answer body that echoed a guest is gone: the column, its values, and their bytes in the files', async () => {
    const storage = await createTestStorage(engine);
    dirs.push(storage.dataDir);
    const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    try {
      expect((await migrateTo(handle.db, '0011_request_log_field_caps')).at(-1)).toBe('0011_request_log_field_caps');
      const now = new Date().toISOString();
      await sql`insert into hotels (id, slug, name, created_at) values ('hotel_m', 'm', 'M', ${now})`.execute(handle.db);
      await sql`insert into webhook_endpoints (id, hotel_id, url, secret, created_at) values ('whe_m', 'hotel_m', 'https://hooks.example.com/', 'whsec_x', ${now})`.execute(
        handle.db,
      );
      await sql`insert into webhook_events (id, hotel_id, seq, type, payload, created_at) values ('evt_m', 'hotel_m', 1, 'webhook.test', '{}', ${now})`.execute(
        handle.db,
      );
      await sql`insert into webhook_deliveries (id, endpoint_id, event_id, seq, status, next_attempt_at, last_status, last_response, created_at)
        values ('dlv_m', 'whe_m', 'evt_m', 1, 'succeeded', ${now}, 200, ${JSON.stringify({ echoed: { email: ECHOED } })}, ${now})`.execute(handle.db);

      expect(await migrateToLatest(handle.db)).toContain('0012_webhook_answers_not_kept');
      const row = await sql<Record<string, unknown>>`select * from webhook_deliveries where id = 'dlv_m'`.execute(handle.db);
      expect(row.rows[0]).toMatchObject({ id: 'dlv_m', last_status: 200 });
      expect(row.rows[0]).not.toHaveProperty('last_response');
    } finally {
      await handle.close();
    }
    if (engine === 'postgres') {
      const { stdout } = await run('/usr/lib/postgresql/15/bin/pg_dump', ['--data-only', storage.databaseUrl ?? ''], { maxBuffer: 64 * 1024 * 1024 });
      expect(stdout).toContain('dlv_m');
      expect(stdout).not.toContain(ECHOED);
    } else {
      const file = sqliteFile(storage.dataDir);
      const bytes = [file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f).toString('latin1'));
      expect(bytes.join('\n')).toContain('dlv_m');
      expect(bytes.join('\n')).not.toContain(ECHOED);
    }
  });
});
