import { windowSizeFor } from './ramp';

describe('windowSizeFor', () => {
  it('grows from start by factor per window up to batchSize', () => {
    const sizes = [0, 1, 2, 3, 4, 5].map((k) => windowSizeFor({ start: 2, factor: 2 }, 10, k));
    expect(sizes).toEqual([2, 4, 8, 10, 10, 10]);
  });

  it('floors fractional sizes and never exceeds batchSize, even when factor^k overflows', () => {
    expect([0, 1, 2, 3].map((k) => windowSizeFor({ start: 50, factor: 1.5 }, 1000, k))).toEqual([50, 75, 112, 168]);
    expect(windowSizeFor({ start: 3, factor: 10 }, 500, 5000)).toBe(500);
    expect(windowSizeFor({ start: 900, factor: 2 }, 500, 0)).toBe(500);
  });

  it('is batchSize without a ramp', () => {
    expect(windowSizeFor(null, 42, 7)).toBe(42);
  });
});
