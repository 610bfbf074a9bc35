import { useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api } from '../api/client';
import type { CampaignDetail } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { ErrorNotice } from '../ui/ErrorNotice';
import { formatDateTime, formatNumber, formatRelative } from '../ui/format';
import { Loading } from '../ui/Loading';
import { OutcomeRate } from '../ui/OutcomeRate';
import { PageHeader } from '../ui/PageHeader';
import { useToast } from '../ui/toast';
import { CampaignEditor } from './CampaignEditor';
import { CampaignProgress, CampaignStatusBadge, WindowPlanTable } from './CampaignProgress';
import { CampaignRecipients, skippedSentence } from './CampaignRecipients';
import { ScheduleDialog } from './ScheduleDialog';

const LIVE = new Set(['RUNNING', 'SCHEDULED']);
const EDITABLE = new Set(['DRAFT', 'SCHEDULED']);

const FIGURES = [
  { key: 'sent', label: 'Sent' },
  { key: 'delivered', label: 'Delivered' },
  { key: 'opened', label: 'Opened' },
  { key: 'clicked', label: 'Clicked' },
  { key: 'bounced', label: 'Bounced' },
  { key: 'complained', label: 'Complained' },
  { key: 'unsubscribed', label: 'Unsubscribed' },
] as const;

export default function CampaignPage() {
  const { team, base } = useTeam();
  const campaignId = useParams().campaignId!;
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  // Polled every 2 s while it runs or waits to start: the figures and the window move on their own.
  const campaign = useTeamQuery<CampaignDetail>(['campaigns', campaignId], `/v1/campaigns/${campaignId}`, undefined, {
    refetchInterval: (q) => (LIVE.has((q.state.data as CampaignDetail | undefined)?.status ?? '') ? 2000 : false),
  });
  const refresh = () => qc.invalidateQueries({ queryKey: teamKey(team.id, 'campaigns') });
  const action = (verb: 'pause' | 'resume') => async () => {
    try {
      await api.post(`${base}/v1/campaigns/${campaignId}/${verb}`);
      toast({ title: verb === 'pause' ? 'Campaign paused' : 'Campaign resumed' });
    } catch (err) {
      toast({ title: `Could not ${verb}`, description: (err as Error).message, error: true });
    }
    await refresh();
  };
  const c = campaign.data;
  return (
    <>
      <p className="breadcrumb">
        <Link to={`${base}/campaigns`}>Campaigns</Link>
      </p>
      <ErrorNotice error={campaign.error} />
      {campaign.isPending && <Loading />}
      {c && (
        <>
          <PageHeader
            title={c.name}
            description={
              <>
                <CampaignStatusBadge status={c.status} />{' '}
                {c.scheduledAt && c.status === 'SCHEDULED' && (
                  <>
                    starts {formatDateTime(c.scheduledAt)} ({formatRelative(c.scheduledAt)})
                  </>
                )}
              </>
            }
            actions={
              <>
                {(c.status === 'DRAFT' || c.status === 'SCHEDULED' || c.status === 'PAUSED') && <ScheduleDialog campaign={c} />}
                {(c.status === 'RUNNING' || c.status === 'SCHEDULED') && (
                  <button type="button" className="btn" onClick={action('pause')}>
                    Pause
                  </button>
                )}
                {c.status === 'PAUSED' && (
                  <button type="button" className="btn btn-primary" onClick={action('resume')}>
                    Resume
                  </button>
                )}
                {c.status !== 'RUNNING' && (
                  <ConfirmDialog
                    trigger={
                      <button type="button" className="btn btn-danger">
                        Delete
                      </button>
                    }
                    title={`Delete the campaign "${c.name}"?`}
                    description={<p>Emails already sent stay in the log. This cannot be undone.</p>}
                    confirmLabel="Delete campaign"
                    onConfirm={async () => {
                      await api.delete(`${base}/v1/campaigns/${c.id}`);
                      toast({ title: `Campaign "${c.name}" deleted` });
                      await refresh();
                      navigate(`${base}/campaigns`);
                    }}
                  />
                )}
              </>
            }
          />
          {c.status === 'PAUSED' && (
            <p className="notice notice-info" data-testid="paused-choices">
              Paused. <strong>Resume</strong> goes on where it stopped: now, or at its scheduled time if that is still ahead.{' '}
              <strong>Reschedule</strong> picks a new time to go on from; nothing more is sent before it. Either way no one gets the email
              twice.
            </p>
          )}
          {c.status !== 'DRAFT' && <Progress campaign={c} />}
          {c.recipientOutcomes && <CampaignRecipients campaign={c} live={LIVE.has(c.status)} />}
          {/* `total` is written when the recipients are fixed (the start); from then on PATCH answers 409,
              also for a campaign paused and scheduled again, so the editor is read-only. */}
          <CampaignEditor key={c.id} campaign={c} readOnly={!EDITABLE.has(c.status) || c.total > 0} />
        </>
      )}
    </>
  );
}

function Progress({ campaign: c }: { campaign: CampaignDetail }) {
  return (
    <section className="card" aria-labelledby="progress-h">
      <div className="section-head">
        <h2 id="progress-h">Progress</h2>
        {c.status === 'RUNNING' && <span className="muted small">Updates every 2 seconds</span>}
      </div>
      <CampaignProgress sent={c.sent} total={c.total} label="Sent of all recipients" wide />
      {c.recipientOutcomes && <Outcomes outcomes={c.recipientOutcomes} />}
      {/* Seven figures scroll sideways on a phone: focusable, so the keyboard can scroll them too. */}
      <table className="figures campaign-figures" tabIndex={0}>
        <caption className="visually-hidden">Campaign figures</caption>
        <thead>
          <tr>
            {FIGURES.map((f) => (
              <th key={f.key} scope="col">
                {f.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr>
            {FIGURES.map((f) => (
              <td key={f.key} data-testid={`figure-${f.key}`}>
                {formatNumber(c[f.key])}
                <OutcomeRate figure={f.key} rates={c.rates} />
              </td>
            ))}
          </tr>
        </tbody>
      </table>
      <p className="small">
        {c.window ? (
          <>
            {c.status === 'SENT' ? 'Last window' : 'Window'} {c.window.number + 1}: up to {formatNumber(c.window.size)} emails, started{' '}
            {formatDateTime(c.window.startedAt, true)}
            {/* Only a running campaign opens another window; a paused one waits for Resume. */}
            {c.status === 'RUNNING' && <>; the next one {formatRelative(c.window.nextAt)}</>}.
          </>
        ) : (
          <span className="muted">No window started yet.</span>
        )}{' '}
        Batch size {formatNumber(c.batchSize)}
        {c.batchWindowMinutes > 0 ? ` every ${c.batchWindowMinutes} min` : ', no pause between windows'}
        {c.ramp && `, ramp from ${formatNumber(c.ramp.start)} ×${c.ramp.factor} per window`}.
      </p>
      {c.windowPlan && <WindowPlanTable plan={c.windowPlan} current={c.status === 'RUNNING' ? (c.window?.number ?? null) : null} />}
    </section>
  );
}

/** Where every recipient is: the skipped ones in words, so the figures add up to the total. */
function Outcomes({ outcomes: o }: { outcomes: NonNullable<CampaignDetail['recipientOutcomes']> }) {
  const skipped = skippedSentence(o);
  return (
    <p className="small" data-testid="recipient-outcomes">
      {skipped ?? (o.inProgress > 0 ? 'None skipped so far.' : 'Every recipient was sent to.')}
      {o.inProgress > 0 && ` ${formatNumber(o.inProgress)} still to send.`}
    </p>
  );
}
