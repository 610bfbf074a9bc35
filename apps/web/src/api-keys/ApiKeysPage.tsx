import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ApiPermission } from '@mailrail/platform/db/generated/enums';
import { api } from '../api/client';
import type { ApiKey, CreatedApiKey, Domain } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { FirstEmailSnippet } from '../overview/FirstEmailSnippet';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { CopyButton } from '../ui/CopyButton';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { useFormDialog } from '../ui/useFormDialog';
import { formatDateTime, formatRelative } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { StatusBadge } from '../ui/StatusBadge';
import { useToast } from '../ui/toast';
import { DataTable } from '../ui/DataTable';

const PERMISSION_HELP: Record<ApiPermission, string> = {
  FULL: 'every route of the API',
  SENDING: 'sending and reading emails only',
};

export default function ApiKeysPage() {
  const { isAdmin, team } = useTeam();
  if (!isAdmin) {
    return (
      <>
        <PageHeader title="API keys" />
        <p className="notice notice-warn" role="alert">
          Only admins of {team.name} can see and manage API keys. Ask an admin for a key.
        </p>
      </>
    );
  }
  return <ApiKeys />;
}

function ApiKeys() {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const keys = useTeamQuery<{ data: ApiKey[] }>(['api-keys'], '/api-keys');
  const domains = useTeamQuery<Domain[]>(['domains'], '/v1/domains');
  const domainName = (id: number | null) => (id === null ? 'any domain' : (domains.data?.find((d) => d.id === id)?.name ?? `domain ${id}`));
  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys for the HTTP API and SMTP. A key is shown once, when it is created."
        actions={<CreateKey domains={domains.data ?? []} />}
      />
      <ErrorNotice error={keys.error} />
      <ErrorNotice error={domains.error} prefix="The domains could not be loaded" />
      {keys.isPending && <Loading />}
      {keys.data?.data.length === 0 && (
        <EmptyState title="No API keys yet">
          <p>
            Create a key to send email from your application. A SENDING key is enough to send; FULL can also manage domains, webhooks and
            the rest.
          </p>
          <CreateKey domains={domains.data ?? []} />
        </EmptyState>
      )}
      {!!keys.data?.data.length && (
        <DataTable
          caption="API keys"
          columns={['Name', 'Permission', 'Domain', 'Key', 'Last used', 'Created', { label: 'Actions', hidden: true }]}
        >
          {keys.data.data.map((k) => (
            <tr key={k.id}>
              <td>{k.name}</td>
              <td>
                <StatusBadge status={k.permission} />
              </td>
              <td>{domainName(k.domainId)}</td>
              <td>
                <code>{k.partialToken}</code>
              </td>
              <td title={formatDateTime(k.lastUsed)}>{formatRelative(k.lastUsed)}</td>
              <td>{formatDateTime(k.createdAt)}</td>
              <td className="row-actions">
                <ConfirmDialog
                  trigger={
                    <button type="button" className="btn btn-small btn-danger" aria-label={`Revoke key ${k.name}`}>
                      Revoke
                    </button>
                  }
                  title={`Revoke the key "${k.name}"?`}
                  description={<p>Requests with this key are refused from now on, on every server. This cannot be undone.</p>}
                  confirmLabel="Revoke key"
                  onConfirm={async () => {
                    await api.delete(`${base}/api-keys/${k.id}`);
                    toast({ title: `Key "${k.name}" revoked` });
                    await qc.invalidateQueries({ queryKey: teamKey(team.id, 'api-keys') });
                  }}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

function CreateKey({ domains }: { domains: Domain[] }) {
  const { team, base } = useTeam();
  const [name, setName] = useState('');
  const [permission, setPermission] = useState<ApiPermission>('SENDING');
  const [domainId, setDomainId] = useState('');
  const {
    mutation: create,
    submit,
    close,
    dialog,
  } = useFormDialog({
    mutationFn: () =>
      api.post<CreatedApiKey>(`${base}/api-keys`, {
        name: name.trim(),
        permission,
        domainId: domainId ? Number(domainId) : null,
      }),
    invalidate: [teamKey(team.id, 'api-keys')],
    keepOpen: true, // the key is shown once, in the dialog
    reset: () => {
      setName('');
      setDomainId('');
    },
  });
  const created = create.data;
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-primary">
          Create API key
        </button>
      }
      title={created ? 'Your new API key' : 'Create an API key'}
    >
      {created ? (
        <div className="stack">
          <p className="notice notice-warn">Copy the key now: this is the only time it is shown. Store it like a password.</p>
          <div className="copy-cell secret">
            <code data-testid="new-api-key">{created.apiKey}</code>
            <CopyButton value={created.apiKey} label="Copy the API key" />
          </div>
          <p className="muted small">Send a first email with it (the key is filled in):</p>
          <FirstEmailSnippet
            apiKey={created.apiKey}
            domain={domains.find((d) => d.id === created.domainId)?.name ?? domains.find((d) => d.status === 'SUCCESS')?.name}
          />
          <div className="dialog-actions">
            <button type="button" className="btn btn-primary" onClick={close}>
              Done
            </button>
          </div>
        </div>
      ) : (
        <form className="stack" onSubmit={submit()}>
          <Field label="Name" hint="Where the key is used, e.g. shop or newsletter.">
            <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" />
          </Field>
          <fieldset className="radio-group">
            <legend>Permission</legend>
            {Object.values(ApiPermission).map((p) => (
              <label key={p}>
                <input type="radio" name="permission" value={p} checked={permission === p} onChange={() => setPermission(p)} />
                <strong>{p}</strong>: {PERMISSION_HELP[p]}
              </label>
            ))}
          </fieldset>
          <Field label="Domain" hint="A key bound to one domain can only send from it.">
            <select value={domainId} onChange={(e) => setDomainId(e.target.value)}>
              <option value="">Any domain of the team</option>
              {domains.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                </option>
              ))}
            </select>
          </Field>
          <ErrorNotice error={create.error} />
          <div className="dialog-actions">
            <button type="submit" className="btn btn-primary" disabled={create.isPending}>
              {create.isPending ? 'Creating…' : 'Create key'}
            </button>
          </div>
        </form>
      )}
    </FormDialog>
  );
}
