import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStorage } from '../support/harness.js';
import { freePort } from '../support/postgres-cluster.js';
import { lines, spawnServe, storageEnv, waitForExit, waitForHttps, type Storage } from './cli-helpers.js';

// The start log names the address the service listens on with the scheme it serves:
// `innsync serve` listens with TLS (a generated certificate here), so https://, never http://.

describe('innsync serve: the start log (sqlite)', () => {
  let storage: Storage;
  beforeAll(async () => {
    storage = await createTestStorage('sqlite');
  });
  afterAll(() => fs.rmSync(storage.dataDir, { recursive: true, force: true }));

  it('every "listening" line names https://127.0.0.1:<PORT>; none says http:// for the HTTPS port', async () => {
    const port = await freePort();
    const proc = spawnServe({ ...storageEnv(storage), PORT: String(port), HTTP_PORT: 'off', HOST: '127.0.0.1', LOG_LEVEL: 'info' });
    try {
      const { agent } = await waitForHttps(proc, storage.dataDir, port, 60_000);
      await agent.close();
    } finally {
      proc.child.kill('SIGTERM');
      await waitForExit(proc);
    }
    const messages = lines(proc.output().stdout)
      .filter((l) => l.startsWith('{'))
      .map((l) => String((JSON.parse(l) as { msg?: unknown }).msg));
    const listening = messages.filter((m) => /listening/i.test(m));
    expect(listening).toEqual([`Server listening at https://127.0.0.1:${port}`, `innsync listening on https://localhost:${port}`]);
    expect(messages.join('\n')).not.toContain(`http://127.0.0.1:${port}`);
  }, 120_000);
});
