import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrations.js';
import { createHotel, issueKeyPair } from '../../src/operations.js';
import { createTestStorage, guest, testEngines } from '../support/harness.js';
import { freePort } from '../support/postgres-cluster.js';
import { spawnServe, storageEnv, waitForExit, waitForHttps, type Storage } from '../cli/cli-helpers.js';

// docs/architecture.md, "Traces": without OTEL_EXPORTER_OTLP_ENDPOINT no module of the
// tracing SDK, its exporters or instrumentations is loaded at all. A loader hook records
// every module `innsync serve` resolves while it starts and answers a check-in; with the
// variable set, the same record holds the SDK (the record can see it).

/** A hook that appends each resolved module's URL to the file RECORD_MODULES_TO names. */
const HOOKS = `import fs from 'node:fs';
let file;
export async function initialize(data) { file = data.file; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  fs.appendFileSync(file, resolved.url + '\\n');
  return resolved;
}
`;
const REGISTER = `import { register } from 'node:module';
register(new URL('./hooks.mjs', import.meta.url), { data: { file: process.env.RECORD_MODULES_TO } });
`;

/** Packages only tracing loads (the API package is light and always loaded: its calls check one flag). */
const TRACING_ONLY = /@opentelemetry\/(sdk-|exporter-|instrumentation|resources)|\/dist\/src\/tracing\/start\.js$/;

describe.each(testEngines())('tracing off loads nothing of it (%s)', (engine) => {
  let storage: Storage;
  let hooksDir: string;

  beforeAll(async () => {
    storage = await createTestStorage(engine);
    hooksDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-modules-'));
    fs.writeFileSync(path.join(hooksDir, 'hooks.mjs'), HOOKS);
    fs.writeFileSync(path.join(hooksDir, 'register.mjs'), REGISTER);
  });
  afterAll(() => {
    fs.rmSync(hooksDir, { recursive: true, force: true });
    fs.rmSync(storage.dataDir, { recursive: true, force: true });
  });

  /** The modules `innsync serve` resolved while it started and answered one live check-in. */
  async function modulesLoaded(name: string, extra: Record<string, string>): Promise<string[]> {
    const record = path.join(hooksDir, `${name}.txt`);
    const env = storageEnv(storage);
    const slug = `modules-${engine}-${name}`;
    const handle = openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
    await migrateToLatest(handle.db);
    await createHotel(handle.db, slug, 'Modules Hotel');
    const key = (await issueKeyPair(handle.db, slug)).live;
    await handle.close();
    const port = await freePort();
    const serve = spawnServe({
      ...env,
      ...extra,
      PORT: String(port),
      HTTP_PORT: 'off',
      NODE_OPTIONS: `--import=${path.join(hooksDir, 'register.mjs')}`,
      RECORD_MODULES_TO: record,
    });
    const { agent } = await waitForHttps(serve, storage.dataDir, port);
    try {
      const res = await request(`https://127.0.0.1:${port}/api/pms/v1/${slug}/guests/checkin`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `modules-${name}` },
        body: JSON.stringify(guest({ lastName: 'Modules' })),
      });
      expect(res.statusCode, await res.body.text()).toBe(200);
    } finally {
      serve.child.kill('SIGTERM');
      await waitForExit(serve);
      await agent.close();
    }
    return fs.readFileSync(record, 'utf8').split('\n').filter(Boolean);
  }

  it('without OTEL_EXPORTER_OTLP_ENDPOINT: the service loads, and no module of the SDK, its exporters or instrumentations', async () => {
    const off = await modulesLoaded('off', {});
    expect(off.some((url) => url.endsWith('/dist/src/server.js'))).toBe(true);
    expect(off.filter((url) => TRACING_ONLY.test(url))).toEqual([]);
  }, 60_000);

  it('with it set: the same record holds the SDK (so the record above would have shown it)', async () => {
    const on = await modulesLoaded('on', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(on.some((url) => url.includes('/@opentelemetry/sdk-trace-node/'))).toBe(true);
    expect(on.some((url) => url.endsWith('/dist/src/tracing/start.js'))).toBe(true);
  }, 60_000);
});
