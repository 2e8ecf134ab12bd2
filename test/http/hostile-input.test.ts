import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKeyPair } from '../../src/operations.js';
import { addStaffUser, DashboardClient, send } from '../support/dashboard-client.js';
import { guest, startTestServer, testEngines, uniqueKey, type ApiResponse, type TestServer } from '../support/harness.js';

// Cheap rejection: no input, however shaped, makes a 5xx or a large answer, on
// every JSON route of the PMS API and the dashboard; deep and wide bodies are refused
// before anything walks them; the per-IP limit covers login and setup.

/** An error answer is a few KiB at most. */
const MAX_ANSWER_BYTES = 8 * 1024;

/** A PMS API path below the hotel's root, or a dashboard API path. */
type Route = { pms?: string; dashboard?: string; method?: string };

const deep = (levels: number, leaf = '1'): string => '['.repeat(levels) + leaf + ']'.repeat(levels);
const deepObject = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
const wide = (members: number): string => `{${Array.from({ length: members }, (_, i) => `"m${i}":${i}`).join(',')}}`;

describe.each(testEngines())('hostile input (%s)', (engine) => {
  let t: TestServer;
  let admin: DashboardClient;
  let guestId: string;
  beforeAll(async () => {
    t = await startTestServer(engine);
    const user = await addStaffUser(t.server.database.db, t.slug, `hostile-${engine}@test.example`, 'admin');
    admin = await DashboardClient.loggedIn(t, user.email);
    const walkIn = await admin.post('/guests', { lastName: 'Walker', roomNumber: 'W1', checkInDate: '2026-11-23', checkOutDate: '2026-11-25' });
    guestId = walkIn.body.id as string;
  });
  afterAll(() => t.close());

  // Rate limits count per key (60/min per endpoint): a fresh pair every 40 PMS requests.
  let pair: { live: string } | null = null;
  let used = 0;
  async function pmsKey(): Promise<string> {
    if (!pair || used >= 40) {
      pair = await issueKeyPair(t.server.database.db, t.slug);
      used = 0;
    }
    used += 1;
    return pair.live;
  }

  const PMS = ['/guests/checkin', '/guests/update', '/guests/checkout', '/guests/sync'];
  const DASHBOARD = () => ['/guests', `/guests/${guestId}`, `/guests/${guestId}/checkout`, '/users', '/keys', '/login', '/setup'];

  /** One raw JSON body to `route` (a PMS path or a dashboard API path). */
  async function sendRaw(route: Route, rawBody: string): Promise<ApiResponse> {
    if (route.pms) {
      return t.api('POST', `${t.pmsBase}${route.pms}`, {
        key: await pmsKey(),
        rawBody,
        headers: { 'content-type': 'application/json' },
        idempotencyKey: uniqueKey('hostile'),
      });
    }
    const path = route.dashboard ?? '';
    const method = route.method ?? (path === `/guests/${guestId}` ? 'PATCH' : 'POST');
    return admin.api(method, path, { rawBody, headers: { 'content-type': 'application/json' } });
  }

  function expectCheapRefusal(res: ApiResponse, what: string): void {
    expect(res.status, `${what}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
    expect(res.text.length, what).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
  }

  it('a body nested 10,000 deep (arrays or objects) is 400 INVALID_JSON on every JSON route, never a 5xx', async () => {
    const routes: Route[] = [...PMS.map((pms) => ({ pms })), ...DASHBOARD().map((dashboard) => ({ dashboard }))];
    for (const r of routes) {
      for (const body of [`{"x":${deep(10_000)}}`, deepObject(10_000)]) {
        const res = await sendRaw(r, body);
        const what = `${r.pms ?? r.dashboard}`;
        expectCheapRefusal(res, what);
        // Login and setup take 4 KiB at most: a deep body that long is refused for its size.
        expect([400, 413], what).toContain(res.status);
        if (res.status === 400) expect(res.body).toMatchObject({ status: 'error', code: 'INVALID_JSON' });
      }
    }
  });

  it('64 levels are accepted as JSON (then judged by the field rules); 65 are not', async () => {
    const at = async (levels: number) => sendRaw({ pms: '/guests/checkin' }, `{"pmsGuestId":${deep(levels - 1, '"x"')}}`);
    const ok = await at(64);
    expect(ok.status).toBe(422);
    const tooDeep = await at(65);
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.code).toBe('INVALID_JSON');
  });

  it('an object of 60,000 members (900 KiB) is refused at once with a small answer (422 on the PMS API, 413 at the 4 KiB login), a 65-member one too, a guest of 12 members is not', async () => {
    const huge = wide(60_000);
    const pms = await sendRaw({ pms: '/guests/checkin' }, huge);
    expectCheapRefusal(pms, 'check-in');
    expect(pms.status).toBe(422);
    expect(pms.body).toMatchObject({ code: 'VALIDATION_ERROR', errors: [{ field: '(body)', code: 'TOO_MANY' }] });
    const login = await send(t, 'POST', '/dashboard/api/login', { rawBody: huge, headers: { 'content-type': 'application/json' } });
    expectCheapRefusal(login, 'login');
    expect(login.status).toBe(413);
    const dash = await sendRaw({ dashboard: '/guests' }, wide(65));
    expect(dash.status).toBe(422);
    expect(dash.body.errors[0]).toMatchObject({ field: '(body)', code: 'TOO_MANY' });
    const fine = await sendRaw(
      { pms: '/guests/checkin' },
      JSON.stringify(guest({ phone: '+4930123456', email: 'a@b.example', language: 'en', nationality: 'DE', adults: 2, children: 0 })),
    );
    expect(fine.status, fine.text).toBe(200);
  });

  it('a 422 lists at most 20 field errors and counts the rest in errorsNotShown; the check stops after 50 problems and says so', async () => {
    const broken = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        pmsGuestId: `P${i}`,
        lastName: '',
        roomNumber: `${i}`,
        checkInDate: 'soon',
        checkOutDate: '2026-11-26',
      }));
    // 20 guests with 2 problems each: all 40 found, 20 listed.
    const some = await sendRaw({ pms: '/guests/sync' }, JSON.stringify({ syncMode: 'full', guests: broken(20) }));
    expect(some.status).toBe(422);
    expect(some.body.code).toBe('INVALID_DATE_FORMAT');
    expect(some.body.errors).toHaveLength(20);
    expect(some.body.errors[0].code).toBe('INVALID_DATE_FORMAT');
    expect(some.body.errorsNotShown).toBe(20);
    expect(some.body.message).toBe('40 problems with the fields; the first 20 are listed in errors.');
    // 60 guests, 120 problems: the check stops after 50.
    const many = await sendRaw({ pms: '/guests/sync' }, JSON.stringify({ syncMode: 'full', guests: broken(60) }));
    expect(many.status).toBe(422);
    expect(many.body.code).toBe('INVALID_DATE_FORMAT');
    expect(many.body.errors).toHaveLength(20);
    expect(many.body.errorsNotShown).toBe(30);
    expect(many.body.message).toBe('More than 50 problems with the fields; the check stopped there. The first 20 are listed in errors.');
    expect(many.text.length).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
  });

  it('login and first-run setup count against the per-IP limit (100 a minute) before their bodies are read', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 110 }, (_, i) =>
        i % 2 === 0
          ? send(t, 'POST', '/dashboard/api/login', { body: { email: `nobody-${i}@test.example`, password: 'wrong-password-1' } })
          : send(t, 'GET', `/dashboard/api/setup/guess-${i}`),
      ),
    );
    const limited = attempts.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(10);
    for (const a of limited) expect(a.body).toMatchObject({ code: 'RATE_LIMITED', retryAfter: expect.any(Number) });
    for (const a of attempts) expect(a.headers['x-ratelimit-limit']).toBe('100');
  });

  it('generated bodies of every shape (deep, wide, long strings, every member type) never make a 5xx or an answer over 8 KiB, on every JSON route', async () => {
    const member = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.double(),
      fc.integer(),
      fc.string({ maxLength: 40 }),
      fc.string({ minLength: 5000, maxLength: 20_000 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        member,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 12 }), tie('node'), { maxKeys: 5 }),
      ),
    })).node;
    const body = fc.oneof(
      fc
        .dictionary(
          fc.constantFrom(
            'pmsGuestId',
            'lastName',
            'roomNumber',
            'checkInDate',
            'checkOutDate',
            'syncMode',
            'guests',
            'email',
            'password',
            'adults',
            'firstName',
            'confirmPmsGuest',
            'role',
            'x',
          ),
          value,
          { maxKeys: 8 },
        )
        .map((o) => JSON.stringify(o)),
      value.map((v) => JSON.stringify(v)),
      fc.integer({ min: 1, max: 3000 }).map((n) => deep(n)),
      fc.integer({ min: 1, max: 300 }).map((n) => wide(n)),
      fc.string({ maxLength: 200 }),
    );
    const routes: Route[] = [
      ...PMS.map((pms) => ({ pms })),
      ...DASHBOARD()
        .filter((d) => d !== '/login' && d !== '/setup')
        .map((dashboard) => ({ dashboard })),
    ];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), body, async (route, raw) => {
        const res = await sendRaw(route, raw);
        expectCheapRefusal(res, `${route.pms ?? route.dashboard} ${raw.slice(0, 80)}`);
      }),
      { numRuns: 150 },
    );
  });
});
