import type { CampaignStatus, CampaignWindowPlan } from '../api/types';
import { formatDateTime, formatNumber } from '../ui/format';
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

/**
 * Planned against actual per window (the server's windowPlan): what the ramp allows each window,
 * what the engine sent in it, and the windows still to come.
 */
export function WindowPlanTable({ plan, current }: { plan: CampaignWindowPlan; current: number | null }) {
  return (
    <div className="table-wrap">
      <table className="list window-plan" data-testid="window-plan">
        <caption>Per window: planned and sent</caption>
        <thead>
          <tr>
            <th scope="col">Window</th>
            <th scope="col">Planned</th>
            <th scope="col">Sent</th>
            <th scope="col">Opened</th>
          </tr>
        </thead>
        <tbody>
          {plan.rows.map((w) => (
            <tr
              key={w.number}
              aria-current={w.number === current ? 'step' : undefined}
              className={w.number === current ? 'current' : undefined}
            >
              <td>
                {w.number + 1}
                {w.number === current && <span className="muted small"> (current)</span>}
              </td>
              <td>{formatNumber(w.planned)}</td>
              <td>{w.sent === null ? <span className="muted">to come</span> : formatNumber(w.sent)}</td>
              <td>{w.openedAt ? formatDateTime(w.openedAt, true) : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {plan.more > 0 && <p className="muted small">and {formatNumber(plan.more)} more windows.</p>}
    </div>
  );
}
