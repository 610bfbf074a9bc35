import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { SuppressionReason } from '@mailrail/platform/db/generated/enums';
import { api } from '../api/client';
import type { Suppression, SuppressionPage } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { Pager } from '../ui/Pager';
import { StatusBadge } from '../ui/StatusBadge';
import { useToast } from '../ui/toast';
import { useFormDialog } from '../ui/useFormDialog';
import { DataTable } from '../ui/DataTable';
import { addressPagePath } from '../deliverability/ExplanationText';

const LIMIT = 50;

export default function SuppressionsPage() {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const search = params.get('search') ?? '';
  const list = useTeamQuery<SuppressionPage>(
    ['suppressions'],
    '/v1/suppressions',
    { page, limit: LIMIT, search: search || undefined },
    { placeholderData: (prev) => prev },
  );

  const onSearch = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const q = String(new FormData(e.currentTarget).get('search') ?? '').trim();
    setParams(q ? { search: q } : {});
  };
  return (
    <>
      <PageHeader
        title="Suppressions"
        description="Addresses mailrail will not send to: hard bounces and complaints are added by themselves; you can add and remove addresses."
        actions={<AddSuppression />}
      />
      <form className="filters card" role="search" onSubmit={onSearch} key={search}>
        <Field label="Search addresses">
          <input type="search" name="search" defaultValue={search} placeholder="example.org" />
        </Field>
        <div className="filter-actions">
          <button type="submit" className="btn">
            Search
          </button>
        </div>
      </form>
      <ErrorNotice error={list.error} />
      {list.isPending && <Loading />}
      {list.data?.count === 0 && (
        <EmptyState title={search ? `No suppressed address matches "${search}"` : 'No suppressed addresses'}>
          <p>
            {search
              ? 'Try a shorter part of the address.'
              : 'Hard bounces and complaints land here automatically. Add an address to stop all mail to it.'}
          </p>
        </EmptyState>
      )}
      {!!list.data?.data.length && (
        <DataTable
          caption="Suppressed addresses, newest first"
          columns={['Address', 'Reason', 'Source', 'Added', { label: 'Actions', hidden: true }]}
        >
          {list.data.data.map((s) => (
            <tr key={s.id}>
              <td>
                <Link to={addressPagePath(base, s.email)} title="Why didn't this arrive? Everything about this address">
                  {s.email}
                </Link>
              </td>
              <td>
                <StatusBadge status={s.reason} />
              </td>
              <td>
                {s.source ? <Link to={`${base}/emails/${encodeURIComponent(s.source)}`}>the email that caused it</Link> : 'added manually'}
              </td>
              <td>{formatDateTime(s.createdAt)}</td>
              <td className="row-actions">
                <ConfirmDialog
                  trigger={
                    <button type="button" className="btn btn-small" aria-label={`Remove ${s.email}`}>
                      Remove
                    </button>
                  }
                  title={`Remove ${s.email} from the list?`}
                  description={<p>mailrail will send to this address again. If it bounces hard or complains again, it comes back.</p>}
                  confirmLabel="Remove"
                  onConfirm={async () => {
                    await api.delete(`${base}/v1/suppressions/${encodeURIComponent(s.email)}`);
                    toast({ title: `${s.email} removed` });
                    await qc.invalidateQueries({ queryKey: teamKey(team.id, 'suppressions') });
                  }}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {list.data && (
        <Pager
          page={page}
          limit={LIMIT}
          count={list.data.count}
          label="Suppression"
          onPage={(p) => setParams(search ? { search, page: String(p) } : { page: String(p) })}
        />
      )}
    </>
  );
}

function AddSuppression() {
  const { team, base } = useTeam();
  const [email, setEmail] = useState('');
  const [reason, setReason] = useState<SuppressionReason>('MANUAL');
  const {
    mutation: add,
    submit,
    dialog,
  } = useFormDialog({
    mutationFn: () => api.post<Suppression>(`${base}/v1/suppressions`, { email: email.trim(), reason }),
    toast: (s) => `${s.email} suppressed`,
    invalidate: [teamKey(team.id, 'suppressions')],
    reset: () => setEmail(''),
  });
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-primary">
          Add address
        </button>
      }
      title="Suppress an address"
      description="No email of this team is sent to it until it is removed."
    >
      <form className="stack" onSubmit={submit()}>
        <Field label="Email address">
          <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required autoComplete="off" />
        </Field>
        <Field label="Reason">
          <select value={reason} onChange={(e) => setReason(e.target.value as SuppressionReason)}>
            {Object.values(SuppressionReason).map((r) => (
              <option key={r} value={r}>
                {r.replaceAll('_', ' ').toLowerCase()}
              </option>
            ))}
          </select>
        </Field>
        <ErrorNotice error={add.error} />
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" disabled={add.isPending}>
            Suppress
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
