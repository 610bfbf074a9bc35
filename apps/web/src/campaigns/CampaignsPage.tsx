import { useState } from 'react';
import { STARTER_DOCUMENT } from '@mailrail/domain/campaigns/campaign-starter';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api } from '../api/client';
import type { Campaign, CampaignList, CampaignStatus, ContactBook, Domain } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { Pager } from '../ui/Pager';
import { useFormDialog } from '../ui/useFormDialog';
import { CampaignProgress, CampaignStatusBadge } from './CampaignProgress';
import { DataTable } from '../ui/DataTable';

const PAGE_SIZE = 30; // the server's page size for campaigns
const STATUSES: CampaignStatus[] = ['DRAFT', 'SCHEDULED', 'RUNNING', 'PAUSED', 'SENT'];

export default function CampaignsPage() {
  const { base } = useTeam();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const status = params.get('status') ?? '';
  const list = useTeamQuery<CampaignList>(
    ['campaigns'],
    '/v1/campaigns',
    { page, status: status || undefined },
    {
      placeholderData: (prev) => prev,
      // sending campaigns move: refresh while one is running or due
      refetchInterval: (q) =>
        (q.state.data as CampaignList | undefined)?.campaigns.some((c) => c.status === 'RUNNING' || c.status === 'SCHEDULED')
          ? 3000
          : false,
    },
  );
  return (
    <>
      <PageHeader
        title="Campaigns"
        description="Marketing email to a contact book or a segment, sent in windows."
        actions={<CreateCampaign />}
      />
      <div className="filters card">
        <Field label="Status">
          <select value={status} onChange={(e) => setParams(e.target.value ? { status: e.target.value } : {})}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s.toLowerCase()}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorNotice error={list.error} />
      {list.isPending && <Loading />}
      {list.data?.campaigns.length === 0 && (
        <EmptyState title={status ? `No ${status.toLowerCase()} campaigns` : 'No campaigns yet'}>
          <p>Create a campaign, write it, preview it for a contact, send yourself a test, then schedule it.</p>
        </EmptyState>
      )}
      {!!list.data?.campaigns.length && (
        <DataTable caption="Campaigns, newest first" columns={['Name', 'Status', 'Progress', 'Scheduled', 'Created']}>
          {list.data.campaigns.map((c) => (
            <tr key={c.id}>
              <td>
                <Link to={`${base}/campaigns/${c.id}`}>{c.name}</Link>
                <div className="muted small truncate">{c.subject}</div>
              </td>
              <td>
                <CampaignStatusBadge status={c.status} />
              </td>
              <td className="progress-cell">
                <CampaignProgress sent={c.sent} total={c.total} label={`${c.name}: sent`} />
              </td>
              <td>{formatDateTime(c.scheduledAt)}</td>
              <td>{formatDateTime(c.createdAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {list.data && (
        <Pager
          page={page}
          limit={PAGE_SIZE}
          count={list.data.totalPage * PAGE_SIZE}
          onPage={(p) => setParams({ ...(status ? { status } : {}), page: String(p) })}
          label="Campaigns"
        />
      )}
    </>
  );
}

/** Name, sender, subject and audience; the editor opens next, with a starter body carrying the unsubscribe link. */
function CreateCampaign() {
  const { team, base } = useTeam();
  const navigate = useNavigate();
  const books = useTeamQuery<ContactBook[]>(['contact-books'], '/v1/contactBooks');
  const domains = useTeamQuery<Domain[]>(['domains'], '/v1/domains');
  const verified = domains.data?.find((d) => d.status === 'SUCCESS');
  const [name, setName] = useState('');
  const [from, setFrom] = useState('');
  const [subject, setSubject] = useState('');
  const [bookId, setBookId] = useState('');
  const { mutation, submit, dialog } = useFormDialog({
    mutationFn: () =>
      api.post<Campaign>(`${base}/v1/campaigns`, {
        name: name.trim(),
        from: from.trim(),
        subject,
        contactBookId: bookId || books.data?.[0]?.id,
        // New campaigns open in the visual editor (raw HTML stays a mode of the editor).
        content: STARTER_DOCUMENT,
      }),
    toast: (c) => `Campaign "${c.name}" created`,
    invalidate: [teamKey(team.id, 'campaigns')],
    reset: () => {
      setName('');
      setSubject('');
    },
    onSuccess: (c) => navigate(`${base}/campaigns/${c.id}`),
  });
  return (
    <FormDialog
      {...dialog}
      onOpenChange={(o) => {
        dialog.onOpenChange(o);
        if (o && !from && verified) setFrom(`hello@${verified.name}`);
      }}
      trigger={
        <button type="button" className="btn btn-primary">
          Create campaign
        </button>
      }
      title="Create a campaign"
      description="It starts as a draft: write and preview it, then schedule it."
    >
      <form className="stack" onSubmit={submit()}>
        <Field label="Name" hint="For you; recipients do not see it.">
          <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" />
        </Field>
        <Field label="From" hint="An address on a verified domain, e.g. News <news@example.com>.">
          <input value={from} onChange={(e) => setFrom(e.target.value)} required autoComplete="off" />
        </Field>
        <Field label="Subject">
          <input value={subject} onChange={(e) => setSubject(e.target.value)} required autoComplete="off" />
        </Field>
        <Field label="Contact book">
          <select value={bookId} onChange={(e) => setBookId(e.target.value)} required>
            {books.data?.map((b) => (
              <option key={b.id} value={b.id}>
                {b.name}
              </option>
            ))}
          </select>
        </Field>
        <ErrorNotice error={books.error} prefix="The contact books could not be loaded" />
        {books.data?.length === 0 && <p className="notice notice-warn">Create a contact book first: a campaign sends to one.</p>}
        <ErrorNotice error={mutation.error} />
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" disabled={mutation.isPending || !books.data?.length}>
            {mutation.isPending ? 'Creating…' : 'Create and edit'}
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
