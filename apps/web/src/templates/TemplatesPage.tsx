import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api } from '../api/client';
import type { Template } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { DataTable } from '../ui/DataTable';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { Pager } from '../ui/Pager';
import { useFormDialog } from '../ui/useFormDialog';

const PAGE_SIZE = 50;

/** A new template's body: a greeting with a variable and its fallback, in the visual editor. */
const STARTER_TEMPLATE = JSON.stringify({
  type: 'doc',
  content: [
    {
      type: 'paragraph',
      content: [
        { type: 'text', text: 'Hi ' },
        { type: 'variable', attrs: { id: 'name', fallback: 'there' } },
        { type: 'text', text: ',' },
      ],
    },
    { type: 'paragraph' },
  ],
});

export default function TemplatesPage() {
  const { base } = useTeam();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page')) || 1);
  const list = useTeamQuery<{ data: Template[]; count: number }>(
    ['templates'],
    '/v1/templates',
    { page, limit: PAGE_SIZE },
    {
      placeholderData: (prev) => prev,
    },
  );
  return (
    <>
      <PageHeader
        title="Templates"
        description="Transactional emails kept on the server: send one with its id and variables (POST /api/v1/emails, templateId)."
        actions={<CreateTemplate />}
      />
      <ErrorNotice error={list.error} />
      {list.isPending && <Loading />}
      {list.data?.count === 0 && (
        <EmptyState title="No templates yet">
          <p>Create a template, write it with blocks or HTML, preview it with sample variables, then send it from your app with its id.</p>
        </EmptyState>
      )}
      {!!list.data?.data.length && (
        <DataTable caption="Templates, newest first" columns={['Name', 'Body', 'Id', 'Updated']}>
          {list.data.data.map((t) => (
            <tr key={t.id}>
              <td>
                <Link to={`${base}/templates/${t.id}`}>{t.name}</Link>
                <div className="muted small truncate">{t.subject}</div>
              </td>
              <td>{t.content ? 'Visual editor' : t.html ? 'HTML' : 'Text'}</td>
              <td>
                <code className="small">{t.id}</code>
              </td>
              <td>{formatDateTime(t.updatedAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {list.data && list.data.count > PAGE_SIZE && (
        <Pager page={page} limit={PAGE_SIZE} count={list.data.count} onPage={(p) => setParams({ page: String(p) })} label="Templates" />
      )}
    </>
  );
}

/** Name and subject; the editor opens next with a starter body. */
function CreateTemplate() {
  const { team, base } = useTeam();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [subject, setSubject] = useState('');
  const { mutation, submit, dialog } = useFormDialog({
    mutationFn: () => api.post<Template>(`${base}/v1/templates`, { name: name.trim(), subject, content: STARTER_TEMPLATE }),
    toast: (t) => `Template "${t.name}" created`,
    invalidate: [teamKey(team.id, 'templates')],
    reset: () => {
      setName('');
      setSubject('');
    },
    onSuccess: (t) => navigate(`${base}/templates/${t.id}`),
  });
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-primary">
          Create template
        </button>
      }
      title="Create a template"
      description="Its subject and body may use {{variables}}, filled from each send's variables."
    >
      <form className="stack" onSubmit={submit()}>
        <Field label="Name" hint="For you; recipients do not see it.">
          <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" maxLength={255} />
        </Field>
        <Field label="Subject" hint="e.g. Welcome, {{name,fallback=there}}">
          <input value={subject} onChange={(e) => setSubject(e.target.value)} required autoComplete="off" maxLength={998} />
        </Field>
        <ErrorNotice error={mutation.error} />
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" disabled={mutation.isPending}>
            {mutation.isPending ? 'Creating…' : 'Create and edit'}
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
