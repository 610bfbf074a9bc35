import { MAX_WINDOW_PLAN_ROWS, windowPlan, windowSizeFor } from './ramp';

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

describe('windowPlan', () => {
  const opened = (number: number, size: number, queued: number) => ({
    number,
    size,
    queued,
    openedAt: new Date(Date.UTC(2026, 0, 1, number)),
  });

  it('lists the opened windows with what they sent, then the ramp for what is left', () => {
    const plan = windowPlan({ ramp: { start: 2, factor: 2 }, batchSize: 10 }, [opened(0, 2, 2), opened(1, 4, 3)], 30);
    expect(plan).toEqual({
      rows: [
        { number: 0, planned: 2, sent: 2, openedAt: '2026-01-01T00:00:00.000Z' },
        { number: 1, planned: 4, sent: 3, openedAt: '2026-01-01T01:00:00.000Z' },
        { number: 2, planned: 8, sent: null, openedAt: null },
        { number: 3, planned: 10, sent: null, openedAt: null },
        { number: 4, planned: 7, sent: null, openedAt: null },
      ],
      more: 0,
    });
  });

  it('without a ramp every window is batchSize; past the listed rows the rest are counted', () => {
    const plan = windowPlan({ ramp: null, batchSize: 1 }, [], MAX_WINDOW_PLAN_ROWS + 500);
    expect(plan.rows).toHaveLength(MAX_WINDOW_PLAN_ROWS);
    expect(plan.more).toBe(500);
    expect(windowPlan({ ramp: null, batchSize: 5 }, [opened(0, 5, 5)], 5)).toEqual({
      rows: [{ number: 0, planned: 5, sent: 5, openedAt: '2026-01-01T00:00:00.000Z' }],
      more: 0,
    });
  });

  it('plans an opened window at what was left of the audience when it opened, as it did before it opened', () => {
    const ramp = { ramp: { start: 3, factor: 2 }, batchSize: 20 };
    const before = windowPlan(ramp, [opened(0, 3, 3), opened(1, 6, 6)], 16);
    expect(before.rows[2]).toEqual({ number: 2, planned: 7, sent: null, openedAt: null });
    const after = windowPlan(ramp, [opened(0, 3, 3), opened(1, 6, 6), opened(2, 12, 7)], 16);
    expect(after.rows.map((r) => [r.planned, r.sent])).toEqual([
      [3, 3],
      [6, 6],
      [7, 7],
    ]);
  });
});
