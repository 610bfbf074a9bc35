import type * as Chrono from 'chrono-node';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';
import { isSupportedInstant, UNSUPPORTED_DATE_MESSAGE } from '../date-range';
import { ApiError } from '../errors/api-error';

// Only natural-language dates need chrono (about 650 kB of source): loaded by the first one.
const chrono = loadOnFirstUse<typeof Chrono>('chrono-node');

// Campaign times: ISO 8601, or natural language ("tomorrow at 9am", "next monday 10:00") read as
// wall-clock time in an IANA zone. chrono only knows fixed offsets, so the zone's offset is taken
// with Intl at the date found (not at the reference instant: those differ across a DST change).

/** Minutes east of UTC of `timeZone` at `at` (e.g. -300 for New York in winter). */
export function zoneOffsetMinutes(timeZone: string, at: Date): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(at);
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wallAsUtc = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return Math.round((wallAsUtc - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

/** The instant whose wall-clock time in `timeZone` is `wall` (read as if it were UTC). */
function wallClockToInstant(wall: Date, timeZone: string): Date {
  let guess = wall.getTime() - zoneOffsetMinutes(timeZone, wall) * 60_000;
  // Once more with the offset at the guess: right on both sides of a DST change.
  guess = wall.getTime() - zoneOffsetMinutes(timeZone, new Date(guess)) * 60_000;
  return new Date(guess);
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

export const SCHEDULE_EXAMPLE = "Use ISO 8601 (e.g. 2026-12-01T09:00:00Z) or natural language like 'tomorrow 9am'.";

/**
 * Reads a schedule. ISO 8601 with an offset is taken as is; without one, and natural language,
 * as wall-clock time in `timeZone`. Relative phrases ("in 2 hours") count from `now`.
 * Unparseable text is a 400 naming `field` with an example.
 */
export function parseScheduledAt(text: string, now: Date, timeZone: string, field = 'scheduledAt'): Date {
  const when = readScheduledAt(text, now, timeZone, field);
  if (!isSupportedInstant(when)) {
    throw new ApiError('BAD_REQUEST', `Invalid ${field}: ${UNSUPPORTED_DATE_MESSAGE}`, [
      { path: [field], message: UNSUPPORTED_DATE_MESSAGE },
    ]);
  }
  return when;
}

function readScheduledAt(text: string, now: Date, timeZone: string, field: string): Date {
  const input = text.trim();
  const iso = ISO_DATE.exec(input);
  if (iso) {
    const parsed = new Date(iso[1] ? input : `${input.replace(' ', 'T')}${input.length === 10 ? 'T00:00:00' : ''}Z`);
    if (!Number.isNaN(parsed.getTime())) return iso[1] ? parsed : wallClockToInstant(parsed, timeZone);
  } else if (input) {
    const offset = zoneOffsetMinutes(timeZone, now);
    const [result] = chrono().parse(input, { instant: now, timezone: offset }, { forwardDate: true });
    if (result) {
      const found = result.start.date();
      // An explicit zone or a relative duration is an instant already.
      if (result.start.isCertain('timezoneOffset')) return found;
      const wall = new Date(found.getTime() + offset * 60_000);
      return wallClockToInstant(wall, timeZone);
    }
  }
  throw new ApiError('BAD_REQUEST', `Invalid date format: ${text}. ${SCHEDULE_EXAMPLE}`, [
    { path: [field], message: `Invalid date format. ${SCHEDULE_EXAMPLE}` },
  ]);
}
