import fs from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Agent } from 'undici';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import type { Engine } from '../../src/db/database.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createTestStorage, databaseEnv } from './harness.js';

export type LogLine = Record<string, unknown> & { level: number; msg: string };

/** The real server with its operational log captured as parsed JSON lines (pino at `level`). */
export async function startLoggedServer(
  engine: Engine,
  env: Record<string, string>,
  level = 'debug',
): Promise<{ server: RunningServer; lines: LogLine[]; baseUrl: string; agent: Agent; dataDir: string; close: () => Promise<void> }> {
  const storage = await createTestStorage(engine);
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const config = loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: storage.dataDir, ...databaseEnv(storage), ...env });
  const server = await startServer(config, pino({ level }, sink));
  const cert = fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8');
  const agent = new Agent({ connect: { ca: cert, servername: 'localhost' } });
  return {
    server,
    lines,
    baseUrl: `https://127.0.0.1:${server.httpsPort}`,
    agent,
    dataDir: storage.dataDir,
    async close() {
      await agent.close();
      await server.close();
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    },
  };
}
