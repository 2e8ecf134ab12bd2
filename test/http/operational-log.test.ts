import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createHotel, issueKeyPair } from '../../src/operations.js';
import { addStaffUser, DashboardClient, STAFF_PASSWORD } from '../support/dashboard-client.js';
import { testEngines } from '../support/harness.js';
import { startLoggedServer } from '../support/log-capture.js';

// README.md, "Logs": one operational log line per request with the client's
// address, no query-string values and no e-mail address at info level; refusals an
// operator watches for (failed login, CSRF, 429, role, bad key) as lines of their own.

describe.each(testEngines())('operational log (%s)', (engine) => {
  it('one line per request with the client IP and no query values; security events with the client IP; no e-mail at info level', async () => {
    const s = await startLoggedServer(engine, {}, 'info');
    try {
      const db = s.server.database.db;
      await createHotel(db, 'log-hotel', 'Log Hotel');
      const keys = await issueKeyPair(db, 'log-hotel');
      const target = { baseUrl: s.baseUrl, agent: s.agent };
      const call = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
        request(`${s.baseUrl}${path}`, { method: method as 'GET', headers, body, dispatcher: s.agent }).then(async (r) => ({
          status: r.statusCode,
          text: await r.body.text(),
        }));

      // What the client puts in the URL (a query value or name, a path segment) never reaches the log.
      const secretMail = 'ada.lovelace@example.com';
      expect(
        (await call('GET', `/api/pms/v1/log-hotel/guests?lookup=${encodeURIComponent(secretMail)}`, { authorization: `Bearer ${keys.live}` })).status,
      ).toBe(422);
      expect(
        (await call('GET', `/api/pms/v1/log-hotel/guests?${encodeURIComponent('grace.hopper@example.com')}`, { authorization: `Bearer ${keys.live}` })).status,
      ).toBe(422);
      expect((await call('GET', `/no/${encodeURIComponent('alan.turing@example.com')}`)).status).toBe(404);
      // A wrong key, a failed login, a CSRF refusal and a role refusal.
      expect((await call('GET', '/api/pms/v1/log-hotel/guests', { authorization: 'Bearer sk_live_wrong' })).status).toBe(401);
      const receptionist = await addStaffUser(db, 'log-hotel', 'desk@example.com', 'receptionist');
      expect((await new DashboardClient(target).login(receptionist.email, 'not-the-password')).status).toBe(401);
      const desk = await DashboardClient.loggedIn(target, receptionist.email, STAFF_PASSWORD);
      expect((await desk.post('/keys', {}, { csrf: null })).status).toBe(403);
      expect((await desk.post('/keys', {})).status).toBe(403);

      await expect.poll(() => s.lines.filter((l) => l.msg === 'request').length).toBeGreaterThanOrEqual(8);
      const requests = s.lines.filter((l) => l.msg === 'request');
      for (const l of requests) {
        expect(l.ip).toBe('127.0.0.1');
        expect(typeof l.status).toBe('number');
      }
      // The route pattern, not the URL as sent.
      expect(requests.map((l) => l.route)).toContain('/api/pms/v1/:slug/guests');
      expect(requests.map((l) => l.route)).toContain('unmatched');

      const events = s.lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('security:'));
      expect(events.map((l) => l.event)).toEqual(['UNAUTHORIZED', 'LOGIN_FAILED', 'CSRF_REJECTED', 'FORBIDDEN']);
      for (const l of events) {
        expect(l.level).toBe(40);
        expect(l.ip).toBe('127.0.0.1');
      }
      const text = JSON.stringify(s.lines.filter((l) => l.level <= 30));
      expect(text).not.toContain(secretMail);
      expect(JSON.stringify(s.lines)).not.toMatch(/ada\.lovelace|grace\.hopper|alan\.turing/);
      expect(text).not.toContain('desk@example.com');
      expect(JSON.stringify(s.lines)).not.toContain(keys.live);
    } finally {
      await s.close();
    }
  });

  it('a 429 is a security event with the client IP; a flood of them writes at most 10 lines a minute per address', async () => {
    const s = await startLoggedServer(engine, {}, 'info');
    try {
      let refused = 0;
      // The per-IP limit for requests without a key (100 a minute), on an unknown path.
      for (let i = 0; i < 130; i++) {
        const r = await request(`${s.baseUrl}/no-such-path`, { dispatcher: s.agent });
        await r.body.text();
        if (r.statusCode === 429) refused++;
      }
      expect(refused).toBeGreaterThanOrEqual(25);
      await expect.poll(() => s.lines.filter((l) => l.msg === 'request' && l.status === 429).length).toBe(refused);
      const events = s.lines.filter((l) => l.event === 'RATE_LIMITED');
      expect(events).toHaveLength(10);
      for (const l of events) expect(l).toMatchObject({ level: 40, ip: '127.0.0.1', route: 'unmatched' });
    } finally {
      await s.close();
    }
  });
});
