/** Waits before the 2nd, 3rd, ... attempt of a webhook delivery: 9 attempts over about 16 hours. */
export const defaultWebhookRetrySchedule = '5s,1m,5m,30m,1h,2h,4h,8h';

const unitMs = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** "5s,1m,2h" → [5000, 60000, 7200000]. */
export function parseRetrySchedule(text: string): number[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)(ms|s|m|h)\s*$/.exec(part);
    if (!m) throw new Error(`invalid retry delay "${part}" (use e.g. 500ms, 5s, 10m, 2h)`);
    return Number(m[1]) * unitMs[m[2] as keyof typeof unitMs];
  });
}
