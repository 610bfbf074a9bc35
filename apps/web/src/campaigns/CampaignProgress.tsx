import type { CampaignStatus } from '../api/types';
import { formatNumber } from '../ui/format';
import { StatusBadge } from '../ui/StatusBadge';

const TONE: Record<CampaignStatus, string> = { DRAFT: 'QUEUED', SCHEDULED: 'PENDING', RUNNING: 'SENT', PAUSED: 'PAUSED', SENT: 'SUCCESS' };

export function CampaignStatusBadge({ status }: { status: CampaignStatus }) {
  return <StatusBadge status={TONE[status]} label={status.toLowerCase()} />;
}

/** sent / total as a native <progress> (announced as a percentage) with the figures beside it. */
export function CampaignProgress({ sent, total, label, wide = false }: { sent: number; total: number; label: string; wide?: boolean }) {
  const pct = total > 0 ? Math.min(100, Math.floor((sent / total) * 100)) : 0;
  return (
    <span className={wide ? 'campaign-progress campaign-progress-wide' : 'campaign-progress'}>
      <progress max={Math.max(total, 1)} value={Math.min(sent, Math.max(total, 1))} aria-label={label} />
      <span className="small" data-testid="progress-text">
        {total > 0 ? `${formatNumber(sent)} / ${formatNumber(total)} (${pct} %)` : '—'}
      </span>
    </span>
  );
}
