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

export interface WindowPlanRow {
  /** 0-based, as the engine numbers windows. */
  number: number;
  /** Emails the window may send: as stored when it opened, else as the ramp sizes it. */
  planned: number;
  /** Emails the engine wrote in it; null for a window not opened yet. */
  sent: number | null;
  openedAt: string | null;
}

/** At most this many rows are listed; the rest are counted (a 1-per-window plan of a big book). */
export const MAX_WINDOW_PLAN_ROWS = 60;

/**
 * Planned against actual per window: the windows opened (their stored size and what they sent),
 * then the windows still to come, sized by the ramp, until the plan covers `toSend` emails.
 */
export function windowPlan(
  c: { ramp: Ramp | null; batchSize: number },
  opened: { number: number; size: number; queued: number; openedAt: Date }[],
  toSend: number,
): { rows: WindowPlanRow[]; more: number } {
  // An opened window plans what it could take of the audience left when it opened, as a window to
  // come does: the last one of a ramp reads "7 planned, 7 sent", not "12 planned, 7 sent".
  let left = toSend;
  const rows: WindowPlanRow[] = opened.map((w) => {
    const row = { number: w.number, planned: Math.max(0, Math.min(w.size, left)), sent: w.queued, openedAt: w.openedAt.toISOString() };
    left -= w.queued;
    return row;
  });
  let k = opened.length ? opened[opened.length - 1].number + 1 : 0;
  let more = 0;
  while (left > 0) {
    const size = windowSizeFor(c.ramp, c.batchSize, k);
    if (rows.length >= MAX_WINDOW_PLAN_ROWS) {
      // Past the listed rows, counted: once the ramp has reached batchSize every window is that size.
      if (size >= c.batchSize) {
        more += Math.ceil(left / c.batchSize);
        break;
      }
      more++;
    } else {
      rows.push({ number: k, planned: Math.min(size, left), sent: null, openedAt: null });
    }
    left -= size;
    k++;
  }
  return { rows, more };
}
