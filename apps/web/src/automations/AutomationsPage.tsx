import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../api/client';
import type { Automation } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { DataTable } from '../ui/DataTable';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { formatNumber } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { useFormDialog } from '../ui/useFormDialog';
import { AutomationStatusActions, AutomationStatusBadge } from './AutomationStatus';
import { useNames } from './useNames';
import { reEntryWords, triggerWords } from './words';

// The team's automations (GET /v1/automations): name, status, trigger in words and runs by status;
// create a draft, then build it on its own page.

export default function AutomationsPage() {
  const { base } = useTeam();
  const list = useTeamQuery<{ data: Automation[] }>(['automations'], '/v1/automations', { limit: 100 });
  const { names } = useNames();
  return (
    <>
      <PageHeader
        title="Automations"
        description="Lifecycle email that runs on its own: a trigger enrolls a contact, then steps send, wait and branch for them."
        actions={<CreateAutomation />}
      />
      <ErrorNotice error={list.error} />
      {list.isPending && <Loading />}
      {list.data?.data.length === 0 && (
        <EmptyState title="No automations yet">
          <p>Create one, choose what starts it (an event your app sends, or a contact added to a book), add its steps, then activate it.</p>
        </EmptyState>
      )}
      {!!list.data?.data.length && (
        <DataTable
          caption="Automations, newest first"
          columns={[
            'Name',
            'Status',
            'Starts',
            { label: 'In progress', numeric: true },
            { label: 'Finished', numeric: true },
            { label: 'Actions', hidden: true },
          ]}
        >
          {list.data.data.map((a) => (
            <tr key={a.id}>
              <td>
                <Link to={`${base}/automations/${a.id}`}>{a.name}</Link>
                <div className="muted small">version {a.version}</div>
              </td>
              <td>
                <AutomationStatusBadge status={a.status} />
              </td>
              <td className="automation-trigger">
                {triggerWords(a.trigger, names)}
                <div className="muted small">{reEntryWords(a.reEntry)}</div>
              </td>
              <td className="num">{formatNumber(a.runs.ACTIVE)}</td>
              <td className="num">
                {formatNumber(a.runs.COMPLETED + a.runs.EXITED + a.runs.FAILED)}
                {a.runs.FAILED > 0 && <div className="small">{formatNumber(a.runs.FAILED)} failed</div>}
              </td>
              <td className="row-actions">
                <AutomationStatusActions automation={a} compact />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

/** A name and the event that starts it: a draft with one exit step, built on its page next. */
function CreateAutomation() {
  const { team, base } = useTeam();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [event, setEvent] = useState('');
  const { mutation, submit, dialog } = useFormDialog({
    mutationFn: () =>
      api.post<{ id: string }>(`${base}/v1/automations`, {
        name: name.trim(),
        trigger: { type: 'event', event: event.trim() },
        steps: [{ id: 'end', type: 'exit' }],
      }),
    toast: () => `Automation "${name.trim()}" created as a draft`,
    invalidate: [teamKey(team.id, 'automations')],
    reset: () => {
      setName('');
      setEvent('');
    },
    onSuccess: (a) => navigate(`${base}/automations/${a.id}`),
  });
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-primary">
          Create automation
        </button>
      }
      title="Create an automation"
      description="It starts as a draft: nothing runs until you activate it."
    >
      <form className="stack" onSubmit={submit()}>
        <Field label="Name" hint="For you; contacts do not see it.">
          <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" maxLength={255} />
        </Field>
        <Field
          label="Starts when this event is recorded"
          hint="e.g. user.signed_up, sent by your app (POST /api/v1/events). You can change it later."
        >
          <input value={event} onChange={(e) => setEvent(e.target.value)} required autoComplete="off" maxLength={100} />
        </Field>
        <ErrorNotice error={mutation.error} />
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" disabled={mutation.isPending}>
            {mutation.isPending ? 'Creating…' : 'Create and build'}
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
