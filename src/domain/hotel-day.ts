// A hotel's day (its time zone, docs/dashboard.md, "Access trail"): the instants it starts
// and ends, for lists filtered by day.

/** Minutes the zone is ahead of UTC at this instant. */
function offsetMinutes(timeZone: string, at: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(at));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return Math.round((asUtc - Math.floor(at / 1000) * 1000) / 60_000);
}

/** The instant a calendar date (YYYY-MM-DD) begins in the zone. */
function dayStart(day: string, timeZone: string): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(y, m - 1, d);
  // The offset at the guess, then at the corrected instant (a change of offset that day).
  const first = wall - offsetMinutes(timeZone, wall) * 60_000;
  return wall - offsetMinutes(timeZone, first) * 60_000;
}

/** The day's instants as ISO times: from its start (included) to the next day's start (excluded). */
export function hotelDayBounds(day: string, timeZone: string): { from: string; to: string } {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const next = new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
  return { from: new Date(dayStart(day, timeZone)).toISOString(), to: new Date(dayStart(next, timeZone)).toISOString() };
}
