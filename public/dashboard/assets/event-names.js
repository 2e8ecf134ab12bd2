// One label per event name, wherever the dashboard names an event (the activity log, the
// webhooks' event types and deliveries).

import { t, tk } from './i18n.js';

const EVENT_LABELS = {
  'guest.checked_in': tk('Check-in'),
  'guest.updated': tk('Guest updated'),
  'guest.room_moved': tk('Room move'),
  'guest.checked_out': tk('Check-out'),
  'sync.completed': tk('Sync completed'),
  'guest.erased': tk('Personal data erased'),
  'webhook.test': tk('Test event'),
};

/** The events an activity entry records (the activity log's filter offers them). */
export const ACTIVITY_EVENTS = Object.keys(EVENT_LABELS).filter((name) => name !== 'webhook.test');

/** "guest.checked_in" → "Checked in" in the user's language (an unknown name as it is). */
export const eventLabel = (name) => (EVENT_LABELS[name] ? t(EVENT_LABELS[name]) : name);
