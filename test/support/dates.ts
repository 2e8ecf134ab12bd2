/** YYYY-MM-DD in a time zone (a hotel's day). */
export const dateIn = (timeZone: string, at = new Date()): string =>
  new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);

/** The calendar date `n` days after a YYYY-MM-DD date. */
export const plusDays = (iso: string, n: number): string => new Date(Date.parse(`${iso}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
