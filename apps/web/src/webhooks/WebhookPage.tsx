import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { WebhookDeliveryStatus } from '@mailrail/platform/db/generated/enums';
import { api } from '../api/client';
import type { Domain, RotatedWebhook, Webhook, WebhookDeliveryPage, WebhookTestSent } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { formatDateTime, formatRelative } from '../ui/format';
import { LabelledSwitch } from '../ui/LabelledSwitch';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { Pager } from '../ui/Pager';
import { StatusBadge } from '../ui/StatusBadge';
import { useToast } from '../ui/toast';
import { EventAndDomainFilters } from './EventAndDomainFilters';
import { SecretOnce } from './SecretOnce';

export default function WebhookPage() {
  const { team, base } = useTeam();
  const { webhookId = '' } = useParams();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const rel = `/v1/webhooks/${encodeURIComponent(webhookId)}`;
  const path = `${base}${rel}`;
  const hook = useTeamQuery<Webhook>(['webhook', webhookId], rel);
  const domains = useTeamQuery<Domain[]>(['domains'], '/v1/domains');
  const [secret, setSecret] = useState<string | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: teamKey(team.id) });
  const update = useMutation({
    mutationFn: (change: Partial<Pick<Webhook, 'enabled' | 'events' | 'domainIds'>>) => api.patch<Webhook>(path, change),
    onSuccess: () => (toast({ title: 'Webhook saved' }), refresh()),
  });
  const sendTest = useMutation({
    mutationFn: () => api.post<WebhookTestSent>(`${path}/test`),
    onSuccess: () => (toast({ title: 'Test event queued', description: 'It shows in the delivery log below once sent.' }), refresh()),
  });
  const w = hook.data;
  return (
    <>
      <p className="breadcrumb">
        <Link to={`${base}/webhooks`}>← Webhooks</Link>
      </p>
      <ErrorNotice error={hook.error} />
      <ErrorNotice error={domains.error} prefix="The domains could not be loaded" />
      {hook.isPending && <Loading />}
      {w && (
        <>
          <PageHeader
            title={w.url}
            description={w.description ?? undefined}
            actions={
              <>
                <button type="button" className="btn" onClick={() => sendTest.mutate()} disabled={sendTest.isPending}>
                  Send test event
                </button>
                <ConfirmDialog
                  trigger={
                    <button type="button" className="btn">
                      Rotate secret
                    </button>
                  }
                  title="Rotate the signing secret?"
                  description={
                    <p>
                      Deliveries are signed with a new secret from now on; receivers checking the old one will reject them until updated.
                    </p>
                  }
                  confirmLabel="Rotate secret"
                  onConfirm={async () => setSecret((await api.post<RotatedWebhook>(`${path}/rotate-secret`)).secret)}
                />
                <ConfirmDialog
                  trigger={
                    <button type="button" className="btn btn-danger">
                      Delete
                    </button>
                  }
                  title="Delete this webhook?"
                  description={<p>No more events are posted to {w.url}. Its delivery log is deleted with it.</p>}
                  confirmLabel="Delete webhook"
                  onConfirm={async () => {
                    await api.delete(path);
                    toast({ title: 'Webhook deleted' });
                    navigate(`${base}/webhooks`);
                    await refresh();
                  }}
                />
              </>
            }
          />
          <ErrorNotice error={sendTest.error} />
          {secret && (
            <section className="card" aria-label="New signing secret">
              <SecretOnce secret={secret} />
            </section>
          )}
          <section className="card" aria-labelledby="state-h">
            <h2 id="state-h">State</h2>
            <p>
              <StatusBadge status={w.status} />{' '}
              {w.consecutiveFailures > 0 && <span className="muted">{w.consecutiveFailures} failures in a row. </span>}
              <span className="muted">
                Last success {formatRelative(w.lastSuccessAt)}, last failure {formatRelative(w.lastFailureAt)}.
              </span>
            </p>
            <LabelledSwitch
              label="Enabled"
              checked={w.enabled}
              disabled={update.isPending}
              onChange={(enabled) => update.mutate({ enabled })}
            />
            <ErrorNotice error={update.error} />
          </section>
          <Deliveries rel={rel} webhookId={w.id} />
          <Filters webhook={w} domains={domains.data ?? []} onSave={(change) => update.mutate(change)} saving={update.isPending} />
        </>
      )}
    </>
  );
}

function Filters({
  webhook,
  domains,
  onSave,
  saving,
}: {
  webhook: Webhook;
  domains: Domain[];
  onSave: (c: Pick<Webhook, 'events' | 'domainIds'>) => void;
  saving: boolean;
}) {
  const [events, setEvents] = useState(webhook.events);
  const [domainIds, setDomainIds] = useState(webhook.domainIds);
  const changed = events.join() !== webhook.events.join() || domainIds.join() !== webhook.domainIds.join();
  return (
    <section className="card" aria-labelledby="filters-h">
      <h2 id="filters-h">Events and domains</h2>
      <EventAndDomainFilters events={events} onEvents={setEvents} domainIds={domainIds} onDomainIds={setDomainIds} domains={domains} />
      <button type="button" className="btn" disabled={!changed || saving} onClick={() => onSave({ events, domainIds })}>
        Save filters
      </button>
    </section>
  );
}

const LIMIT = 20;

function Deliveries({ rel, webhookId }: { rel: string; webhookId: string }) {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState('');
  const deliveries = useTeamQuery<WebhookDeliveryPage>(
    ['webhook', webhookId, 'deliveries'],
    `${rel}/deliveries`,
    { page, limit: LIMIT, status: status || undefined },
    { refetchInterval: 3000, placeholderData: (prev) => prev },
  );
  return (
    <section className="card" aria-labelledby="deliveries-h">
      <h2 id="deliveries-h">Delivery log</h2>
      <div className="filters">
        <Field label="Delivery status">
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.target.value);
              setPage(1);
            }}
          >
            <option value="">Any</option>
            {Object.values(WebhookDeliveryStatus).map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNotice error={deliveries.error} />
      {deliveries.data?.count === 0 && <p className="muted">No deliveries yet. Send a test event to try the endpoint.</p>}
      {!!deliveries.data?.data.length && (
        <div className="table-wrap">
          <table className="list">
            <caption className="visually-hidden">Deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col" className="num">
                  HTTP
                </th>
                <th scope="col" className="num">
                  Duration
                </th>
                <th scope="col">Answer</th>
                <th scope="col">When</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data.data.map((d) => (
                <tr key={d.id}>
                  <td>
                    {d.eventType}
                    {d.attempt > 1 && <div className="muted small">attempt {d.attempt}</div>}
                  </td>
                  <td>
                    <StatusBadge status={d.status} />
                    {d.nextAttemptAt && <div className="muted small">retry {formatRelative(d.nextAttemptAt)}</div>}
                  </td>
                  <td className="num">{d.responseStatus ?? '—'}</td>
                  <td className="num">{d.durationMs === null ? '—' : `${d.durationMs} ms`}</td>
                  <td className="answer">
                    {d.lastError && <div className="tone-bad">{d.lastError}</div>}
                    {d.responseText ? <code>{d.responseText}</code> : !d.lastError && <span className="muted">empty</span>}
                  </td>
                  <td title={formatDateTime(d.updatedAt, true)}>{formatRelative(d.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {deliveries.isPending && <Loading />}
      {deliveries.data && <Pager page={page} limit={LIMIT} count={deliveries.data.count} onPage={setPage} label="Delivery" />}
    </section>
  );
}
