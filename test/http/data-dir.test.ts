import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createHotel } from '../../src/operations.js';
import { startServer } from '../../src/server.js';
import { createTestStorage, testEngines, databaseEnv } from '../support/harness.js';

// README.md, "Storage": DATA_DIR is created 0700 and every file the service writes there
// (database, WAL, shared memory, certificate, key) 0600, whatever the umask; an existing
// directory with looser modes is tightened at start, with a warning.

const modeOf = (p: string): number => fs.statSync(p).mode & 0o777;

/** Every folder and file under `dir` with its mode, e.g. { 'tls/key.pem': 0o600 }. */
function modes(dir: string): Record<string, number> {
  const out: Record<string, number> = { '.': modeOf(dir) };
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    out[path.relative(dir, full)] = modeOf(full);
  }
  return out;
}

describe.each(testEngines())('DATA_DIR readable by the service alone (%s)', (engine) => {
  it('created 0700 with every file 0600 even under umask 000; a DATA_DIR loosened later is tightened at the next start, with a warning', async () => {
    const storage = await createTestStorage(engine);
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-modes-')), 'data');
    const env = { PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: dataDir, ...databaseEnv(storage) };
    const previous = process.umask(0o000);
    try {
      const server = await startServer(loadConfig(env), pino({ level: 'silent' }));
      // A write, so SQLite has its WAL and shared-memory files.
      await createHotel(server.database.db, `modes-${engine}`, 'Modes Hotel');
      const created = modes(dataDir);
      await server.close();
      const expected =
        engine === 'sqlite'
          ? ['.', 'innsync.sqlite', 'innsync.sqlite-shm', 'innsync.sqlite-wal', 'tls', 'tls/cert.pem', 'tls/key.pem']
          : ['.', 'tls', 'tls/cert.pem', 'tls/key.pem'];
      for (const name of expected) expect(Object.keys(created)).toContain(name);
      for (const [name, mode] of Object.entries(created)) expect([name, mode.toString(8)]).toEqual([name, name === '.' || name === 'tls' ? '700' : '600']);

      // An operator (or a restore) loosens everything; the next start tightens it and says so.
      for (const name of Object.keys(modes(dataDir))) fs.chmodSync(path.join(dataDir, name), name === '.' || name === 'tls' ? 0o755 : 0o644);
      const lines: Array<Record<string, unknown>> = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      });
      const again = await startServer(loadConfig(env), pino({ level: 'warn' }, sink));
      const tightened = modes(dataDir);
      await again.close();
      for (const [name, mode] of Object.entries(tightened)) expect([name, mode.toString(8)]).toEqual([name, name === '.' || name === 'tls' ? '700' : '600']);
      expect(lines.find((l) => String(l.msg).startsWith('DATA_DIR was readable by other users'))).toMatchObject({ level: 40, dataDir });
    } finally {
      process.umask(previous);
      fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    }
  });
});
