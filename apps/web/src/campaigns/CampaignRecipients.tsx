import { useState } from 'react';
import { Link } from 'react-router';
import { CAMPAIGN_RECIPIENT_OUTCOMES, type CampaignRecipientCounts } from '@mailrail/domain/campaigns/recipient-outcomes';
import type { Campaign, CampaignRecipientsPage } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { DataTable } from '../ui/DataTable';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatNumber } from '../ui/format';
import { Loading } from '../ui/Loading';
import { CursorPager } from '../ui/Pager';
import { StatusBadge } from '../ui/StatusBadge';

// What became of a campaign's recipients (GET /v1/campaigns/{id} `recipientOutcomes` and
// GET /v1/campaigns/{id}/recipients): the skipped ones said in words, and every recipient listed.

/** Why a recipient was not sent to, as the end of "N ___". */
const SKIPPED_BECAUSE: Record<keyof CampaignRecipientCounts['skippedByReason'], string> = {
  HARD_BOUNCE: 'suppressed after a hard bounce',
  COMPLAINT: 'suppressed after a spam complaint',
  MANUAL: 'suppressed by hand',
  UNSUBSCRIBED: 'unsubscribed after the campaign started',
  CONTACT_DELETED: 'deleted from the contact book after the campaign started',
  FAILED: 'failed to send',
  REJECTED: 'rejected by SES',
  RENDERING_FAILURE: 'could not be rendered',
  CANCELLED: 'cancelled',
  UNKNOWN: 'not sent for a reason not recorded',
};

/** One recipient's reason, as a sentence. */
const REASON_TEXT: Record<string, string> = {
  HARD_BOUNCE: 'On your suppression list: an earlier email to it bounced permanently.',
  COMPLAINT: 'On your suppression list: its owner marked an earlier email as spam.',
  MANUAL: 'On your suppression list: added by hand or through the API.',
  UNSUBSCRIBED: 'The contact unsubscribed after the campaign started.',
  CONTACT_DELETED: 'The contact was deleted after the campaign started.',
  FAILED: 'The email could not be sent.',
  REJECTED: 'SES rejected the email.',
  RENDERING_FAILURE: 'SES could not render the email.',
  CANCELLED: 'The email was cancelled.',
};

/** "2 not sent: 1 suppressed after a hard bounce, 1 unsubscribed after the campaign started." */
export function skippedSentence(o: CampaignRecipientCounts): string | null {
  const skipped = o.suppressed + o.unsubscribed + o.failed;
  if (skipped === 0) return null;
  const parts = (Object.keys(SKIPPED_BECAUSE) as (keyof typeof SKIPPED_BECAUSE)[])
    .filter((r) => o.skippedByReason[r] > 0)
    .map((r) => `${formatNumber(o.skippedByReason[r])} ${SKIPPED_BECAUSE[r]}`);
  return `${formatNumber(skipped)} not sent: ${parts.join(', ')}.`;
}

const OUTCOME_TONE: Record<string, string> = {
  pending: 'QUEUED',
  sent: 'SENT',
  delivered: 'DELIVERED',
  bounced: 'BOUNCED',
  complained: 'COMPLAINED',
  suppressed: 'SUPPRESSED',
  unsubscribed: 'CANCELLED',
  failed: 'FAILED',
};

/** Every recipient of the campaign with its outcome, filtered by outcome, 50 per page. */
export function CampaignRecipients({ campaign: c, live }: { campaign: Campaign; live: boolean }) {
  const { base } = useTeam();
  const [outcome, setOutcome] = useState('');
  // Keyset paging: the server gives the next page's start; "Previous" walks back the ones followed.
  const [afters, setAfters] = useState<string[]>([]);
  const after = afters.at(-1);
  const page = useTeamQuery<CampaignRecipientsPage>(
    ['campaigns', c.id, 'recipients'],
    `/v1/campaigns/${c.id}/recipients`,
    { outcome: outcome || undefined, after, limit: 50 },
    { refetchInterval: live && !after ? 2000 : false, placeholderData: (prev) => prev },
  );
  return (
    <section className="card" aria-labelledby="recipients-h">
      <div className="section-head">
        <h2 id="recipients-h">Recipients</h2>
      </div>
      <div className="filters">
        <Field label="Outcome">
          <select
            value={outcome}
            onChange={(e) => {
              setAfters([]);
              setOutcome(e.target.value);
            }}
          >
            <option value="">Any outcome</option>
            {CAMPAIGN_RECIPIENT_OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNotice error={page.error} />
      {page.isPending && <Loading />}
      {page.data && page.data.recipients.length === 0 && (
        <p className="muted">
          {outcome ? 'No recipient has this outcome.' : 'No recipients yet: they are fixed when the campaign starts.'}
        </p>
      )}
      {page.data && page.data.recipients.length > 0 && (
        <DataTable caption="Recipients of the campaign and what became of each" columns={['Recipient', 'Outcome', 'Why', 'Email']}>
          {page.data.recipients.map((r) => (
            <tr key={r.contactId}>
              <td className="truncate">{r.email}</td>
              <td>
                <StatusBadge status={OUTCOME_TONE[r.outcome]} label={r.outcome} />
              </td>
              <td>
                {r.reason ? (
                  <>
                    {REASON_TEXT[r.reason] ?? r.reason}
                    {r.outcome === 'suppressed' && (
                      <>
                        {' '}
                        <Link to={`${base}/suppressions`}>Suppression list</Link>
                      </>
                    )}
                  </>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
              <td>
                {r.emailId ? (
                  <Link to={`${base}/emails/${r.emailId}`} aria-label={`View the email to ${r.email}`}>
                    View
                  </Link>
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <CursorPager
        page={afters.length + 1}
        hasNext={!!page.data?.nextAfter}
        onPrevious={() => setAfters((a) => a.slice(0, -1))}
        onNext={() => setAfters((a) => [...a, page.data!.nextAfter!])}
        label="Recipient"
      />
    </section>
  );
}
