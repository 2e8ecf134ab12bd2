import { guestDataFromCheckin } from '../domain/guest.js';
import { guestObject } from '../roster/guest-object.js';
import { eventBody, type EventType } from '../webhooks/events.js';
import { ADA, ADA_ID } from './examples.js';

// The API reference's section on events out (webhooks), with one example per type: built
// by the same function that builds every delivery's body.

/** The guest of the reference's examples, as answers and events show her. */
const guest = guestObject({
  ...guestDataFromCheckin(ADA),
  id: ADA_ID,
  pmsGuestId: ADA.pmsGuestId,
  source: 'pms',
  createdAt: '2026-11-23T14:02:11.482Z',
  updatedAt: '2026-11-24T09:15:40.118Z',
});
const pms = { type: 'pms', keyId: 'key_4fj29dk1m0s8a7q2' };

const EXAMPLES: Array<[EventType, string, Record<string, unknown>]> = [
  ['guest.checked_in', 'A guest checked in (PMS check-in, sync arrival, or a walk-in entered by staff).', { guest: { ...guest, roomNumber: '305', updatedAt: guest.createdAt }, actor: pms }],
  ['guest.updated', 'Fields other than the room changed; `changes` holds each field from → to.', { guest, changes: { lastName: { from: 'Byron', to: 'Lovelace' } }, actor: pms }],
  [
    'guest.room_moved',
    'The guest moved rooms (an update that also changed other fields sends `guest.updated` too).',
    { guest, changes: { roomNumber: { from: '305', to: '401' } }, actor: { type: 'staff', userId: 'user_2m8d0k4s7q1w9e3r' } },
  ],
  ['guest.checked_out', 'The stay ended and the room is free; `guest.roomNumber` is the room left.', { guest, actor: pms }],
  [
    'sync.completed',
    'A full-list sync finished; one event per guest it changed came before it.',
    { summary: { received: 118, checkedIn: 3, updated: 5, checkedOut: 2, unchanged: 108, manualSkipped: 4 }, actor: pms },
  ],
  [
    'guest.erased',
    "The guest's personal data was erased on request: ids and counts only. Erase it in your system too.",
    {
      guestId: guest.guestId,
      pmsGuestId: guest.pmsGuestId,
      guestIds: [guest.guestId],
      erased: { guests: 1, activity: 4, idempotency: 0, requestLog: 3, webhookEvents: 4 },
      actor: { type: 'system' },
    },
  ],
  ['webhook.test', 'Sent from the Webhooks page ("Send a test event") or by `innsync webhook test` to one endpoint.', { message: 'A test event sent from the Webhooks page of innsync.' }],
];

export const EVENTS_DOC = [
  '## Events (webhooks)',
  '',
  "innsync POSTs every roster change to the hotel's webhook endpoints (set up by its admins on the dashboard's Webhooks page, or `innsync webhook add`). Each delivery is signed per the Standard Webhooks specification: headers `webhook-id` (the event id, the same on every retry: use it to drop repeats), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of id.timestamp.body>` under the endpoint's `whsec_…` secret; during a secret rotation two, space-separated). Verify with any Standard Webhooks library.",
  '',
  '- **Answer** 2xx within 10 seconds. Anything else is retried (after about a second, then doubling with jitter up to an hour) for 3 days; then the delivery is given up and the endpoint disabled until an admin enables it again.',
  "- **Order**: each endpoint receives a hotel's events in the order their changes were committed; a later event waits until the earlier one was delivered or given up.",
  '- **Test keys** never produce events. `data.actor` is `{type: "pms", keyId}`, `{type: "staff", userId}` or `{type: "system"}`; `data.guest` is the guest as `GET /guests` shows it, after the change.',
  '',
  '| type | when |',
  '|---|---|',
  ...EXAMPLES.map(([type, when]) => `| \`${type}\` | ${when} |`),
  '',
  ...EXAMPLES.flatMap(([type, , data]) => [
    `Example \`${type}\`:`,
    '',
    '```json',
    JSON.stringify(JSON.parse(eventBody('evt_q8w2e4r6t1y3u5i7o9p0', type, '2026-11-24T09:15:40.118Z', 'grand-hotel', data)), null, 2),
    '```',
    '',
  ]),
].join('\n');
