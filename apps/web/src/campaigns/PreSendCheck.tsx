import type { CampaignPreSendCheck } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { ErrorNotice } from '../ui/ErrorNotice';
import { formatNumber } from '../ui/format';
import { Loading } from '../ui/Loading';

/**
 * The server's pre-send check, as the send dialog shows it: who gets the campaign, then what
 * blocks sending (errors) and what is only advice (warnings). The rules are the server's
 * (GET /v1/campaigns/{id}/check); this only words the answer.
 */
export function usePreSendCheck(campaignId: string, enabled: boolean) {
  return useTeamQuery<CampaignPreSendCheck>(['campaigns', campaignId, 'check'], `/v1/campaigns/${campaignId}/check`, undefined, {
    enabled,
    // Asked afresh each time the dialog opens: the book and the suppression list move.
    staleTime: 0,
    gcTime: 0,
  });
}

export function PreSendCheckPanel({ check }: { check: ReturnType<typeof usePreSendCheck> }) {
  if (check.isPending) return <Loading />;
  if (check.error) return <ErrorNotice error={check.error} />;
  const { audience: a, problems } = check.data;
  const errors = problems.filter((p) => p.severity === 'error');
  const warnings = problems.filter((p) => p.severity === 'warning');
  return (
    <section className="stack presend" aria-labelledby="presend-h" data-testid="presend-check">
      <h3 id="presend-h">Before sending</h3>
      <p data-testid="presend-audience">
        <strong>{formatNumber(a.recipients)}</strong> {a.recipients === 1 ? 'person gets' : 'people get'} this campaign
        {a.fixed
          ? ' (its recipients were fixed when it started)'
          : a.segmentId
            ? ' (the subscribed contacts of its segment'
            : ' (the subscribed contacts of its book'}
        {!a.fixed && (
          <>
            {a.suppressed > 0 && `, minus ${formatNumber(a.suppressed)} on the suppression list`}
            {a.unsubscribed > 0 && `; ${formatNumber(a.unsubscribed)} unsubscribed ${a.unsubscribed === 1 ? 'is' : 'are'} left out`})
          </>
        )}
        .
      </p>
      {errors.length > 0 && (
        <div className="notice notice-error" role="alert" data-testid="presend-errors">
          <p>
            <strong>{errors.length === 1 ? 'One problem blocks sending' : `${errors.length} problems block sending`}:</strong>
          </p>
          <ul>
            {errors.map((p) => (
              <li key={p.rule + p.message}>{p.message}</li>
            ))}
          </ul>
        </div>
      )}
      {warnings.length > 0 && (
        <div className="notice notice-warn" data-testid="presend-warnings">
          <p>
            <strong>
              {warnings.length === 1
                ? 'Worth a look (does not block sending)'
                : `${warnings.length} things worth a look (they do not block sending)`}
              :
            </strong>
          </p>
          <ul>
            {warnings.map((p) => (
              <li key={p.rule + p.message}>{p.message}</li>
            ))}
          </ul>
        </div>
      )}
      {problems.length === 0 && (
        <p className="notice notice-info" data-testid="presend-ok">
          Sender domain verified, subject and preview text set, unsubscribe link present, no starter text, every variable has values.
        </p>
      )}
    </section>
  );
}
