import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// REQUEST_LOG=off (README.md: Logs): no request-log rows; the key's "last used" time is still kept.
describe.each(testEngines())('REQUEST_LOG (%s)', (engine) => {
  let t: TestServer | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  /** A check-in on a server with `env`, then a stop (it writes every row queued); the rows and the key's last use, read afterwards. */
  async function checkInThenStop(env: Record<string, string>): Promise<{ rows: number; lastUsed: string | null; requestId: string }> {
    t = await startTestServer(engine, env);
    const res = await t.post(`${t.pmsBase}/guests/checkin`, guest());
    expect(res.status).toBe(200);
    await t.server.close();
    const again = openDatabase({ databaseUrl: t.config.databaseUrl, dataDir: t.config.dataDir });
    try {
      const rows = await again.db.selectFrom('request_log').select('id').execute();
      const key = await again.db
        .selectFrom('api_keys')
        .select('last_used_at')
        .where('pair_id', '=', t.keys.keyId)
        .where('mode', '=', 'live')
        .executeTakeFirstOrThrow();
      return { rows: rows.length, lastUsed: key.last_used_at, requestId: String(res.body.requestId) };
    } finally {
      await again.close();
    }
  }

  it('on (the default): the request has its row', async () => {
    const r = await checkInThenStop({});
    expect(r.rows).toBe(1);
    expect(r.lastUsed).not.toBeNull();
  });

  it('off: the request leaves no request-log row, and the key still records its last use', async () => {
    const r = await checkInThenStop({ REQUEST_LOG: 'off' });
    expect(r.rows).toBe(0);
    expect(r.lastUsed).not.toBeNull();
  });

  it('any other value is refused, naming the variable', () => {
    expect(loadConfig({ REQUEST_LOG: 'on' }).requestLog).toBe(true);
    expect(loadConfig({ REQUEST_LOG: 'OFF' }).requestLog).toBe(false);
    expect(() => loadConfig({ REQUEST_LOG: 'no' })).toThrow('REQUEST_LOG must be "on" or "off", got "no"');
  });
});
