import { Link, useParams } from 'react-router';
import type { Automation } from '../api/types';
import { useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { formatNumber } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { AutomationStatusActions, AutomationStatusBadge } from './AutomationStatus';
import { DryRun } from './DryRun';
import { FlowEditor } from './FlowEditor';
import { RunsList } from './RunsList';

// One automation: its status and moves, the builder with per-step counts, its runs and a dry run.

export default function AutomationPage() {
  const { base } = useTeam();
  const automationId = useParams().automationId!;
  const query = useTeamQuery<Automation>(['automations', automationId], `/v1/automations/${encodeURIComponent(automationId)}`);
  const a = query.data;
  return (
    <>
      <p className="breadcrumb">
        <Link to={`${base}/automations`}>← Automations</Link>
      </p>
      <ErrorNotice error={query.error} />
      {query.isPending && <Loading />}
      {a && (
        <>
          <PageHeader
            title={a.name}
            description={
              <>
                <AutomationStatusBadge status={a.status} /> Version {a.version} · {formatNumber(a.runs.ACTIVE)} in progress ·{' '}
                {formatNumber(a.runs.COMPLETED)} completed · {formatNumber(a.runs.EXITED)} exited · {formatNumber(a.runs.FAILED)} failed
              </>
            }
            actions={<AutomationStatusActions automation={a} />}
          />
          {a.status === 'DRAFT' && (
            <p className="notice notice-info">
              A draft: nothing runs until you activate it. Only events recorded after activation enroll contacts.
            </p>
          )}
          {a.status === 'PAUSED' && (
            <p className="notice notice-warn">Paused: no step runs and nobody enters. On resume, runs go on where they were.</p>
          )}
          <FlowEditor key={a.id} automation={a} />
          <RunsList automation={a} />
          <DryRun automation={a} />
        </>
      )}
    </>
  );
}
