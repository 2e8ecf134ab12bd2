import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createHotel } from '../../src/operations.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { addStaffUser, DashboardClient, type EventStream, type Target } from '../support/dashboard-client.js';
import { createTestStorage, databaseEnv, testEngines } from '../support/harness.js';

// docs/dashboard.md, "Ending sessions": with several instances on one PostgreSQL, a session
// ended through one instance is logged out on the other at its next request, and the event
// stream it holds there closes within that instance's session check, with nothing sent
// between the instances.

describe.runIf(testEngines().includes('postgres'))('ending sessions across two instances on one PostgreSQL', () => {
  const servers: RunningServer[] = [];
  const targets: Target[] = [];
  const dirs: string[] = [];
  let stream: EventStream | null = null;

  beforeAll(async () => {
    const storage = await createTestStorage('postgres');
    dirs.push(storage.dataDir);
    for (let i = 0; i < 2; i++) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'innsync-sessions-'));
      dirs.push(dataDir);
      const config = loadConfig({ PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: dataDir, ...databaseEnv(storage), LOG_LEVEL: 'silent' });
      const server = await startServer(config, pino({ level: 'silent' }));
      servers.push(server);
      const ca = fs.readFileSync(path.join(dataDir, 'tls', 'cert.pem'), 'utf8');
      targets.push({ baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent: new Agent({ connect: { ca, servername: 'localhost' } }) });
    }
  });
  afterAll(async () => {
    stream?.close();
    for (const t of targets) await t.agent.close();
    for (const s of servers) await s.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('"End all other sessions" on one instance: the other instance answers the ended session 401 and closes its stream', async () => {
    const [a, b] = targets;
    const db = servers[0]?.database.db;
    if (!a || !b || !db) throw new Error('two servers expected');
    await createHotel(db, 'two-sessions', 'Two Sessions Hotel');
    const user = await addStaffUser(db, 'two-sessions', 'roaming@sessions.example', 'receptionist');
    const here = await DashboardClient.loggedIn(a, user.email);
    const there = await DashboardClient.loggedIn(a, user.email);
    // The second session's requests and stream go to the other instance.
    const elsewhere = new DashboardClient(b);
    elsewhere.cookie = there.cookie;
    expect((await elsewhere.get('/session')).status).toBe(200);
    stream = await elsewhere.events();
    expect(stream.status).toBe(200);
    expect((await stream.next()).event).toBe('ready');

    const res = await here.post('/account/sessions/end-others', {});
    expect([res.status, res.body]).toEqual([200, { ended: 1 }]);
    expect((await elsewhere.get('/session')).status).toBe(401);
    await expect.poll(() => stream?.hasEnded).toBe(true);
    expect((await here.get('/session')).status).toBe(200);
  });
});
