// The hotel's time zone: its "today" on the board. Offered from the browser's own list of
// IANA zones; the server checks the name against its list.

import { field } from './ui.js';
import { t } from './i18n.js';

/** The IANA time zones this browser knows, and the one it runs in. */
function timeZones() {
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [own];
  return { own, all: [...new Set(['UTC', ...all, own])].sort() };
}

/** A select of every zone, `value` (or the browser's zone) chosen. */
export function timeZoneField(value) {
  const { own, all } = timeZones();
  return field({
    name: 'timeZone',
    label: t('Time zone'),
    hint: t('The hotel’s own day: arrivals and departures “today” follow it.'),
    options: all.map((z) => [z, z.replaceAll('_', ' ')]),
    value: value ?? own,
  });
}
