import type { Counts, OutcomeRates } from '../api/types';
import { formatPercent } from './format';

/** The rate shown under each count (computed by the server, packages/domain/src/reputation/rates.ts). */
const RATE_OF: Partial<Record<keyof Counts, { key: keyof OutcomeRates; of: string }>> = {
  delivered: { key: 'deliveryRate', of: 'of sent' },
  bounced: { key: 'bounceRate', of: 'of sent' },
  complained: { key: 'complaintRate', of: 'of sent' },
  opened: { key: 'openRate', of: 'of delivered' },
  clicked: { key: 'clickRate', of: 'of delivered' },
};

/** "96.0 % of sent" under a count (the number only on phones); nothing for counts without a rate (sent, unsubscribed). */
export function OutcomeRate({ figure, rates }: { figure: string; rates: OutcomeRates }) {
  const rate = RATE_OF[figure as keyof Counts];
  if (!rate) return null;
  const value = rates[rate.key];
  return (
    <span className="figure-rate" data-testid={`rate-${figure}`}>
      {formatPercent(value, value > 0 && value < 1 ? 2 : 1)}
      <span className="figure-rate-of"> {rate.of}</span>
    </span>
  );
}
