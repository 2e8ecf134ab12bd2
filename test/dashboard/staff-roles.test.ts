import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { createHotel } from '../../src/operations.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md, "Changing a role": an admin changes another user's role with
// PATCH /users/:id; the change and its staff.role_changed entry (the admin, the client's
// address, from → to) are one transaction; open sessions have the new role at their next
// request. Never one's own role, never a deactivated user's, never another hotel's user.
// Real HTTPS, both engines.

interface RoleEvent {
  kind: string;
  actorType: string;
  actor: { userId: string; email: string | null } | null;
  subject: { userId: string; email: string | null } | null;
  clientIp: string | null;
  detail: unknown;
}

describe.each(testEngines())('changing a staff role (%s)', (engine) => {
  let t: TestServer;
  let admin: { id: string; email: string };
  let adminClient: DashboardClient;
  let seq = 0;
  const db = (): Db => t.server.database.db;

  beforeAll(async () => {
    t = await startTestServer(engine);
    admin = await addStaffUser(db(), t.slug, `admin-${engine}@roles.example`, 'admin');
    adminClient = await DashboardClient.loggedIn(t, admin.email);
  });
  afterAll(() => t.close());

  /** A new user of the hotel, logged in. */
  async function staffMember(role: 'admin' | 'receptionist'): Promise<{ id: string; email: string; client: DashboardClient }> {
    const user = await addStaffUser(db(), t.slug, `${role}-${++seq}-${engine}@roles.example`, role);
    return { ...user, client: await DashboardClient.loggedIn(t, user.email) };
  }

  const roleEvents = async (): Promise<RoleEvent[]> => {
    const res = await adminClient.get('/security-events?kind=staff.role_changed&limit=200');
    expect(res.status).toBe(200);
    return res.body.events as RoleEvent[];
  };

  it('makes a receptionist an admin and back: 200 { user }, each change an entry with the admin, the address and from → to; the open session has the new role at once', async () => {
    const desk = await staffMember('receptionist');
    expect((await desk.client.get('/users')).status).toBe(403);

    const promoted = await adminClient.patch(`/users/${desk.id}`, { role: 'admin' });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toEqual({ user: { id: desk.id, email: desk.email, role: 'admin', createdAt: expect.any(String), deactivatedAt: null } });
    // The same session, no new login: admin routes open to it.
    expect((await desk.client.get('/users')).status).toBe(200);
    expect((await desk.client.get('/session')).body.user.role).toBe('admin');
    expect((await adminClient.get('/users')).body.users).toContainEqual(expect.objectContaining({ id: desk.id, role: 'admin' }));

    const demoted = await adminClient.patch(`/users/${desk.id}`, { role: 'receptionist' });
    expect([demoted.status, demoted.body.user.role]).toEqual([200, 'receptionist']);
    expect((await desk.client.get('/users')).body.code).toBe('FORBIDDEN');

    const events = (await roleEvents()).filter((e) => e.subject?.userId === desk.id);
    const by = { actorType: 'staff', actor: { userId: admin.id, email: admin.email }, clientIp: '127.0.0.1' };
    expect(events).toHaveLength(2);
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'staff.role_changed',
          ...by,
          subject: { userId: desk.id, email: desk.email },
          detail: { from: 'receptionist', to: 'admin' },
        }),
        expect.objectContaining({
          kind: 'staff.role_changed',
          ...by,
          subject: { userId: desk.id, email: desk.email },
          detail: { from: 'admin', to: 'receptionist' },
        }),
      ]),
    );
  });

  it("a demoted admin's open session gets 403 FORBIDDEN on its next admin-only request, and keeps the board", async () => {
    const other = await staffMember('admin');
    expect((await other.client.get('/keys')).status).toBe(200);
    expect((await adminClient.patch(`/users/${other.id}`, { role: 'receptionist' })).status).toBe(200);
    const refused = await other.client.get('/keys');
    expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    expect((await other.client.get('/guests')).status).toBe(200);
  });

  it('the role the user has already: 200, nothing written', async () => {
    const desk = await staffMember('receptionist');
    const before = await roleEvents();
    const same = await adminClient.patch(`/users/${desk.id}`, { role: 'receptionist' });
    expect([same.status, same.body.user.role]).toEqual([200, 'receptionist']);
    expect(await roleEvents()).toEqual(before);
  });

  it('refuses the admin’s own role (409 CANNOT_CHANGE_OWN_ROLE), a deactivated user (409 USER_DEACTIVATED), another hotel’s or an unknown user (404), a role that is neither (422), a receptionist (403), a write without the CSRF token; nothing changes', async () => {
    const otherSlug = `roles-other-${engine}`;
    await createHotel(db(), otherSlug, 'Other Roles Hotel');
    const foreign = await addStaffUser(db(), otherSlug, `foreign-${engine}@roles.example`, 'receptionist');
    const gone = await staffMember('receptionist');
    expect((await adminClient.post(`/users/${gone.id}/deactivate`)).status).toBe(200);
    const desk = await staffMember('receptionist');
    const before = await roleEvents();
    const users = async () => db().selectFrom('staff_users').select(['id', 'role', 'deactivated_at']).orderBy('id').execute();
    const usersBefore = await users();

    const own = await adminClient.patch(`/users/${admin.id}`, { role: 'receptionist' });
    expect([own.status, own.body.code, own.body.message]).toEqual([
      409,
      'CANNOT_CHANGE_OWN_ROLE',
      'You cannot change your own role: ask another admin of your hotel to change it.',
    ]);
    const deactivated = await adminClient.patch(`/users/${gone.id}`, { role: 'admin' });
    expect([deactivated.status, deactivated.body.code]).toEqual([409, 'USER_DEACTIVATED']);
    for (const id of [foreign.id, 'user_unknown']) {
      const missing = await adminClient.patch(`/users/${id}`, { role: 'admin' });
      expect([missing.status, missing.body.code], id).toEqual([404, 'RECORD_NOT_FOUND']);
    }
    const invalid = await adminClient.patch(`/users/${desk.id}`, { role: 'manager' });
    expect([invalid.status, invalid.body.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect(invalid.body.errors).toContainEqual(expect.objectContaining({ field: 'role' }));
    const extra = await adminClient.patch(`/users/${desk.id}`, { role: 'admin', email: 'x@roles.example' });
    expect(extra.status).toBe(422);
    const byDesk = await desk.client.patch(`/users/${desk.id}`, { role: 'admin' });
    expect([byDesk.status, byDesk.body.code]).toEqual([403, 'FORBIDDEN']);
    const forged = await adminClient.patch(`/users/${desk.id}`, { role: 'admin' }, { csrf: null });
    expect([forged.status, forged.body.code]).toEqual([403, 'CSRF_REJECTED']);

    expect(await users()).toEqual(usersBefore);
    expect(await roleEvents()).toEqual(before);
  });
});
