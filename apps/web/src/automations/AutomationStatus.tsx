import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api } from '../api/client';
import type { Automation } from '../api/types';
import { teamKey } from '../api/team-query';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { ErrorNotice } from '../ui/ErrorNotice';
import { StatusBadge } from '../ui/StatusBadge';
import { useToast } from '../ui/toast';

const LABEL: Record<string, string> = { DRAFT: 'draft', ACTIVE: 'active', PAUSED: 'paused' };

export function AutomationStatusBadge({ status }: { status: string }) {
  return <StatusBadge status={status === 'DRAFT' ? 'NOT_STARTED' : status} label={LABEL[status] ?? status.toLowerCase()} />;
}

const MOVE: Record<string, { move: 'activate' | 'pause' | 'resume'; label: string; done: string }> = {
  DRAFT: { move: 'activate', label: 'Activate', done: 'active: new events enroll contacts' },
  ACTIVE: { move: 'pause', label: 'Pause', done: 'paused: no step runs until resumed' },
  PAUSED: { move: 'resume', label: 'Resume', done: 'active again: runs go on where they were' },
};

/** The one status move the automation allows now (activate, pause or resume), and delete behind a confirmation. */
export function AutomationStatusActions({ automation, compact = false }: { automation: Automation; compact?: boolean }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const showToast = useToast();
  const navigate = useNavigate();
  const next = MOVE[automation.status];
  const refresh = () => qc.invalidateQueries({ queryKey: teamKey(team.id, 'automations') });
  const move = useMutation({
    mutationFn: () => api.post<Automation>(`${base}/v1/automations/${automation.id}/${next.move}`),
    onSuccess: async () => {
      showToast({ title: `“${automation.name}” is ${next.done}` });
      await refresh();
    },
  });
  const cls = compact ? 'btn btn-small' : 'btn';
  return (
    <span className="automation-actions">
      {next && (
        <button
          type="button"
          className={next.move === 'activate' ? `${cls} btn-primary` : cls}
          onClick={() => move.mutate()}
          disabled={move.isPending}
          aria-label={compact ? `${next.label} ${automation.name}` : undefined}
        >
          {next.label}
        </button>
      )}
      <ConfirmDialog
        trigger={
          <button type="button" className={`${cls} btn-danger`} aria-label={compact ? `Delete ${automation.name}` : undefined}>
            Delete
          </button>
        }
        title={`Delete “${automation.name}”?`}
        description={
          <p>
            Its runs stop where they are and their history is deleted with it ({automation.runs.ACTIVE} in progress). Emails already sent
            stay in the email log.
          </p>
        }
        confirmLabel="Delete automation"
        onConfirm={async () => {
          await api.delete(`${base}/v1/automations/${automation.id}`);
          showToast({ title: `“${automation.name}” deleted` });
          if (!compact) navigate(`${base}/automations`);
          await refresh();
        }}
      />
      <ErrorNotice error={move.error} />
    </span>
  );
}
