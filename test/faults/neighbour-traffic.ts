// Team B's side of the noisy-neighbour scenarios (11, 12 and 13): the traffic it keeps sending while
// team A saturates a heavy operation, and the bound its p90 must stay within.
import { call } from './api-scenarios';
import { sleep, type Stack, type Team } from './stack';

// B's requests never wait for a connection A holds (A's heavy work runs on the heavy pool, at most
// HEAVY_DB_POOL_SIZE statements at once, or in the worker); what B can lose is CPU, shared on this
// machine with A's bounded statements in PostgreSQL. 5x leaves room for that share on 2 cores; a
// pool B waits on (the finding) costs seconds, hundreds of times the baseline. The floor absorbs
// loopback noise when the baseline is a few milliseconds.
export const P90_FACTOR = 5;
export const P90_FLOOR_MS = 50;

export const p90 = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))] : 0;
};

/**
 * Within the segment cost budget and as costly as it allows: 100 `contains` conditions, all OR'ed,
 * none matching, except the last when `matching` is given (a campaign needs subscribed recipients).
 */
export function costlyFilter(matching?: string) {
  return {
    match: 'any',
    conditions: Array.from({ length: 5 }, (_, g) => ({
      match: 'any',
      conditions: Array.from({ length: 20 }, (_, i) => ({
        field: 'properties.city',
        operator: 'contains',
        value: matching !== undefined && g === 4 && i === 19 ? matching : `no-city-${g}-${i}`,
      })),
    })),
  };
}

/** HTTP statuses counted, as `200:5,429:12` for a result line. */
export const tally = (statuses: number[]) =>
  Object.entries(statuses.reduce<Record<number, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {}))
    .map(([s, n]) => `${s}:${n}`)
    .join(',');

/** The most B's loaded p90 may be, given its baseline p90. */
export const p90Bound = (baselineP90: number) => Math.max(P90_FACTOR * baselineP90, P90_FLOOR_MS);

/**
 * B's traffic for `ms`: one client alternating a send and a read, and a /ready probe. `onSent`
 * hears of each email B's send stored, as soon as it is answered; `pauseMs` between requests
 * makes B a light sender.
 */
export async function neighbourTraffic(
  stack: Stack,
  b: Team,
  ms: number,
  opts: { onSent?: (emailId: string) => void; pauseMs?: number } = {},
) {
  const latencies: number[] = [];
  const failures: string[] = [];
  let readyFailures = 0;
  const until = Date.now() + ms;
  const ready = (async () => {
    while (Date.now() < until) {
      const res = await fetch(`${stack.apiUrl}/ready`).catch(() => null);
      if (res?.status !== 200) readyFailures++;
      await sleep(200);
    }
  })();
  for (let i = 0; Date.now() < until; i++) {
    const t0 = performance.now();
    const res =
      i % 2 === 0
        ? await call(stack, b, 'post', '/emails', { from: `n@${b.domain.name}`, to: `r${i}@example.com`, subject: 'Hi', text: 'Hi' })
        : await call(stack, b, 'get', '/contactBooks');
    latencies.push(performance.now() - t0);
    if (i % 2 === 0 && res.status === 200) opts.onSent?.(res.json!.emailId as string);
    if (opts.pauseMs) await sleep(opts.pauseMs);
    if (res.status !== 200) failures.push(`${i % 2 === 0 ? 'send' : 'read'}:${res.status}`);
  }
  await ready;
  return { latencies, failures, readyFailures };
}
