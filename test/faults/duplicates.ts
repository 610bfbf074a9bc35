// Duplicates under worker kills. SES has no idempotency token: a message SES accepted just before a
// SIGKILL, whose answer the dead worker never recorded, is sent again once its lease expires. Such a
// duplicate is explained when its two copies fall in different worker lives; two copies within one
// worker's life (or a third copy) are a bug.
import { sleep, type Stack } from './stack';

export interface Kill {
  at: number;
  /**
   * No worker runs between `at` and `settledAt`: requests the dead worker had already written are
   * read by the fake SES (in this process) during that pause, so a message accepted up to
   * `settledAt` belongs to the killed worker's life even when it is accepted after `at`.
   */
  settledAt: number;
}

/**
 * SIGKILLs the stack's worker and waits for its last requests to reach the fake SES. `atKill`
 * runs right after the process is gone, before that pause (to look at what it left behind).
 */
export async function killWorker(stack: Stack, atKill?: () => Promise<void>): Promise<Kill> {
  const at = Date.now();
  await stack.killWorker('SIGKILL');
  await atKill?.();
  await sleep(1000);
  return { at, settledAt: Date.now() };
}

export interface DuplicateCounts {
  /** Second copies sent by a later worker after the killed one never recorded SES's answer. */
  inFlight: number;
  /** Every other extra copy. */
  other: number;
  /** Widest time from SES accepting the first copy to the kill, among the explained ones. */
  widestGapMs: number;
  /** For a failing line: a few unexplained copies' times relative to the first kill. */
  sample: string;
}

/** `copies`: for each email or recipient, the times SES accepted a message for it, in order. */
export function classifyDuplicates(copies: Iterable<number[]>, kills: Kill[]): DuplicateCounts {
  const counts: DuplicateCounts = { inFlight: 0, other: 0, widestGapMs: 0, sample: '' };
  const unexplained: number[][] = [];
  for (const times of copies) {
    if (times.length < 2) continue;
    const [t1, t2] = times;
    const kill = kills.find((k) => t1 <= k.settledAt && k.settledAt < t2);
    if (times.length === 2 && kill !== undefined) {
      counts.inFlight++;
      counts.widestGapMs = Math.max(counts.widestGapMs, kill.at - t1);
    } else {
      counts.other += times.length - 1;
      unexplained.push(times);
    }
  }
  if (unexplained.length) {
    const t0 = kills[0]?.at ?? 0;
    counts.sample = ` unexplained_sample=${JSON.stringify(unexplained.slice(0, 5).map((ts) => ts.map((t) => t - t0)))} kills=${JSON.stringify(kills.map((k) => [k.at - t0, k.settledAt - t0]))}`;
  }
  return counts;
}
