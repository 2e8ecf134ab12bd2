import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guest, startTestServer, type TestServer } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';

// Messages that name the fix: each validation message is a sentence a person
// can act on, for the PMS API and the dashboard alike; a query's parts are parameters.

describe('validation messages', () => {
  let t: TestServer;
  let desk: DashboardClient;
  beforeAll(async () => {
    t = await startTestServer('sqlite');
    await addStaffUser(t.server.database.db, t.slug, 'desk@messages.example', 'receptionist');
    desk = await DashboardClient.loggedIn(t, 'desk@messages.example');
  });
  afterAll(() => t.close());

  const messages = (res: { body: { errors?: Array<{ field: string; message: string }> } }) =>
    Object.fromEntries((res.body.errors ?? []).map((e) => [e.field, e.message]));

  it('the PMS API: ranges as whole numbers, types as "must be …, got …"', async () => {
    const res = await t.post(`${t.pmsBase}/guests/checkin`, guest({ adults: 100, children: 1.5, roomNumber: 305, lastName: null, email: 'ada.example.com' }));
    expect(res.status).toBe(422);
    expect(messages(res)).toMatchObject({
      adults: 'adults must be a whole number from 0 to 99.',
      children: 'children must be a whole number or null, got a number with a fraction.',
      roomNumber: 'roomNumber must be text, got a whole number.',
      lastName: 'lastName must be text, got null.',
      email: 'email must be an e-mail address such as name@example.com.',
    });
  });

  it('a query names its parameters as parameters, and an invalid source both allowed values', async () => {
    const res = await t.api('GET', `${t.pmsBase}/guests?source=walkin&room=12`);
    expect(res.status).toBe(422);
    expect(messages(res)).toEqual({
      source: 'source must be "pms" or "receptionist".',
      room: 'room is not a known parameter; check its spelling.',
    });
  });

  it('the dashboard: the same sentences', async () => {
    const res = await desk.post('/guests', {
      lastName: 'Walker',
      roomNumber: '7',
      checkInDate: '2026-11-23',
      checkOutDate: '2026-11-24',
      adults: '2',
      roomNo: '7',
    });
    expect(res.status).toBe(422);
    expect(messages(res)).toMatchObject({
      adults: 'adults must be a whole number or null, got text.',
      roomNo: 'roomNo is not a known member; check its spelling.',
    });
  });
});
