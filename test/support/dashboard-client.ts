import { randomBytes, scrypt } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { request, type Agent } from 'undici';
import { vi } from 'vitest';
import type { Db } from '../../src/db/database.js';
import { SESSION_COOKIE } from '../../src/dashboard/session.js';
import { newId } from '../../src/domain/ids.js';
import { verifyPassword } from '../../src/operations.js';
import { flatHeaders, readResponse } from './http-response.js';
import { SseParser } from './sse.js';
import type { ApiResponse } from './harness.js';

// A small cookie-keeping HTTPS client for the staff dashboard's JSON API
// (docs/dashboard.md): it logs in, keeps the __Host-innsync_session cookie and sends the
// session's X-CSRF-Token on writes, like the dashboard's own script does.

export const DASHBOARD_API = '/dashboard/api';
export { SESSION_COOKIE };
/** The password of every user made by addStaffUser. */
export const STAFF_PASSWORD = 'lantern-quartz-meadow-7';

/** Where a client talks to: a TestServer, or a server a test started itself. */
export interface Target {
  baseUrl: string;
  agent: Agent;
}

export interface DashboardResponse extends ApiResponse {
  /** Every Set-Cookie header line of the answer. */
  setCookies: string[];
}

export interface SendOptions {
  /** The __Host-innsync_session cookie value to send; null or absent sends none. */
  cookie?: string | null;
  /** X-CSRF-Token to send; null or absent sends none. */
  csrf?: string | null;
  body?: unknown;
  /** Sent as is (not JSON-encoded). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** One HTTPS request; `urlPath` is absolute (/dashboard/api/…, /api/pms/…). */
export async function send(target: Target, method: string, urlPath: string, opts: SendOptions = {}): Promise<DashboardResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.cookie) headers.cookie = `${SESSION_COOKIE}=${opts.cookie}`;
  if (opts.csrf !== undefined && opts.csrf !== null) headers['x-csrf-token'] = opts.csrf;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(`${target.baseUrl}${urlPath}`, { method: method as 'GET', headers, body, dispatcher: target.agent });
  const raw = res.headers['set-cookie'];
  const setCookies = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return { ...(await readResponse(res)), setCookies };
}

/** The __Host-innsync_session value a Set-Cookie list sets ('' when it clears it), or undefined. */
export function sessionCookieOf(setCookies: string[]): string | undefined {
  for (const line of setCookies) {
    const [pair] = line.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (pair && eq > 0 && pair.slice(0, eq).trim() === SESSION_COOKIE) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

/** The attributes of a Set-Cookie line, lower-cased names: { httponly: '', samesite: 'Strict', … }. */
export function cookieAttributes(line: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of line.split(';').slice(1)) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    out[name] = eq < 0 ? '' : part.slice(eq + 1).trim();
  }
  return out;
}

export class DashboardClient {
  /** The session cookie's value; null when logged out. */
  cookie: string | null = null;
  csrfToken: string | null = null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the session answer as the API gave it
  session: any = null;

  constructor(readonly target: Target) {}

  /** A client logged in as `email`; fails the test when the login is refused. */
  static async loggedIn(target: Target, email: string, password = STAFF_PASSWORD): Promise<DashboardClient> {
    const client = new DashboardClient(target);
    const res = await client.login(email, password);
    if (res.status !== 200) throw new Error(`login of ${email} failed: ${res.status} ${res.text}`);
    return client;
  }

  /** POST /login; keeps the cookie and the CSRF token when it succeeds. */
  async login(email: string, password = STAFF_PASSWORD, headers: Record<string, string> = {}): Promise<DashboardResponse> {
    const res = await send(this.target, 'POST', `${DASHBOARD_API}/login`, { body: { email, password }, headers });
    this.adopt(res);
    return res;
  }

  /** Takes the session a login or setup answer carries. */
  adopt(res: DashboardResponse): void {
    const cookie = sessionCookieOf(res.setCookies);
    if (cookie !== undefined) this.cookie = cookie === '' ? null : cookie;
    if ((res.status === 200 || res.status === 201) && res.body?.csrfToken) {
      this.csrfToken = res.body.csrfToken as string;
      this.session = res.body;
    }
  }

  /**
   * A request under /dashboard/api with the session cookie; writes carry the session's
   * CSRF token unless `csrf` says otherwise (null: none, a string: that one).
   */
  api(method: string, apiPath: string, opts: Omit<SendOptions, 'cookie'> = {}): Promise<DashboardResponse> {
    const csrf = opts.csrf === undefined ? (method === 'GET' ? null : this.csrfToken) : opts.csrf;
    return send(this.target, method, `${DASHBOARD_API}${apiPath}`, { ...opts, cookie: this.cookie, csrf });
  }

  get(apiPath: string): Promise<DashboardResponse> {
    return this.api('GET', apiPath);
  }

  post(apiPath: string, body?: unknown, opts: Omit<SendOptions, 'cookie' | 'body'> = {}): Promise<DashboardResponse> {
    return this.api('POST', apiPath, { ...opts, body });
  }

  patch(apiPath: string, body: unknown, opts: Omit<SendOptions, 'cookie' | 'body'> = {}): Promise<DashboardResponse> {
    return this.api('PATCH', apiPath, { ...opts, body });
  }

