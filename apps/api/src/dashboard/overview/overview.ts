import type { ApiDeps } from '../../deps';
import type { AuthContext } from '../../http/auth';
import { emailTimeSeries, reputationMetrics } from '../../analytics/analytics';

// SES's account-level review thresholds, in percent: at `review` SES puts the account under
// review, at `pause` it may pause sending (SES developer guide, "Sending review process").
export const SES_THRESHOLDS = {
  bounceRate: { review: 5, pause: 10 },
  complaintRate: { review: 0.1, pause: 0.5 },
} as const;

/** The Overview page in one answer, from the same figures as /v1/analytics. */
export async function overview(deps: ApiDeps, auth: AuthContext) {
  const [series, reputation] = await Promise.all([emailTimeSeries(deps, auth, { days: 30 }), reputationMetrics(deps, auth, {})]);
  const { date: _today, ...today } = series.result[series.result.length - 1];
  return { today, last30Days: series.totalCounts, series: series.result, reputation, thresholds: SES_THRESHOLDS };
}
