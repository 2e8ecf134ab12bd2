/** The event types an endpoint can ask for (README.md, "Webhooks"). */
export const EVENT_TYPES = ['guest.checked_in', 'guest.updated', 'guest.room_moved', 'guest.checked_out', 'sync.completed', 'guest.erased'] as const;
/** Those, and the test event an admin sends to one endpoint. */
export type EventType = (typeof EVENT_TYPES)[number] | 'webhook.test';
