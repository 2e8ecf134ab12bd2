import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { addStaffUser, DashboardClient, STAFF_PASSWORD } from '../support/dashboard-client.js';
import { startTestServer, testEngines, type TestServer } from '../support/harness.js';
import { parseJsonOutput, runCli, storageEnv, type CliResult } from './cli-helpers.js';

// `innsync hotel require-mfa <slug> on|off` and `innsync user mfa-reset <slug> <email>`
// (README.md, docs/dashboard.md "Second factors"): the command in its own process, the
// server in this one, on the same storage, as in production.

describe.each(testEngines())('innsync hotel require-mfa and user mfa-reset (%s)', (engine) => {
  let t: TestServer;
  const db = (): Db => t.server.database.db;
  beforeAll(async () => {
    t = await startTestServer(engine);
  });
  afterAll(() => t.close());

  const cli = (args: string[]): Promise<CliResult> => runCli(args, { env: storageEnv(t.config) });
  const operatorEvents = async (): Promise<string[]> =>
    (
      await db()
        .selectFrom('security_events')
        .select('kind')
        .where('actor_type', '=', 'operator')
        // The test server's key pair was issued by the operator too (key.issued).
        .where('kind', '!=', 'key.issued')
        .orderBy('created_at')
        .orderBy('id')
        .execute()
    ).map((r) => r.kind);

  it('require-mfa on sends an account without a factor to enrolment at its next sign-in; off lets it in; both audited; a wrong setting or hotel is refused', async () => {
    const user = await addStaffUser(db(), t.slug, 'rule@cli-mfa.example', 'receptionist');
    expect(parseJsonOutput(await cli(['hotel', 'require-mfa', t.slug, 'on', '--json']))).toEqual({ slug: t.slug, requireSecondFactor: true });
    const enrolling = await DashboardClient.loggedIn(t, user.email);
    expect(enrolling.session.stage).toBe('enrol');
    expect((await enrolling.get('/guests')).body.code).toBe('ENROLMENT_REQUIRED');
    expect((await cli(['hotel', 'require-mfa', t.slug, 'off'])).stdout).toBe(`${t.slug}: a second factor is not required at sign-in\n`);
    expect((await DashboardClient.loggedIn(t, user.email)).session.stage).toBeUndefined();
    expect(await operatorEvents()).toEqual(['mfa.required', 'mfa.not_required']);

    const bad = await cli(['hotel', 'require-mfa', t.slug, 'maybe', '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ status: 'error', code: 'INVALID_ARGUMENT' });
    const unknown = await cli(['hotel', 'require-mfa', 'no-such-hotel', 'on', '--json']);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: 'HOTEL_NOT_FOUND' });
  });

  it("user mfa-reset removes the user's authenticator and recovery codes and ends their sessions; the next sign-in is a password", async () => {
    const user = await addStaffUser(db(), t.slug, 'lost@cli-mfa.example', 'receptionist');
    const client = await DashboardClient.loggedIn(t, user.email);
    const started = await client.post('/account/totp/start', { password: STAFF_PASSWORD });
    const confirmed = await client.post('/account/totp/confirm', { code: await generate({ secret: started.body.secret }) });
    expect(confirmed.status, confirmed.text).toBe(200);
    expect((await DashboardClient.loggedIn(t, user.email)).session.stage).toBe('second_factor');

    const reset = parseJsonOutput(await cli(['user', 'mfa-reset', t.slug, 'Lost@CLI-mfa.example', '--json']));
    expect(reset).toEqual({ userId: user.id, email: user.email, factorsReset: true });
    expect((await client.get('/session')).status).toBe(401);
    const again = await DashboardClient.loggedIn(t, user.email);
    expect(again.session.stage).toBeUndefined();
    expect((await again.get('/account/factors')).body).toEqual({ totp: false, recoveryCodesLeft: 0, required: false });
    expect(await operatorEvents()).toContain('factors.reset');

    const nobody = await cli(['user', 'mfa-reset', t.slug, 'nobody@cli-mfa.example', '--json']);
    expect(JSON.parse(nobody.stderr)).toMatchObject({ code: 'USER_NOT_FOUND' });
  });
});
