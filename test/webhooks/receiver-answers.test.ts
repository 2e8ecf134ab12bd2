import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sqliteFile } from '../../src/db/database.js';
import { randomId } from '../../src/domain/ids.js';
import { runRetention } from '../../src/jobs/retention.js';
import { startTestServer, testEngines, type TestServer, directDatabaseUrl } from '../support/harness.js';
import { addStaffUser, DashboardClient } from '../support/dashboard-client.js';
import { scaled } from '../support/test-run.js';

// A receiver's answer can echo what it was sent, the guest's data with it: of an answer
// only the status is kept (README, Personal data), so erasure and retention leave nothing
// of the guest behind in the deliveries.

const PG_DUMP = '/usr/lib/postgresql/15/bin/pg_dump';
const run = promisify(execFile);

/** Every byte the service keeps: SQLite's database and WAL files, or a pg_dump of the database. */
async function storedText(t: TestServer): Promise<string> {
  if (t.engine === 'postgres') {
    const { stdout } = await run(PG_DUMP, ['--data-only', directDatabaseUrl(t.config)], { maxBuffer: 512 * 1024 * 1024 });
    return stdout;
  }
  const file = sqliteFile(t.config.dataDir);
  return [file, `${file}-wal`]
    .filter((f) => fs.existsSync(f))
    .map((f) => fs.readFileSync(f).toString('latin1'))
    .join('\n');
}

/** A guest whose personal values are unique to this run, so a search finds only it. */
function person(tag: string) {
  const id = randomId(10);
  return {
    pmsGuestId: `PMS-${tag}-${id}`,
    firstName: `Echo${id}`,
    lastName: `Answer${id}`,
    phone: `+4930${Math.floor(Math.random() * 9e8 + 1e8)}`,
    email: `echo.${id.toLowerCase()}@example.org`,
    roomNumber: `E${id}`,
    checkInDate: '2026-11-23',
    checkOutDate: '2026-11-26',
  };
}
const personal = (p: ReturnType<typeof person>): string[] => [p.firstName, p.lastName, p.phone, p.email];

describe.each(testEngines())('receivers that echo the guest back (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  let endpointId: string;
  const db = () => t.server.database.db;
  // Answers 200 with the body it was sent.
  const echo = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.concat(chunks)));
  });

  beforeAll(async () => {
    t = await startTestServer(engine, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
    await addStaffUser(db(), t.slug, `admin-${engine}@echo.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, `admin-${engine}@echo.example`);
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const created = await admin.post('/webhooks', { url: `http://127.0.0.1:${(echo.address() as AddressInfo).port}/echo` });
    endpointId = created.body.endpoint.endpointId;
  });
  afterAll(async () => {
    echo.closeAllConnections();
    await new Promise((resolve) => echo.close(resolve));
    await t.close();
  });

  /** Checks the guest in and out, and waits until both events were answered 200. */
  async function stayAndLeave(p: ReturnType<typeof person>): Promise<string> {
    expect((await t.post(`${t.pmsBase}/guests/checkin`, p)).status).toBe(200);
    expect((await t.post(`${t.pmsBase}/guests/checkout`, { pmsGuestId: p.pmsGuestId })).status).toBe(200);
    await vi.waitFor(
      async () => {
        const { deliveries } = (await admin.get(`/webhooks/${endpointId}/deliveries`)).body;
        const done = deliveries.filter((d: { status: string; lastStatus: number }) => d.status === 'succeeded' && d.lastStatus === 200);
        expect(done.length).toBeGreaterThanOrEqual(2);
        expect(deliveries.filter((d: { status: string }) => d.status === 'pending')).toEqual([]);
      },
      { timeout: scaled(10_000) },
    );
    const stay = await db().selectFrom('guests').select('id').where('pms_guest_id', '=', p.pmsGuestId).executeTakeFirstOrThrow();
    return stay.id;
  }

  it('after an erasure no byte of the guest is left in the database files, stored answers included; the Webhooks page shows no answer body', async () => {
    const p = person('erase');
    const guestId = await stayAndLeave(p);
    expect((await admin.post(`/guests/${guestId}/erase`, {})).status).toBe(200);
    const after = await storedText(t);
    for (const v of personal(p)) expect(after, v).not.toContain(v);
    const page = await admin.get(`/webhooks/${endpointId}/deliveries`);
    for (const v of personal(p)) expect(page.text).not.toContain(v);
    expect(page.body.deliveries[0]).not.toHaveProperty('lastResponse');
  });

  it('after retention anonymises the guest, no delivery or event row holds its personal values', async () => {
    const p = person('retain');
    await stayAndLeave(p);
    expect((await runRetention(db(), 0)).guests).toBeGreaterThanOrEqual(1);
    const rows = JSON.stringify([
      ...(await db().selectFrom('webhook_deliveries').selectAll().execute()),
      ...(await db().selectFrom('webhook_events').selectAll().execute()),
    ]);
    for (const v of personal(p)) expect(rows, v).not.toContain(v);
  });
});
