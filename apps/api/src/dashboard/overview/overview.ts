import type { ApiDeps } from '../../deps';
import type { AuthContext } from '../../http/auth';
import { SES_THRESHOLDS, outcomeRates } from '@mailrail/domain/reputation/rates';
import { emailTimeSeries, reputationMetrics } from '../../analytics/analytics';

/** The Overview page in one answer, from the same figures as /v1/analytics. */
export async function overview(deps: ApiDeps, auth: AuthContext) {
  const [series, reputation] = await Promise.all([emailTimeSeries(deps, auth, { days: 30 }), reputationMetrics(deps, auth, {})]);
  const { date: _today, ...today } = series.result[series.result.length - 1];
  return {
    today,
    todayRates: outcomeRates(today),
    last30Days: series.totalCounts,
    last30DaysRates: series.totalRates,
    series: series.result,
    reputation,
    thresholds: SES_THRESHOLDS,
  };
}
