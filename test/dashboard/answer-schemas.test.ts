import Fastify from 'fastify';
import { generateAuthenticationOptions, generateRegistrationOptions } from '@simplewebauthn/server';
import type { TSchema } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { boardGuestView, guestView, sessionView } from '../../src/dashboard/answers.js';
import {
  AccessTrailAnswer,
  AccountSessionsAnswer,
  ActivityAnswer,
  DeliveriesAnswer,
  EndpointSecretAnswer,
  GuestDetailAnswer,
  GuestEditAnswer,
  GuestsAnswer,
  PasskeyAnswer,
  PasskeyOptionsAnswer,
  PasskeyRemovedAnswer,
  PasskeysAnswer,
  PasskeysOnlyAnswer,
  PasswordChangedAnswer,
  RequestAnswer,
  SecurityEventsAnswer,
  SessionAnswer,
  SessionsEndedAnswer,
  UsersAnswer,
  WebhooksAnswer,
} from '../../src/dashboard/schemas.js';
import type { Guest } from '../../src/db/repositories/guest.repository.js';
import { OWN_FORMATS } from '../../src/http/validation.js';
import { staffUserView } from '../../src/staff/staff-service.js';

// docs/dashboard.md, "JSON API (`/dashboard/api/…`)": the routes' answer schemas only say
// what the answers hold. The serializer writes the members a schema names, in its order, as
// its types: for each shape an answer takes, it must write what JSON.stringify writes.

