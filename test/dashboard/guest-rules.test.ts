import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WalkInBody } from '../../src/dashboard/schemas.js';
import { addStaffUser, DashboardClient, send } from '../support/dashboard-client.js';
import { startTestServer, type TestServer } from '../support/harness.js';

// The browser's guest-field rules come from the server's schema (served as
// /dashboard/assets/guest-rules.js), not from a copy in the browser code; and they agree
// with what the server enforces.

interface Rule {
  required: boolean;
  input: string;
  maxLength?: number;
  min?: number;
  max?: number;
}

describe('the guest forms’ field rules', () => {
  let t: TestServer;
  let desk: DashboardClient;
  let rules: Record<string, Rule>;

  beforeAll(async () => {
    t = await startTestServer('sqlite');
    await addStaffUser(t.server.database.db, t.slug, 'desk@rules.example', 'receptionist');
    desk = await DashboardClient.loggedIn(t, 'desk@rules.example');
    const res = await send(t, 'GET', '/dashboard/assets/guest-rules.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.headers['cache-control']).toBe('no-cache');
    const mod = (await import(`data:text/javascript,${encodeURIComponent(res.text)}`)) as { GUEST_RULES: Record<string, Rule> };
    rules = mod.GUEST_RULES;
  });
  afterAll(() => t.close());

  it('names every field of the walk-in body, required exactly where the schema requires it', () => {
    expect(Object.keys(rules).sort()).toEqual(Object.keys(WalkInBody.properties).sort());
    for (const [name, rule] of Object.entries(rules)) expect(rule.required, name).toBe((WalkInBody.required ?? []).includes(name as never));
  });

  const walkIn = (over: Record<string, unknown>) => ({
    lastName: 'Rule',
    roomNumber: `RR${Math.random().toString(36).slice(2, 8)}`,
    checkInDate: '2026-11-23',
    checkOutDate: '2026-11-24',
    ...over,
  });

  it('each length limit is the server’s: at the limit accepted, one over it refused naming the field', async () => {
    for (const [name, rule] of Object.entries(rules)) {
      if (rule.maxLength === undefined || rule.input !== 'text' || name === 'language' || name === 'nationality') continue;
      const at = name === 'roomNumber' ? 'R'.repeat(rule.maxLength) : 'x'.repeat(rule.maxLength);
      expect((await desk.post('/guests', walkIn({ [name]: at }))).status, `${name} at ${rule.maxLength}`).toBe(201);
      const over = await desk.post('/guests', walkIn({ [name]: `${at}y` }));
      expect(over.status, `${name} over ${rule.maxLength}`).toBe(422);
      expect(over.body.errors.map((e: { field: string }) => e.field)).toContain(name);
    }
  });

  it('each number range is the server’s', async () => {
    for (const [name, rule] of Object.entries(rules)) {
      if (rule.input !== 'number') continue;
      expect((await desk.post('/guests', walkIn({ [name]: rule.max }))).status, `${name} ${rule.max}`).toBe(201);
      expect((await desk.post('/guests', walkIn({ [name]: (rule.max ?? 0) + 1 }))).status, `${name} over`).toBe(422);
      expect((await desk.post('/guests', walkIn({ [name]: (rule.min ?? 0) - 1 }))).status, `${name} under`).toBe(422);
    }
  });
});
