// Reading a send rate from arrival times (ms), as SES would see it.

/** The most arrivals in any window of `windowMs` (sliding: every window that starts at an arrival). */
export function maxInAnyWindow(times: number[], windowMs = 1000): number {
  return busiestWindow(times, windowMs).count;
}

/** The window of `windowMs` with the most arrivals: its first arrival's time and its count. */
export function busiestWindow(times: number[], windowMs = 1000): { start: number; count: number } {
  const t = [...times].sort((a, b) => a - b);
  let best = { start: t[0] ?? 0, count: 0 };
  let end = 0;
  for (let start = 0; start < t.length; start++) {
    while (end < t.length && t[end] < t[start] + windowMs) end++;
    if (end - start > best.count) best = { start: t[start], count: end - start };
  }
  return best;
}

/** Arrivals per second from the first to the last: (n - 1) gaps over the time they took. */
export function rateBetweenFirstAndLast(times: number[]): number {
  if (times.length < 2) return 0;
  const first = Math.min(...times);
  const last = Math.max(...times);
  return last > first ? ((times.length - 1) * 1000) / (last - first) : Infinity;
}
