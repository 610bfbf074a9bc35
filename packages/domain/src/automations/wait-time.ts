import { isValidTimeZone } from '@mailrail/platform/clock';

// When a wait step ends: after a duration, or at the next HH:MM in the contact's time zone. The
// offset is computed with Intl for the target day itself, so a DST change between now and then
// does not put the send an hour off.

/** Minutes east of UTC of `timeZone` at `instant`. */
function offsetMinutes(timeZone: string, instant: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(instant));
  const n = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const asUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return Math.round((asUtc - Math.floor(instant / 1000) * 1000) / 60_000);
}

/** The instant of local wall time (y, m, d, hh, mm) in `timeZone`. */
function localToInstant(timeZone: string, y: number, m: number, d: number, hh: number, mm: number): number {
  const guess = Date.UTC(y, m, d, hh, mm);
  const first = guess - offsetMinutes(timeZone, guess) * 60_000;
  const second = guess - offsetMinutes(timeZone, first) * 60_000;
  return second;
}

/** The contact's time zone from `property` when it holds a valid IANA name, else UTC. */
export function contactTimeZone(properties: Record<string, unknown>, property = 'timezone'): string {
  const v = properties[property];
  return typeof v === 'string' && v.length <= 64 && isValidTimeZone(v) ? v : 'UTC';
}

/** The first instant after `now` at which the wall clock in `timeZone` reads `hhmm` (HH:MM). */
export function nextTimeOfDay(now: Date, hhmm: string, timeZone: string): Date {
  const [hh, mm] = hhmm.split(':').map(Number);
  const local = new Date(now.getTime() + offsetMinutes(timeZone, now.getTime()) * 60_000);
  for (let day = 0; day <= 2; day++) {
    const at = localToInstant(timeZone, local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() + day, hh, mm);
    if (at > now.getTime()) return new Date(at);
  }
  return new Date(now.getTime() + 86_400_000);
}

/** The calendar day (YYYY-MM-DD) the wall clock in `timeZone` shows at `instant`. */
export function localDay(instant: Date, timeZone: string): string {
  return new Date(instant.getTime() + offsetMinutes(timeZone, instant.getTime()) * 60_000).toISOString().slice(0, 10);
}

/** The instant at which the wall clock in `timeZone` reads `hhmm` on `day` (YYYY-MM-DD) plus `addDays`. */
export function timeOfDayOn(day: string, addDays: number, hhmm: string, timeZone: string): Date {
  const [y, m, d] = day.split('-').map(Number);
  const [hh, mm] = hhmm.split(':').map(Number);
  return new Date(localToInstant(timeZone, y, m - 1, d + addDays, hh, mm));
}
