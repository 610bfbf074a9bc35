import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../api/client';
import type { Domain } from '../api/types';
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
import { DomainStatusBadge } from '../ui/StatusBadge';
import { DataTable } from '../ui/DataTable';

export default function DomainsPage() {
  const { base } = useTeam();
  const domains = useTeamQuery<Domain[]>(['domains'], '/v1/domains');
  return (
    <>
      <PageHeader
        title="Domains"
        description="Domains you send from. Each needs its DNS records published before SES accepts mail from it."
        actions={<AddDomain />}
      />
      <ErrorNotice error={domains.error} />
      {domains.isPending && <Loading />}
      {domains.data?.length === 0 && (
        <EmptyState title="No domains yet">
          <p>
            Add the domain you want to send from (for example mail.yourcompany.com). You will get the DNS records to publish, each with a
            copy button.
          </p>
          <AddDomain />
        </EmptyState>
      )}
      {!!domains.data?.length && (
        <DataTable caption="Domains" columns={['Domain', 'Status', 'Region', 'Last checked', 'Tracking']}>
          {domains.data.map((d) => (
            <tr key={d.id}>
              <td>
                <Link to={`${base}/domains/${d.id}`}>{d.name}</Link>
              </td>
              <td>
                <DomainStatusBadge status={d.status} />
              </td>
              <td>{d.region}</td>
              <td>{formatRelative(d.lastCheckedTime)}</td>
              <td>{[d.openTracking && 'opens', d.clickTracking && 'clicks'].filter(Boolean).join(', ') || 'off'}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

function AddDomain() {
  const { team, base } = useTeam();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [region, setRegion] = useState('');
  const {
    mutation: add,
    submit,
    dialog,
  } = useFormDialog({
    mutationFn: () =>
      api.post<Domain>(`${base}/v1/domains`, region.trim() ? { name: name.trim(), region: region.trim() } : { name: name.trim() }),
    invalidate: [teamKey(team.id)],
    reset: () => setName(''),
    onSuccess: (d) => navigate(`${base}/domains/${d.id}`),
  });
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-primary">
          Add domain
        </button>
      }
      title="Add a domain"
      description="A domain or subdomain you control; mailrail gives you the DNS records to publish."
    >
      <form className="stack" onSubmit={submit()}>
        <Field label="Domain name">
          <input value={name} onChange={(e) => setName(e.target.value)} required placeholder="mail.example.com" autoComplete="off" />
        </Field>
        <Field label="SES region (optional)" hint="Leave empty for the server's default region.">
          <input value={region} onChange={(e) => setRegion(e.target.value)} placeholder="us-east-1" autoComplete="off" />
        </Field>
        <ErrorNotice error={add.error} />
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" disabled={add.isPending}>
            {add.isPending ? 'Adding…' : 'Add domain'}
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
