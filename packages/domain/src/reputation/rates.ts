// Every rate mailrail shows, computed here only: the overview, analytics, campaign pages, the API
// and the worker's reputation alerts call these. Percentages; 0 when the denominator is 0.

/**
 * SES's account-level thresholds, in percent of sent mail: at `review` SES puts the account under
 * review, at `pause` it may pause sending (SES developer guide, "Reputation dashboard messages";
 * docs/events.md "Reputation window and alerts").
 */
export const SES_THRESHOLDS = {
  bounceRate: { review: 5, pause: 10 },
  complaintRate: { review: 0.1, pause: 0.5 },
} as const;

/** The recent window reputation is judged over: the last 7 UTC days, today included. */
export const REPUTATION_WINDOW_DAYS = 7;

export interface OutcomeCounts {
  sent: number;
  delivered: number;
  opened: number;
  clicked: number;
  bounced: number;
  complained: number;
}

export interface OutcomeRates {
  deliveryRate: number;
  openRate: number;
  clickRate: number;
  bounceRate: number;
  complaintRate: number;
}

export const percentOf = (part: number, whole: number): number => (whole > 0 ? (part / whole) * 100 : 0);

/** SES's denominators: delivery, bounces and complaints over sent; opens and clicks over delivered. */
export function outcomeRates(c: OutcomeCounts): OutcomeRates {
  return {
    deliveryRate: percentOf(c.delivered, c.sent),
    openRate: percentOf(c.opened, c.delivered),
    clickRate: percentOf(c.clicked, c.delivered),
    bounceRate: percentOf(c.bounced, c.sent),
    complaintRate: percentOf(c.complained, c.sent),
  };
}

export type ReputationLevel = 'healthy' | 'review' | 'pause';
const LEVEL_RANK: Record<ReputationLevel, number> = { healthy: 0, review: 1, pause: 2 };

/** Where a rate stands against one of SES_THRESHOLDS. */
export function reputationLevel(rate: number, thresholds: { review: number; pause: number }): ReputationLevel {
  return rate >= thresholds.pause ? 'pause' : rate >= thresholds.review ? 'review' : 'healthy';
}

/** True when `now` is a higher level than the one last alerted (a crossing upward). */
export const crossedUpward = (lastAlerted: ReputationLevel, now: ReputationLevel): boolean => LEVEL_RANK[now] > LEVEL_RANK[lastAlerted];
