import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { buildApp } from '../app.js';
import { openDatabase } from '../db/database.js';
import { InProcessRosterEventBus } from '../events/roster-events.js';
import { MemoryRateLimitStore } from '../rate-limit/stores.js';
import { RequestLogWriter } from '../pms/request-log.js';

/** The OpenAPI document as the running service serves it, built without listening. */
export async function generateOpenApiDocument(): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-openapi-'));
  const handle = openDatabase({ databaseUrl: null, dataDir: dir });
  const logger = pino({ level: 'silent' });
  const rateLimits = new MemoryRateLimitStore();
  const requestLog = new RequestLogWriter(handle.db, logger);
  try {
    const app = await buildApp({ db: handle.db, bus: new InProcessRosterEventBus(), rateLimits, requestLog, logger });
    await app.ready();
    const doc = `${JSON.stringify(app.swagger(), null, 2)}\n`;
    await app.close();
    return doc;
  } finally {
    await requestLog.close();
    rateLimits.close();
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
