import { dateTriggerDue } from './date-trigger';
import { contactTimeZone, localDay, nextTimeOfDay, timeOfDayOn } from './wait-time';

// Time of day in a zone across DST changes, on injected instants: the offset is the target day's,
// not today's, so 09:00 stays 09:00 on the wall clock on both sides of the change.

const at = (iso: string) => new Date(iso);
const next = (now: string, hhmm: string, tz: string) => nextTimeOfDay(at(now), hhmm, tz).toISOString();

describe('nextTimeOfDay across DST', () => {
  it('Europe/Berlin, last Sunday of March (CET to CEST): Saturday 09:00 is 08:00Z, Sunday 09:00 is 07:00Z', () => {
    expect(next('2026-03-28T07:00:00Z', '09:00', 'Europe/Berlin')).toBe('2026-03-28T08:00:00.000Z');
    expect(next('2026-03-28T10:00:00Z', '09:00', 'Europe/Berlin')).toBe('2026-03-29T07:00:00.000Z');
    // From just before the change (01:59 CET) to after it.
    expect(next('2026-03-29T00:59:00Z', '09:00', 'Europe/Berlin')).toBe('2026-03-29T07:00:00.000Z');
  });

  it('Europe/Berlin, last Sunday of October (CEST to CET): Sunday 09:00 is 08:00Z', () => {
    expect(next('2026-10-24T10:00:00Z', '09:00', 'Europe/Berlin')).toBe('2026-10-25T08:00:00.000Z');
    expect(next('2026-10-25T00:30:00Z', '09:00', 'Europe/Berlin')).toBe('2026-10-25T08:00:00.000Z');
    expect(next('2026-10-25T08:00:00Z', '09:00', 'Europe/Berlin')).toBe('2026-10-26T08:00:00.000Z');
  });

  it('America/New_York, second Sunday of March and first of November', () => {
    expect(next('2026-03-07T15:00:00Z', '09:00', 'America/New_York')).toBe('2026-03-08T13:00:00.000Z');
    expect(next('2026-03-08T13:00:00Z', '09:00', 'America/New_York')).toBe('2026-03-09T13:00:00.000Z');
    expect(next('2026-10-31T14:00:00Z', '09:00', 'America/New_York')).toBe('2026-11-01T14:00:00.000Z');
    // 23:30 local the evening before the change, across midnight and the change.
    expect(next('2026-11-01T03:30:00Z', '09:00', 'America/New_York')).toBe('2026-11-01T14:00:00.000Z');
  });

  it('a wall time the spring change skips (02:30 in Berlin) lands within the hour of the gap, after now', () => {
    const got = nextTimeOfDay(at('2026-03-28T12:00:00Z'), '02:30', 'Europe/Berlin').getTime();
    expect([at('2026-03-29T00:30:00Z').getTime(), at('2026-03-29T01:30:00Z').getTime()]).toContain(got);
  });

  it('UTC when the zone is absent or unknown', () => {
    expect(contactTimeZone({})).toBe('UTC');
    expect(contactTimeZone({ timezone: 'Mars/Olympus' })).toBe('UTC');
    expect(contactTimeZone({ tz: 'Europe/Berlin' }, 'tz')).toBe('Europe/Berlin');
    expect(next('2026-03-28T10:00:00Z', '09:00', 'UTC')).toBe('2026-03-29T09:00:00.000Z');
  });
});

describe('the date trigger on the same rules', () => {
  it('a day plus offset at a wall time, across the change', () => {
    expect(timeOfDayOn('2026-03-26', 3, '09:00', 'Europe/Berlin').toISOString()).toBe('2026-03-29T07:00:00.000Z');
    expect(timeOfDayOn('2026-03-26', 0, '09:00', 'Europe/Berlin').toISOString()).toBe('2026-03-26T08:00:00.000Z');
    expect(timeOfDayOn('2027-01-02', -3, '18:30', 'America/New_York').toISOString()).toBe('2026-12-30T23:30:00.000Z');
  });

  it('reads createdAt as the day in the contact zone, and a property as its first ten characters', () => {
    expect(localDay(at('2026-03-28T23:30:00Z'), 'Europe/Berlin')).toBe('2026-03-29');
    const t = { type: 'date' as const, contactBookId: 'b', property: 'createdAt', offsetDays: 3 };
    expect(dateTriggerDue(t, { createdAt: at('2026-03-28T23:30:00Z'), properties: { timezone: 'Europe/Berlin' } })).toEqual({
      dateValue: '2026-03-29',
      dueAt: at('2026-04-01T07:00:00Z'),
    });
    const p = { type: 'date' as const, contactBookId: 'b', property: 'properties.renewsOn', offsetDays: -1, time: '08:15' };
    expect(dateTriggerDue(p, { createdAt: new Date(0), properties: { renewsOn: '2026-11-02T00:00:00Z' } })?.dueAt).toEqual(
      at('2026-11-01T08:15:00Z'),
    );
    expect(dateTriggerDue(p, { createdAt: new Date(0), properties: { renewsOn: '2026-02-30' } })).toBeNull();
    expect(dateTriggerDue(p, { createdAt: new Date(0), properties: { renewsOn: 'soon' } })).toBeNull();
    expect(dateTriggerDue(p, { createdAt: new Date(0), properties: {} })).toBeNull();
  });
});