/** The answer as a route with this response schema sends it (the service's serializer options). */
async function sent(schema: TSchema, payload: unknown): Promise<string> {
  const app = Fastify({ serializerOpts: { ajv: { formats: OWN_FORMATS } } });
  app.get('/', { schema: { response: { 200: schema } } }, async () => payload);
  const res = await app.inject('/');
  await app.close();
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

async function expectAsJson(schema: TSchema, payload: unknown): Promise<void> {
  expect(await sent(schema, payload)).toBe(JSON.stringify(payload));
}

const guest: Guest = {
  id: 'gst_1',
  hotelId: 'htl_1',
  source: 'pms',
  pmsGuestId: 'P-1',
  status: 'active',
  firstName: 'Ada',
  lastName: 'Lovelace',
  phone: '+4930123456',
  roomNumber: '101',
  checkInDate: '2026-11-23',
  checkOutDate: '2026-11-25',
  language: 'en',
  adults: 2,
  children: 0,
  nationality: 'GB',
  email: 'ada@example.org',
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-23T10:00:00.000Z',
  anonymisedAt: null,
};
// Anonymised: the personal fields null, lastName empty (docs/dashboard.md).
const anonymised: Guest = {
  ...guest,
  id: 'gst_2',
  source: 'receptionist',
  pmsGuestId: null,
  status: 'checked_out',
  firstName: null,
  lastName: '',
  phone: null,
  language: null,
  adults: null,
  children: null,
  nationality: null,
  email: null,
  anonymisedAt: '2026-12-01T00:00:00.000Z',
};

describe('the dashboard API answers, as their schemas write them', () => {
  it('GET /guests: whole guests for staff, the board members only for a front-desk display', async () => {
    await expectAsJson(GuestsAnswer, { guests: [guestView(guest), guestView(anonymised)] });
    await expectAsJson(GuestsAnswer, { guests: [boardGuestView(guest), boardGuestView(anonymised)] });
    await expectAsJson(GuestsAnswer, { guests: [] });
    expect(JSON.parse(await sent(GuestsAnswer, { guests: [boardGuestView(guest)] })).guests[0]).not.toHaveProperty('email');
  });

  it('a guest with its room history, and an edit with its changes', async () => {
    const rooms = [{ roomNumber: '101', assignedAt: '2026-11-23T10:00:00.000Z', releasedAt: null }];
    await expectAsJson(GuestDetailAnswer, { guest: guestView(anonymised), rooms });
    await expectAsJson(GuestEditAnswer, {
      guest: guestView(guest),
      changes: { roomNumber: { from: '100', to: '101' }, email: { from: null, to: 'ada@example.org' } },
    });
  });

  it('a session, staff users', async () => {
    const user = { id: 'usr_1', hotelId: 'htl_1', email: 'desk@example.org', role: 'receptionist' as const, createdAt: 'x', deactivatedAt: null };
    await expectAsJson(SessionAnswer, sessionView({ user, hotel: { slug: 'inn', name: 'Inn', timeZone: 'UTC' } }, 'csrf', true));
    await expectAsJson(UsersAnswer, { users: [staffUserView(user), staffUserView({ ...user, role: 'admin', deactivatedAt: 'y' })] });
  });

  it("My account: the user's sessions (a device named or not), sessions ended, a password changed", async () => {
    // In the order the route writes a session's members (routes/account.ts).
    const session = { id: 'a1', browser: 'Chrome 120', system: 'Linux', ip: '192.0.2.1', createdAt: 'x', lastSeenAt: 'y', display: false, current: true };
    await expectAsJson(AccountSessionsAnswer, { sessions: [session, { ...session, browser: null, system: null, ip: null, display: true, current: false }] });
    await expectAsJson(AccountSessionsAnswer, { sessions: [] });
    await expectAsJson(SessionsEndedAnswer, { ended: 0 });
    await expectAsJson(PasswordChangedAnswer, { passwordChanged: true, sessionsEnded: 2 });
  });

  it('activity entries of each kind of actor, with changes of any form', async () => {
    // In the order the route writes an entry's members (routes/roster.ts).
    const entry = (actorType: string, actor: unknown, changes: unknown) => ({
      id: 'act_1',
      at: 'x',
      actorType,
      actor,
      action: 'guest.updated',
      guestId: 'gst_1',
      pmsGuestId: 'P-1',
      guestName: null,
      guestAnonymised: true,
      roomNumber: '101',
      changes,
    });
    await expectAsJson(ActivityAnswer, {
      entries: [
        entry('pms', { keyId: 'key_1', mode: 'live' }, { lastName: { from: null, to: null, anonymised: true } }),
        entry('staff', { userId: 'usr_1', email: null }, { guests: 1, activity: 2 }),
        entry('system', null, null),
      ],
      next: 'x~act_1',
    });
  });

  it('access entries (a guest seen, a search) and security events (staff, operator, anonymous; any detail)', async () => {
    // In the order routes/trail.ts writes the members.
    const access = (guestId: string | null, guestName: string | null, search: string | null) => ({
      id: 'acc_1',
      at: 'x',
      action: search === null ? 'guest.viewed' : 'guest.searched',
      staff: { userId: 'usr_1', email: null },
      clientIp: '127.0.0.1',
      guestId,
      guestName,
      search,
    });
    await expectAsJson(AccessTrailAnswer, { entries: [access('gst_1', 'Lovelace, Ada', null), access(null, null, 'Love')], next: null });
    const event = (actorType: string, actor: unknown, subject: unknown, detail: unknown) => ({
      id: 'sec_1',
      at: 'x',
      kind: 'staff.added',
      actorType,
      actor,
      subject,
      keyPairId: null,
      clientIp: null,
      detail,
    });
    await expectAsJson(SecurityEventsAnswer, {
      events: [
        event('staff', { userId: 'usr_1', email: 'admin@example.org' }, { userId: 'usr_2', email: null }, { role: 'admin' }),
        event('operator', null, null, null),
        event('anonymous', null, { userId: 'usr_2', email: 'desk@example.org' }, { method: 'POST', route: '/dashboard/api/guests' }),
      ],
      next: 'x~sec_1',
    });
  });

  it('a request-log row in full', async () => {
    await expectAsJson(RequestAnswer, {
      request: {
        id: 'req_1',
        at: 'x',
        method: 'POST',
        path: '/api/pms/v1/inn/guests/checkin',
        statusCode: 201,
        mode: 'test',
        durationMs: 3.7,
        idempotencyKey: null,
        keyId: 'key_1',
        authenticated: true,
        replayOf: null,
        requestBody: '{}',
        responseBody: null,
        clientIp: '192.0.2.1',
        userAgent: null,
        requestBytes: 2,
        responseBytes: null,
        requestCut: false,
        responseCut: false,
        requestSha256: null,
        responseSha256: null,
        responseDigest: 'count-and-ids',
        bodyWithheld: null,
        pathBytes: null,
        userAgentBytes: 300,
        idempotencyKeyBytes: null,
      },
    });
  });

  it('webhook endpoints (every event type or some), a new secret, deliveries', async () => {
    const endpoint = {
      endpointId: 'whe_1',
      url: 'https://example.org/hook',
      events: 'all' as const,
      enabled: false,
      disabledReason: 'Disabled by an admin.',
      disabledAt: 'x',
      createdAt: 'y',
      previousSecretUntil: null,
    };
    await expectAsJson(WebhooksAnswer, { endpoints: [endpoint, { ...endpoint, events: ['guest.checked_in'] }], eventTypes: ['guest.checked_in'] });
    await expectAsJson(EndpointSecretAnswer, { endpoint: { ...endpoint, secret: 'whsec_x' } });
    const delivery = {
      id: 'whd_1',
      eventId: 'whv_1',
      eventType: 'webhook.test',
      status: 'failed',
      attempts: 3,
      createdAt: 'x',
      lastAttemptAt: 'y',
      lastStatus: 500,
      lastError: null,
      lastLatencyMs: 12,
      nextAttemptAt: null,
    };
    await expectAsJson(DeliveriesAnswer, { deliveries: [delivery, { ...delivery, status: 'pending', lastStatus: null, lastLatencyMs: null }] });
  });

  it('passkeys: the options as @simplewebauthn/server makes them (every member written as made), the list, one passkey, a removal, passkeys only', async () => {
    const registration = await generateRegistrationOptions({
      rpName: 'innsync · Test Hotel',
      rpID: 'localhost',
      userName: 'ada@example.org',
      userID: new TextEncoder().encode('user_1'),
      attestationType: 'none',
      excludeCredentials: [{ id: 'AAAA', transports: ['internal'] }],
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    await expectAsJson(PasskeyOptionsAnswer, { options: registration });
    await expectAsJson(PasskeyOptionsAnswer, { options: await generateAuthenticationOptions({ rpID: 'localhost', userVerification: 'required' }) });
    const passkey = { id: 'pk_1', name: 'Laptop', createdAt: '2026-11-23T10:00:00.000Z', lastUsedAt: null };
    await expectAsJson(PasskeysAnswer, {
      passkeys: [passkey, { ...passkey, id: 'pk_2', lastUsedAt: '2026-11-24T10:00:00.000Z' }],
      passkeysOnly: true,
      signedInWithPasskey: false,
    });
    // Added on My account: the session as it stays, or as an enrolment made it full.
    const user = { id: 'usr_1', hotelId: 'htl_1', email: 'ada@example.org', role: 'admin' as const, createdAt: 'x', deactivatedAt: null };
    await expectAsJson(PasskeyAnswer, { passkey, session: sessionView({ user, hotel: { slug: 'inn', name: 'Inn', timeZone: 'UTC' } }, 'csrf', false) });
    await expectAsJson(PasskeyRemovedAnswer, { id: 'pk_1', removed: true });
    await expectAsJson(PasskeysOnlyAnswer, { passkeysOnly: false });
  });
});