  /** Opens GET /dashboard/api/events with this client's cookie. */
  events(): Promise<EventStream> {
    return EventStream.open(this.target, this.cookie);
  }
}

export interface SseEvent {
  event: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the event's JSON data
  data: any;
}

/**
 * A server-sent-event stream read as it arrives: events are queued and taken in order
 * with next(). Comment lines and `retry:` blocks are skipped.
 */
export class EventStream {
  private readonly queue: SseEvent[] = [];
  private waiter: (() => void) | null = null;
  private readonly parser = new SseParser();
  private ended = false;

  private constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    private readonly stop: () => void,
  ) {}

  static async open(target: Target, cookie: string | null): Promise<EventStream> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (cookie) headers.cookie = `${SESSION_COOKIE}=${cookie}`;
    const res = await request(`${target.baseUrl}${DASHBOARD_API}/events`, { method: 'GET', headers, dispatcher: target.agent });
    const stream = new EventStream(res.statusCode, flatHeaders(res.headers), () => res.body.destroy());
    const decoder = new StringDecoder('utf8');
    res.body.on('data', (chunk: Buffer) => stream.feed(decoder.write(chunk)));
    res.body.on('end', () => stream.finish());
    res.body.on('error', () => stream.finish());
    res.body.on('close', () => stream.finish());
    return stream;
  }

  private feed(text: string): void {
    for (const m of this.parser.push(text)) {
      let data: unknown = m.data;
      try {
        data = JSON.parse(m.data);
      } catch {
        data = m.data;
      }
      this.queue.push({ event: m.event, data });
    }
    this.wake();
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  /** The next event; fails after `timeoutMs` (a bound on a hang, not a measured duration). */
  async next(timeoutMs = 5_000): Promise<SseEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const first = this.queue.shift();
      if (first) return first;
      if (this.ended) throw new Error('the event stream ended');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** True once the server closed the stream (or it failed). */
  get hasEnded(): boolean {
    return this.ended;
  }

  /** Events received and not yet taken by next(). */
  pending(): SseEvent[] {
    return [...this.queue];
  }

  close(): void {
    this.stop();
  }
}

let sharedHash: Promise<string> | null = null;

/**
 * STAFF_PASSWORD's hash for the users tests add directly: scrypt at N = 2^10, a 32nd of the
 * service's cost. A stored hash names its own cost (staff/passwords.ts), and a login
 * checks it at that cost, up to LOGIN_TIMED_CHECKS times: at the service's cost the
 * dashboard tests spent minutes hashing. Users the service itself creates (the CLI, the
 * first-run setup, the staff API) get the service's cost, and test/cli/cli.test.ts checks it.
 */
export async function fixturePasswordHash(password: string): Promise<string> {
  const cost = { N: 2 ** 10, r: 8, p: 1 };
  const salt = randomBytes(16);
  const hash = await new Promise<Buffer>((resolve, reject) => scrypt(password, salt, 32, cost, (err, key) => (err ? reject(err) : resolve(key))));
  const stored = `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
  // The service reads it as its own: a hash it would not accept is no fixture.
  if (!(await verifyPassword(password, stored))) throw new Error('the fixture hash does not verify');
  return stored;
}

/**
 * A staff user of hotel `slug` with STAFF_PASSWORD, inserted directly: the scrypt hash is
 * computed once per test file and shared, so adding users costs nothing.
 */
export async function addStaffUser(db: Db, slug: string, email: string, role: 'admin' | 'receptionist'): Promise<{ id: string; email: string }> {
  sharedHash ??= fixturePasswordHash(STAFF_PASSWORD);
  const hotel = await db.selectFrom('hotels').select('id').where('slug', '=', slug).executeTakeFirstOrThrow();
  const id = newId('user');
  const normalized = email.toLowerCase();
  await db
    .insertInto('staff_users')
    .values({ id, hotel_id: hotel.id, email: normalized, role, password_hash: await sharedHash, created_at: new Date().toISOString(), deactivated_at: null })
    .execute();
  return { id, email: normalized };
}

export async function hotelIdOf(db: Db, slug: string): Promise<string> {
  return (await db.selectFrom('hotels').select('id').where('slug', '=', slug).executeTakeFirstOrThrow()).id;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value other than undefined (the batched request log, key last use). */
export function eventually<T>(probe: () => Promise<T | undefined>): Promise<T> {
  // vi.waitFor (not expect.poll) so hooks may wait too; the same timeout as expect.poll's.
  return vi.waitFor(
    async () => {
      const value = await probe();
      if (value === undefined) throw new Error('not there yet');
      return value;
    },
    { timeout: 10_000, interval: 50 },
  );
}

/** An error answer without its requestId, for comparing two refusals. */
export function withoutRequestId(body: unknown): Record<string, unknown> {
  const { requestId: _requestId, ...rest } = (body ?? {}) as Record<string, unknown>;
  return rest;
}

/**
 * The failed-login limits count in fixed windows (15 minutes): a test that spends a
 * limit waits, when the next window starts within `marginMs`, until it has started, so
 * that its attempts all fall into one window.
 */
export async function withinOneWindow(windowMs = 15 * 60_000, marginMs = 10_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await sleep(left + 50);
}
