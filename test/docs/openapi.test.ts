import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOpenApiDocument } from '../../src/docs/openapi-document.js';
import { ERRORS, FIELD_ERRORS } from '../../src/errors.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { PROJECT_ROOT, runCli } from '../cli/cli-helpers.js';

const committedPath = new URL('../../docs/openapi.json', import.meta.url);

describe('OpenAPI document', () => {
  it('the committed docs/openapi.json equals the one generated from the route schemas (run `npm run openapi`)', async () => {
    const committed = fs.readFileSync(committedPath, 'utf8');
    expect(committed).toBe(await generateOpenApiDocument());
  });

  it('`npm run openapi` writes the document and exits by itself (no SQLite reader thread left behind)', async () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-openapi-test-')), 'openapi.json');
    const r = await runCli([out], { command: [process.execPath, path.join(PROJECT_ROOT, 'dist', 'scripts', 'write-openapi.js')] });
    // A process that stayed alive is killed by runCli after its bound: no exit code, SIGKILL.
    expect([r.code, r.signal]).toEqual([0, null]);
    expect(fs.readFileSync(out, 'utf8')).toBe(fs.readFileSync(committedPath, 'utf8'));
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  }, 60_000);

  it('documents every error code of the registry, with its meaning', () => {
    const doc = JSON.parse(fs.readFileSync(committedPath, 'utf8')) as { info: { description: string } };
    for (const [code, e] of Object.entries(ERRORS)) {
      expect(doc.info.description).toContain(`| ${e.status} | \`${code}\` | ${e.meaning} |`);
    }
    for (const code of Object.keys(FIELD_ERRORS)) expect(doc.info.description).toContain(`\`${code}\``);
  });

  it('is OpenAPI 3.1 with the five PMS endpoints', () => {
    const doc = JSON.parse(fs.readFileSync(committedPath, 'utf8')) as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(doc.openapi).toBe('3.1.0');
    const ops = Object.entries(doc.paths).flatMap(([p, m]) => Object.keys(m).map((k) => `${k.toUpperCase()} ${p}`));
    expect(ops.sort()).toEqual(
      [
        'GET /api/pms/v1/{slug}/guests',
        'POST /api/pms/v1/{slug}/guests/checkin',
        'POST /api/pms/v1/{slug}/guests/checkout',
        'POST /api/pms/v1/{slug}/guests/sync',
        'POST /api/pms/v1/{slug}/guests/update',
      ].sort(),
    );
  });
});

describe.each(testEngines().slice(0, 1))('served documents (%s)', (engine) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  it('GET /api/pms/v1/openapi.json serves the committed document', async () => {
    const res = await t.api('GET', '/api/pms/v1/openapi.json', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(fs.readFileSync(committedPath, 'utf8')));
  });

  it('GET /api/pms/v1/docs is a self-contained HTML page listing endpoints and error codes', async () => {
    const res = await t.api('GET', '/api/pms/v1/docs', { key: null });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    // Nothing loaded from elsewhere (the curl examples name https://<host>/… as text only).
    expect(res.text).not.toMatch(/<script|(?:src|href)=["']?https?:/);
    expect(res.text).not.toMatch(/https?:\/\/(?!localhost|&#60;host&#62;)/);
    for (const code of Object.keys(ERRORS)) expect(res.text).toContain(code);
    expect(res.text).toContain('/api/pms/v1/{slug}/guests/checkin');
  });

  it('the API reference is not a PMS call: fetching it writes nothing to the request log', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await t.api('GET', '/api/pms/v1/openapi.json', { key: null })).status).toBe(200);
      expect((await t.api('GET', '/api/pms/v1/docs', { key: null })).status).toBe(200);
    }
    // A PMS call after them is logged (the log is written in batches): once it is there, so would they be.
    expect((await t.api('GET', `${t.pmsBase}/guests`)).status).toBe(200);
    const db = t.server.database.db;
    await expect.poll(async () => (await db.selectFrom('request_log').select('id').where('path', '=', `${t.pmsBase}/guests`).execute()).length).toBeGreaterThanOrEqual(1);
    const rows = await db.selectFrom('request_log').select('path').where('path', 'like', '/api/pms/v1/%').execute();
    expect(rows.map((r) => r.path).filter((p) => p.startsWith('/api/pms/v1/docs') || p.startsWith('/api/pms/v1/openapi'))).toEqual([]);
  });
});

