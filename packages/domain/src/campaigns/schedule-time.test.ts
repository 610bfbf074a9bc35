import { ApiError } from '../errors/api-error';
import { parseScheduledAt, zoneOffsetMinutes } from './schedule-time';

// New York leaves summer time on Sunday 2026-11-01 at 02:00 (EDT -4 to EST -5).
// Reference: Saturday 2026-10-31 12:00 EDT = 16:00 UTC = Sunday 2026-11-01 01:00 in Tokyo (+9, no DST).
const ref = new Date('2026-10-31T16:00:00Z');
const at = (text: string, tz: string) => parseScheduledAt(text, ref, tz).toISOString();

describe('parseScheduledAt', () => {
  it('reads natural language as wall-clock time in America/New_York across the DST change', () => {
    expect(zoneOffsetMinutes('America/New_York', ref)).toBe(-240);
    // 9am on the first day of EST is 14:00 UTC, not 13:00 (the offset at the reference instant).
    expect(at('tomorrow at 9am', 'America/New_York')).toBe('2026-11-01T14:00:00.000Z');
    expect(at('in 2 hours', 'America/New_York')).toBe('2026-10-31T18:00:00.000Z');
    expect(at('next monday 10:00', 'America/New_York')).toBe('2026-11-02T15:00:00.000Z');
  });

  it('reads natural language in Asia/Tokyo', () => {
    expect(at('tomorrow at 9am', 'Asia/Tokyo')).toBe('2026-11-02T00:00:00.000Z');
    expect(at('in 2 hours', 'Asia/Tokyo')).toBe('2026-10-31T18:00:00.000Z');
    expect(at('next monday 10:00', 'Asia/Tokyo')).toBe('2026-11-02T01:00:00.000Z');
  });

  it('takes ISO 8601 with an offset as is, and without one as wall-clock time in the zone', () => {
    expect(at('2026-12-01T09:00:00+02:00', 'Asia/Tokyo')).toBe('2026-12-01T07:00:00.000Z');
    expect(at('2026-12-01T09:00:00Z', 'America/New_York')).toBe('2026-12-01T09:00:00.000Z');
    expect(at('2026-12-01T09:00', 'America/New_York')).toBe('2026-12-01T14:00:00.000Z');
    expect(at('2026-07-01T09:00', 'America/New_York')).toBe('2026-07-01T13:00:00.000Z');
  });

  it('refuses text it cannot read with a 400 that names the field and gives an example', () => {
    let err: unknown;
    try {
      parseScheduledAt('whenever you like', ref, 'UTC');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect((err as ApiError).message).toMatch(/tomorrow 9am/);
    expect((err as ApiError).issues?.[0].path).toEqual(['scheduledAt']);
  });
});
