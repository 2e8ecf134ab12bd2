import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { readResponse } from '../support/http-response.js';
import { addStaffUser, DashboardClient, DASHBOARD_API, send, SESSION_COOKIE, STAFF_PASSWORD, type EventStream } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, type TestServer } from '../support/harness.js';

// docs/dashboard.md Live events: event streams open at once are bounded per session (5, a
// new one closes the oldest), per user over all their sessions (LIVE_STREAMS_PER_USER,
// default 10) and per hotel (LIVE_STREAMS_PER_HOTEL, default 200); past the user's or the
// hotel's limit a new stream is refused with 429 TOO_MANY_STREAMS and the open ones stay.

describe.each(testEngines())('limits on open event streams (%s)', (engine) => {
  const servers: TestServer[] = [];
  const streams: EventStream[] = [];
  afterAll(async () => {
    for (const s of streams) s.close();
    for (const t of servers) await t.close();
  });

  async function server(env: Record<string, string> = {}): Promise<TestServer> {
    const t = await startTestServer(engine, env);
    servers.push(t);
    return t;
  }

  /** A front-desk display login: the way one account ends up with many sessions. */
  async function displayLogin(t: TestServer, email: string): Promise<DashboardClient> {
    const client = new DashboardClient(t);
    const res = await send(t, 'POST', `${DASHBOARD_API}/login`, { body: { email, password: STAFF_PASSWORD, display: true } });
    expect(res.status).toBe(200);
    client.adopt(res);
    return client;
  }

  async function openStream(client: DashboardClient): Promise<EventStream> {
    const s = await client.events();
    streams.push(s);
    expect(s.status).toBe(200);
    expect((await s.next()).event).toBe('ready');
    return s;
  }

  /** A stream that must be refused, read whole (bounded: an accepted one would never end). */
  async function refusedStream(t: TestServer, client: DashboardClient) {
    const res = await request(`${t.baseUrl}${DASHBOARD_API}/events`, {
      headers: { accept: 'text/event-stream', cookie: `${SESSION_COOKIE}=${client.cookie ?? ''}` },
      dispatcher: t.agent,
      signal: AbortSignal.timeout(10_000),
    });
    return readResponse(res);
  }

  it('one user: 10 streams over their sessions, the 11th is refused 429 TOO_MANY_STREAMS; the ten stay open and live; a session at its 5 may still replace its oldest', async () => {
    const t = await server();
    const user = await addStaffUser(t.server.database.db, t.slug, `screens-${engine}@streams.example`, 'receptionist');
    const sessions = [await displayLogin(t, user.email), await displayLogin(t, user.email), await displayLogin(t, user.email)];
    const [first, second, third] = sessions as [DashboardClient, DashboardClient, DashboardClient];
    const open: EventStream[] = [];
    for (const client of [first, second]) for (let i = 0; i < 5; i++) open.push(await openStream(client));
    const refused = await refusedStream(t, third);
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(refused.body).toMatchObject({ status: 'error', code: 'TOO_MANY_STREAMS', limit: 'user', max: 10 });
    expect(refused.body.message).toMatch(/close dashboard tabs and log out on screens no longer in use/);
    expect(open.map((s) => s.hasEnded)).toEqual(Array<boolean>(10).fill(false));
    expect((await t.post(`${t.pmsBase}/guests/checkin`, guest({ pmsGuestId: `S-${engine}` }))).status).toBe(200);
    for (const s of open) expect((await s.next()).data.changes[0].pmsGuestId).toBe(`S-${engine}`);
    // A sixth of the first session closes its oldest: the user still holds ten.
    const sixth = await openStream(first);
    await expect.poll(() => open[0]?.hasEnded).toBe(true);
    expect((await refusedStream(t, third)).status).toBe(429);
    // A stream closed frees its place.
    sixth.close();
    await expect.poll(async () => (await third.events().then((s) => (streams.push(s), s.status))) === 200).toBe(true);
    // Another user of the hotel is not held by this one's limit.
    const other = await addStaffUser(t.server.database.db, t.slug, `other-${engine}@streams.example`, 'receptionist');
    await openStream(await DashboardClient.loggedIn(t, other.email));
  });

  it('one hotel: past LIVE_STREAMS_PER_HOTEL, any user of it is refused (limit hotel); another hotel is not', async () => {
    const t = await server({ LIVE_STREAMS_PER_HOTEL: '3' });
    const db = t.server.database.db;
    const users = await Promise.all([1, 2].map((i) => addStaffUser(db, t.slug, `desk${i}-${engine}@streams.example`, 'receptionist')));
    const [a, b] = await Promise.all(users.map((u) => DashboardClient.loggedIn(t, u.email)));
    if (!a || !b) throw new Error('two logins');
    await openStream(a);
    await openStream(a);
    await openStream(b);
    const refused = await refusedStream(t, b);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'TOO_MANY_STREAMS', limit: 'hotel', max: 3 });
    await t.addHotel(`other-${engine}-hotel`);
    const elsewhere = await addStaffUser(db, `other-${engine}-hotel`, `desk-${engine}@elsewhere.example`, 'receptionist');
    await openStream(await DashboardClient.loggedIn(t, elsewhere.email));
  });
});
