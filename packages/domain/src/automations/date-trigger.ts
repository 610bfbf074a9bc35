import type { Trigger } from './definition';
import { contactTimeZone, localDay, timeOfDayOn } from './wait-time';

// When the date trigger fires for one contact (docs/automations.md, "Date trigger"): the day of
// its date property plus offsetDays, at `time` on the contact's wall clock, by the same time-of-day
// rules as a wait step (wait-time.ts). Pure: the worker's schedule (date-schedule.ts) and its tests share it.

export type DateTrigger = Extract<Trigger, { type: 'date' }>;

export const DEFAULT_DATE_TRIGGER_TIME = '09:00';

// A day YYYY-MM-DD at the start of the text (a date, or a date-time: its first ten characters),
// as segments read a property's date form. One anchored pattern without nesting: linear.
const DAY_PREFIX = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?:[T ]|$)/;

function dayOf(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  const m = DAY_PREFIX.exec(value);
  if (!m) return null;
  const day = value.slice(0, 10);
  // An impossible day (2026-02-30) has no date form.
  return new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) === day ? day : null;
}

/** The day the trigger counts from, and the instant it fires at; null when the contact has no such date. */
export function dateTriggerDue(
  t: DateTrigger,
  contact: { createdAt: Date; properties: Record<string, unknown> },
): { dateValue: string; dueAt: Date } | null {
  const tz = contactTimeZone(contact.properties, t.timezoneProperty);
  const dateValue =
    t.property === 'createdAt' ? localDay(contact.createdAt, tz) : dayOf(contact.properties[t.property.slice('properties.'.length)]);
  if (!dateValue) return null;
  return { dateValue, dueAt: timeOfDayOn(dateValue, t.offsetDays, t.time ?? DEFAULT_DATE_TRIGGER_TIME, tz) };
}
