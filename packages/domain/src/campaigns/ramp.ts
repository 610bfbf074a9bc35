// Gradual sending (warm-up): a campaign with a ramp sends `start` emails in its first window and
// `factor` times more in each next one, up to batchSize. One definition, used by the engine to size
// a window when it opens and by the API to show the plan.

export interface Ramp {
  start: number;
  factor: number;
}

export const RAMP_LIMITS = { startMin: 1, startMax: 100_000, factorMin: 1.1, factorMax: 10 } as const;

/** The ramp stored on a campaign row (both columns set), or null. */
export function rampOf(c: { rampStart: number | null; rampFactor: number | null }): Ramp | null {
  return c.rampStart !== null && c.rampFactor !== null ? { start: c.rampStart, factor: c.rampFactor } : null;
}

/**
 * Emails window `k` (0-based) may send: min(batchSize, floor(start * factor^k)); batchSize without
 * a ramp. A pure function of stored values, so every replica and every replay agrees on it.
 */
export function windowSizeFor(ramp: Ramp | null, batchSize: number, k: number): number {
  if (!ramp) return batchSize;
  const grown = Math.floor(ramp.start * Math.pow(ramp.factor, k));
  // factor^k overflows to Infinity long after it passed batchSize: min() still answers batchSize.
  return Math.max(1, Math.min(batchSize, grown));
}
