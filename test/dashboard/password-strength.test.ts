import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { PASSWORD_REFUSALS } from '../../src/errors.js';
import { startServer } from '../../src/server.js';
import { DashboardClient, DASHBOARD_API, send, type Target } from '../support/dashboard-client.js';
import { createTestStorage, databaseEnv, testEngines } from '../support/harness.js';

// docs/dashboard.md, "Passwords": a new password easy to guess is 422 with a field error of
// its own code (common, like the e-mail, like the hotel's name, too weak), at the first-run
// setup and on the Staff page's add user; nothing is created, and the setup link stays alive.

/** Each reason, a password it refuses for the e-mail marguerite@… at the hotel "Harbour View Inn". */
const WEAK: Array<[string, keyof typeof PASSWORD_REFUSALS]> = [
  ['password1234', 'PASSWORD_TOO_COMMON'],
  ['P@ssw0rd2024', 'PASSWORD_TOO_COMMON'],
  ['marguerite-2024!', 'PASSWORD_LIKE_EMAIL'],
  ['Margu3rite!2024', 'PASSWORD_LIKE_EMAIL'],
  ['harbourviewinn-2024', 'PASSWORD_LIKE_HOTEL'],
  ['Harbour View Inn 1', 'PASSWORD_LIKE_HOTEL'],
  ['HarbourView2024', 'PASSWORD_LIKE_HOTEL'],
  ['2024!Inn-View', 'PASSWORD_LIKE_HOTEL'],
  ['sommerferien2024', 'PASSWORD_TOO_WEAK'],
  ['abcdefghij12', 'PASSWORD_TOO_WEAK'],
];
const STRONG = 'ochre-pelican-tundra-31';

describe.each(testEngines())('strong passwords (%s)', (engine) => {
  it('first-run setup and the Staff page refuse each weak password with its code and nothing is created; a strong one is taken', async () => {
    const storage = await createTestStorage(engine);
    const env = { PORT: '0', HTTP_PORT: 'off', HOST: '127.0.0.1', DATA_DIR: storage.dataDir, ...databaseEnv(storage), LOG_LEVEL: 'silent' };
    const server = await startServer(loadConfig(env), pino({ level: 'silent' }));
    const agent = new Agent({ connect: { ca: fs.readFileSync(path.join(storage.dataDir, 'tls', 'cert.pem'), 'utf8'), servername: 'localhost' } });
    try {
      const token = /#\/setup\/(.+)$/.exec(server.setupUrl ?? '')?.[1] ?? '';
      const target: Target = { baseUrl: `https://127.0.0.1:${server.httpsPort}`, agent };
      const setup = { token, hotelSlug: `strong-${engine}`, hotelName: 'Harbour View Inn', email: `marguerite@strong-${engine}.example` };
      for (const [password, code] of WEAK) {
        const res = await send(target, 'POST', `${DASHBOARD_API}/setup`, { body: { ...setup, password, passwordConfirm: password } });
        expect
          .soft([res.status, res.body.code, res.body.errors], password)
          .toEqual([422, 'VALIDATION_ERROR', [{ field: 'password', code, message: PASSWORD_REFUSALS[code] }]]);
      }
      expect(await server.database.db.selectFrom('hotels').select('slug').execute()).toEqual([]);
      expect((await send(target, 'GET', `${DASHBOARD_API}/setup/${token}`)).status).toBe(200);

      const admin = new DashboardClient(target);
      const created = await send(target, 'POST', `${DASHBOARD_API}/setup`, { body: { ...setup, password: STRONG, passwordConfirm: STRONG } });
      expect(created.status, created.text).toBe(201);
      admin.adopt(created);

      // The Staff page's add user: the new user's e-mail and the hotel's name.
      for (const [password, code] of WEAK) {
        const res = await admin.post('/users', { email: 'marguerite@desk.example', role: 'receptionist', password });
        expect.soft([res.status, res.body.errors], password).toEqual([422, [{ field: 'password', code, message: PASSWORD_REFUSALS[code] }]]);
      }
      // The length rule comes first, as before.
      const short = await admin.post('/users', { email: 'marguerite@desk.example', role: 'receptionist', password: 'password' });
      expect([short.status, short.body.errors?.[0]?.code]).toEqual([422, 'TOO_SHORT']);
      const users = await server.database.db.selectFrom('staff_users').select('email').execute();
      expect(users.map((u) => u.email)).toEqual([`marguerite@strong-${engine}.example`]);
      const ok = await admin.post('/users', { email: 'marguerite@desk.example', role: 'receptionist', password: 'violet-anchor-meadow-58' });
      expect(ok.status, ok.text).toBe(201);
      expect((await new DashboardClient(target).login('marguerite@desk.example', 'violet-anchor-meadow-58')).status).toBe(200);
    } finally {
      await agent.close();
      await server.close();
      fs.rmSync(storage.dataDir, { recursive: true, force: true });
    }
  });
});
