import type { Config } from '@mailrail/platform/config/schema';
import type { Logger } from '@mailrail/platform/log/logger';
import type { SendLane } from '@mailrail/platform/queue/queues';
import type { SesSender } from './ses-sender';

// SES gives each account a sending rate per region. Each region has two send queues (lanes);
// each queue has a BullMQ limiter, which lives in Redis and is therefore shared by every worker
// replica. The region's rate is split between the lanes by a fixed share: the two limiters
// together never exceed the SES rate, and a campaign can never take more than its share, so
// transactional mail always gets the rest. The price of fixed limiters: transactional mail does
// not borrow the marketing share while no campaign runs.

export interface LaneLimit {
  max: number;
  duration: number;
}

export const DEFAULT_SES_RATE = 14;

export function splitRate(ratePerSecond: number, marketingShare: number): Record<SendLane, LaneLimit> {
  const rate = Math.max(1, Math.floor(ratePerSecond));
  if (rate < 2) {
    // One message per second cannot be split into whole messages per second: alternate instead.
    return { transactional: { max: 1, duration: 2000 }, marketing: { max: 1, duration: 2000 } };
  }
  const marketing = Math.min(rate - 1, Math.max(1, Math.round(rate * marketingShare)));
  return {
    transactional: { max: rate - marketing, duration: 1000 },
    marketing: { max: marketing, duration: 1000 },
  };
}

/** Messages per second per region: SES_RATE_LIMIT, else the account's SES quota, else 14. */
export async function resolveRegionRates(
  config: Pick<Config, 'SES_RATE_LIMIT' | 'sesRegions'>,
  ses: SesSender,
  log: Logger,
): Promise<Map<string, number>> {
  const rates = new Map<string, number>();
  for (const region of config.sesRegions) {
    if (config.SES_RATE_LIMIT > 0) {
      rates.set(region, config.SES_RATE_LIMIT);
      continue;
    }
    const quota = await ses.getMaxSendRate(region);
    rates.set(region, quota ?? DEFAULT_SES_RATE);
    log.info({ region, rate: quota ?? DEFAULT_SES_RATE, source: quota ? 'ses-account' : 'default' }, 'SES sending rate');
  }
  return rates;
}
