import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api/client';
import type { CreatedWebhook, Domain, Webhook, WebhookList } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { useFormDialog } from '../ui/useFormDialog';
import { formatRelative } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { StatusBadge } from '../ui/StatusBadge';
import { EventAndDomainFilters } from './EventAndDomainFilters';
import { SecretOnce } from './SecretOnce';
import { DataTable } from '../ui/DataTable';

export default function WebhooksPage() {
  const { base } = useTeam();
  const hooks = useTeamQuery<WebhookList>(['webhooks'], '/v1/webhooks');
  const domains = useTeamQuery<Domain[]>(['domains'], '/v1/domains');
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="mailrail posts email and domain events to your endpoints, signed with a secret."
        actions={<CreateWebhook domains={domains.data ?? []} />}
      />
      <ErrorNotice error={hooks.error} />
      <ErrorNotice error={domains.error} prefix="The domains could not be loaded" />
      {hooks.isPending && <Loading />}
      {hooks.data?.data.length === 0 && (
        <EmptyState title="No webhooks yet">
          <p>Add an endpoint to hear about deliveries, bounces, complaints, opens and clicks as they happen.</p>
          <CreateWebhook domains={domains.data ?? []} />
        </EmptyState>
      )}
      {!!hooks.data?.data.length && (
        <DataTable caption="Webhook endpoints" columns={['Endpoint', 'Status', 'Events', 'Last success', 'Last failure']}>
          {hooks.data.data.map((w) => (
            <tr key={w.id}>
              <td className="truncate">
                <Link to={`${base}/webhooks/${w.id}`}>{w.url}</Link>
                {w.description && <div className="muted small">{w.description}</div>}
              </td>
              <td>
                <StatusBadge status={w.enabled ? w.status : 'PAUSED'} />
              </td>
              <td>{w.events.length ? `${w.events.length} selected` : 'all'}</td>
              <td>{formatRelative(w.lastSuccessAt)}</td>
              <td>{formatRelative(w.lastFailureAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

function CreateWebhook({ domains }: { domains: Domain[] }) {
  const { team, base } = useTeam();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<Webhook['events']>([]);
  const [domainIds, setDomainIds] = useState<number[]>([]);
  const {
    mutation: create,
    submit,
    close,
    dialog,
  } = useFormDialog({
    mutationFn: () =>
      api.post<CreatedWebhook>(`${base}/v1/webhooks`, {
        url: url.trim(),
        description: description.trim() || null,
        events,
        domainIds,
      }),
    invalidate: [teamKey(team.id, 'webhooks')],
    keepOpen: true, // the signing secret is shown once, in the dialog
    reset: () => {
      setUrl('');
      setDescription('');
      setEvents([]);
      setDomainIds([]);
    },
  });
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-primary">
          Add webhook
        </button>
      }
      title={create.data ? 'Webhook created' : 'Add a webhook'}
    >
      {create.data ? (
        <div className="stack">
          <SecretOnce secret={create.data.secret} />
          <div className="dialog-actions">
            <Link className="btn" to={`${base}/webhooks/${create.data.id}`} onClick={close}>
              Open the webhook
            </Link>
            <button type="button" className="btn btn-primary" onClick={close}>
              Done
            </button>
          </div>
        </div>
      ) : (
        <form className="stack" onSubmit={submit()}>
          <Field label="Endpoint URL">
            <input
              type="url"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              required
              placeholder="https://example.com/hooks/mailrail"
              autoComplete="off"
            />
          </Field>
          <Field label="Description (optional)">
            <input value={description} onChange={(e) => setDescription(e.target.value)} autoComplete="off" />
          </Field>
          <EventAndDomainFilters events={events} onEvents={setEvents} domainIds={domainIds} onDomainIds={setDomainIds} domains={domains} />
          <ErrorNotice error={create.error} />
          <div className="dialog-actions">
            <button type="submit" className="btn btn-primary" disabled={create.isPending}>
              {create.isPending ? 'Creating…' : 'Create webhook'}
            </button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
