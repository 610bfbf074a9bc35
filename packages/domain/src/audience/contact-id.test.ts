import { newContactIds, newIds } from './contact-id';

describe('batch ids', () => {
  it('draws distinct lowercase alphanumeric ids of the asked length', () => {
    const ids = newIds(20_000);
    expect(new Set(ids).size).toBe(20_000);
    expect(ids.every((id) => /^[0-9a-z]{24}$/.test(id))).toBe(true);
    expect(newIds(3, 10).every((id) => id.length === 10)).toBe(true);
    expect(newIds(0)).toEqual([]);
  });

  it('contact ids sort by creation time', () => {
    const earlier = newContactIds(100, Date.parse('2026-01-01T00:00:00Z'));
    const later = newContactIds(100, Date.parse('2026-01-01T00:00:00.001Z'));
    expect(earlier.every((id) => /^[0-9a-z]{24}$/.test(id))).toBe(true);
    expect([...earlier].sort()[99] < [...later].sort()[0]).toBe(true);
  });
});
