// Reading a send rate from arrival times (ms), as SES would see it. SES counts recipients: an
// arrival may weigh more than one (a message to n recipients weighs n).

export interface Arrival {
  at: number;
  weight: number;
}

/** The most arrivals in any window of `windowMs` (sliding: every window that starts at an arrival). */
export function maxInAnyWindow(times: number[], windowMs = 1000): number {
  return busiestWindow(times, windowMs).count;
}

/** The window of `windowMs` with the most arrivals: its first arrival's time and its count. */
export function busiestWindow(times: number[], windowMs = 1000): { start: number; count: number } {
  return busiestWeightedWindow(
    times.map((at) => ({ at, weight: 1 })),
    windowMs,
  );
}

/**
 * The window [start, start + windowMs) holding the most weight, among the windows that start at an
 * arrival: no window of that length, wherever it starts, holds more (sliding it right until its
 * first arrival sits on its left edge loses nothing and may gain).
 */
export function busiestWeightedWindow(arrivals: Arrival[], windowMs = 1000): { start: number; count: number } {
  const a = [...arrivals].sort((x, y) => x.at - y.at);
  let best = { start: a[0]?.at ?? 0, count: 0 };
  let end = 0;
  let inWindow = 0;
  for (let start = 0; start < a.length; start++) {
    while (end < a.length && a[end].at < a[start].at + windowMs) inWindow += a[end++].weight;
    if (inWindow > best.count) best = { start: a[start].at, count: inWindow };
    inWindow -= a[start].weight;
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

/**
 * Weight per second from the first arrival to the last. A message of n recipients spends n permits
 * and leaves in their middle, so between the first and the last arrival lie all the weight but
 * half the first's and half the last's (with weights of 1, the (n - 1) gaps above).
 */
export function weightedRateBetweenFirstAndLast(arrivals: Arrival[]): number {
  if (arrivals.length < 2) return 0;
  const a = [...arrivals].sort((x, y) => x.at - y.at);
  const first = a[0];
  const last = a[a.length - 1];
  const weight = a.reduce((sum, x) => sum + x.weight, 0) - first.weight / 2 - last.weight / 2;
  return last.at > first.at ? (weight * 1000) / (last.at - first.at) : Infinity;
}
