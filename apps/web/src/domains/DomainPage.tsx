import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api } from '../api/client';
import type { Domain, DomainVerifyStarted } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { ErrorNotice } from '../ui/ErrorNotice';
import { LabelledSwitch } from '../ui/LabelledSwitch';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { DomainStatusBadge } from '../ui/StatusBadge';
import { useToast } from '../ui/toast';
import { DnsProviderGuide } from './DnsProviderGuide';
import { DnsRecordsTable } from './DnsRecordsTable';
import { VerificationState } from './VerificationState';

export default function DomainPage() {
  const { team, base } = useTeam();
  const { domainId = '' } = useParams();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const rel = `/v1/domains/${encodeURIComponent(domainId)}`;
  const path = `${base}${rel}`;
  // While a check runs the status changes on its own: poll until it is done.
  const domain = useTeamQuery<Domain>(['domain', domainId], rel, undefined, {
    refetchInterval: (q) => (q.state.data?.isVerifying ? 2000 : false),
  });
  const refresh = () => qc.invalidateQueries({ queryKey: teamKey(team.id) });
  const checkNow = useMutation({
    mutationFn: () => api.put<DomainVerifyStarted>(`${path}/verify`),
    onSuccess: (r) => (toast({ title: r.message }), refresh()),
  });
  const setTracking = useMutation({
    mutationFn: (change: Partial<Pick<Domain, 'clickTracking' | 'openTracking'>>) => api.patch<Domain>(path, change),
    onSuccess: (d) => {
      qc.setQueryData(['team', team.id, 'domain', domainId, null], d);
      toast({ title: 'Tracking saved' });
      return refresh();
    },
  });
  const d = domain.data;
  return (
    <>
      <p className="breadcrumb">
        <Link to={`${base}/domains`}>← Domains</Link>
      </p>
      <ErrorNotice error={domain.error} />
      {domain.isPending && <Loading />}
      {d && (
        <>
          <PageHeader
            title={d.name}
            description={
              <>
                <DomainStatusBadge status={d.status} /> in {d.region}
              </>
            }
            actions={
              <ConfirmDialog
                trigger={
                  <button type="button" className="btn btn-danger">
                    Delete domain
                  </button>
                }
                title={`Delete ${d.name}?`}
                description={
                  <p>
                    Emails can no longer be sent from {d.name}, and API keys bound to it stop working. Its DNS records can be removed
                    afterwards.
                  </p>
                }
                confirmLabel="Delete domain"
                onConfirm={async () => {
                  await api.delete(path);
                  toast({ title: `${d.name} deleted` });
                  navigate(`${base}/domains`);
                  await refresh();
                }}
              />
            }
          />
          <section className="card" aria-labelledby="verify-h">
            <h2 id="verify-h">Verification</h2>
            <VerificationState domain={d} />
            <button type="button" className="btn" onClick={() => checkNow.mutate()} disabled={checkNow.isPending || d.isVerifying}>
              {d.isVerifying ? 'Checking…' : 'Check now'}
            </button>
            <ErrorNotice error={checkNow.error} />
          </section>
          <section className="card" aria-labelledby="dns-h">
            <h2 id="dns-h">DNS records</h2>
            <DnsRecordsTable records={d.dnsRecords} />
          </section>
          <section className="card" aria-labelledby="providers-h">
            <h2 id="providers-h">Where to add them</h2>
            <DnsProviderGuide domain={d} />
          </section>
          <section className="card" aria-labelledby="tracking-h">
            <h2 id="tracking-h">Tracking</h2>
            <p className="muted">Opens are counted with an invisible image, clicks by sending links through a redirect.</p>
            <LabelledSwitch
              label="Track opens"
              checked={d.openTracking}
              disabled={setTracking.isPending}
              onChange={(v) => setTracking.mutate({ openTracking: v })}
            />
            <LabelledSwitch
              label="Track clicks"
              checked={d.clickTracking}
              disabled={setTracking.isPending}
              onChange={(v) => setTracking.mutate({ clickTracking: v })}
            />
            <ErrorNotice error={setTracking.error} />
          </section>
        </>
      )}
    </>
  );
}
