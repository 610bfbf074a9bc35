import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api } from '../api/client';
import type { ContactBook } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { formatDateTime, formatNumber } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { useFormDialog } from '../ui/useFormDialog';
import { DataTable } from '../ui/DataTable';

export default function ContactBooksPage() {
  const { base } = useTeam();
  const books = useTeamQuery<ContactBook[]>(['contact-books'], '/v1/contactBooks');
  return (
    <>
      <PageHeader
        title="Contact books"
        description="Lists of contacts that campaigns send to: import a CSV, build segments, export."
        actions={<CreateBook />}
      />
      <ErrorNotice error={books.error} />
      {books.isPending && <Loading />}
      {books.data?.length === 0 && (
        <EmptyState title="No contact books yet">
          <p>Create a book, then add contacts one by one, through the API, or by importing a CSV file.</p>
          <CreateBook />
        </EmptyState>
      )}
      {!!books.data?.length && (
        <DataTable
          caption="Contact books"
          columns={['Name', { label: 'Contacts', numeric: true }, { label: 'Subscribed', numeric: true }, 'Double opt-in', 'Created']}
        >
          {books.data.map((b) => (
            <tr key={b.id}>
              <td>
                <Link to={`${base}/contact-books/${b.id}`}>
                  {b.emoji && <span aria-hidden="true">{b.emoji} </span>}
                  {b.name}
                </Link>
              </td>
              <td className="num">{formatNumber(b._count.contacts)}</td>
              <td className="num">{formatNumber(b.subscribedCount)}</td>
              <td>{b.doubleOptInEnabled ? 'on' : 'off'}</td>
              <td>{formatDateTime(b.createdAt)}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

function CreateBook() {
  const { team, base } = useTeam();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [emoji, setEmoji] = useState('');
  const { mutation, submit, dialog } = useFormDialog({
    mutationFn: () =>
      api.post<ContactBook>(`${base}/v1/contactBooks`, { name: name.trim(), ...(emoji.trim() ? { emoji: emoji.trim() } : {}) }),
    toast: (b) => `Contact book "${b.name}" created`,
    invalidate: [teamKey(team.id, 'contact-books')],
    reset: () => {
      setName('');
      setEmoji('');
    },
    onSuccess: (b) => navigate(`${base}/contact-books/${b.id}`),
  });
  return (
    <FormDialog
      {...dialog}
      trigger={
        <button type="button" className="btn btn-primary">
          Create contact book
        </button>
      }
      title="Create a contact book"
    >
      <form className="stack" onSubmit={submit()}>
        <Field label="Name">
          <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" />
        </Field>
        <Field label="Emoji (optional)">
          <input value={emoji} onChange={(e) => setEmoji(e.target.value)} maxLength={8} autoComplete="off" />
        </Field>
        <ErrorNotice error={mutation.error} />
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" disabled={mutation.isPending}>
            {mutation.isPending ? 'Creating…' : 'Create book'}
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
