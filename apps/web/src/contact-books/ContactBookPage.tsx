import { useQueryClient } from '@tanstack/react-query';
import { Tabs } from 'radix-ui';
import { useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { api } from '../api/client';
import type { ContactBook } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { formatNumber } from '../ui/format';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { useToast } from '../ui/toast';
import { useFormDialog } from '../ui/useFormDialog';
import { ContactsTab } from './ContactsTab';
import { ExportTab } from './ExportTab';
import { ImportTab } from './ImportTab';
import { PropertiesTab } from './PropertiesTab';
import { SegmentsTab } from './SegmentsTab';
import { SettingsTab } from './SettingsTab';

const TABS = [
  { value: 'contacts', label: 'Contacts' },
  { value: 'segments', label: 'Segments' },
  { value: 'properties', label: 'Properties' },
  { value: 'import', label: 'Import' },
  { value: 'export', label: 'Export' },
  { value: 'settings', label: 'Settings' },
] as const;

export default function ContactBookPage() {
  const { base, team } = useTeam();
  const bookId = useParams().bookId!;
  const [params, setParams] = useSearchParams();
  const tab = TABS.some((t) => t.value === params.get('tab')) ? params.get('tab')! : 'contacts';
  const book = useTeamQuery<ContactBook>(['contact-books', bookId], `/v1/contactBooks/${bookId}`);
  const navigate = useNavigate();
  const qc = useQueryClient();
  const toast = useToast();
  return (
    <>
      <p className="breadcrumb">
        <Link to={`${base}/contact-books`}>Contact books</Link>
      </p>
      <ErrorNotice error={book.error} />
      {book.isPending && <Loading />}
      {book.data && (
        <>
          <PageHeader
            title={`${book.data.emoji ? `${book.data.emoji} ` : ''}${book.data.name}`}
            description={
              <>
                {formatNumber(book.data._count.contacts)} {book.data._count.contacts === 1 ? 'contact' : 'contacts'}
                {`, ${formatNumber(book.data.subscribedCount)} subscribed`}
              </>
            }
            actions={
              <>
                <RenameBook book={book.data} />
                <ConfirmDialog
                  trigger={
                    <button type="button" className="btn btn-danger">
                      Delete book
                    </button>
                  }
                  title={`Delete the contact book "${book.data.name}"?`}
                  description={
                    <p>
                      Its {formatNumber(book.data._count.contacts)} contacts and its segments are deleted with it. This cannot be undone.
                    </p>
                  }
                  confirmLabel="Delete book"
                  onConfirm={async () => {
                    await api.delete(`${base}/v1/contactBooks/${bookId}`);
                    toast({ title: `Contact book "${book.data.name}" deleted` });
                    await qc.invalidateQueries({ queryKey: teamKey(team.id, 'contact-books') });
                    navigate(`${base}/contact-books`);
                  }}
                />
              </>
            }
          />
          <Tabs.Root value={tab} onValueChange={(v) => setParams(v === 'contacts' ? {} : { tab: v }, { replace: true })}>
            <Tabs.List className="tabs" aria-label="Contact book">
              {TABS.map((t) => (
                <Tabs.Trigger key={t.value} value={t.value} className="tab">
                  {t.label}
                </Tabs.Trigger>
              ))}
            </Tabs.List>
            <Tabs.Content value="contacts" className="tab-panel">
              <ContactsTab book={book.data} />
            </Tabs.Content>
            <Tabs.Content value="segments" className="tab-panel">
              <SegmentsTab book={book.data} />
            </Tabs.Content>
            <Tabs.Content value="properties" className="tab-panel">
              <PropertiesTab book={book.data} />
            </Tabs.Content>
            <Tabs.Content value="import" className="tab-panel">
              <ImportTab book={book.data} />
            </Tabs.Content>
            <Tabs.Content value="export" className="tab-panel">
              <ExportTab book={book.data} />
            </Tabs.Content>
            <Tabs.Content value="settings" className="tab-panel">
              <SettingsTab book={book.data} />
            </Tabs.Content>
          </Tabs.Root>
        </>
      )}
    </>
  );
}

function RenameBook({ book }: { book: ContactBook }) {
  const { team, base } = useTeam();
  const [name, setName] = useState(book.name);
  const [emoji, setEmoji] = useState(book.emoji);
  const { mutation, submit, dialog } = useFormDialog({
    mutationFn: () => api.patch<ContactBook>(`${base}/v1/contactBooks/${book.id}`, { name: name.trim(), emoji: emoji.trim() }),
    toast: () => 'Contact book saved',
    invalidate: [teamKey(team.id, 'contact-books')],
  });
  return (
    <FormDialog
      {...dialog}
      onOpenChange={(o) => {
        dialog.onOpenChange(o);
        if (o) {
          setName(book.name);
          setEmoji(book.emoji);
        }
      }}
      trigger={
        <button type="button" className="btn">
          Rename
        </button>
      }
      title="Rename the contact book"
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
            Save
          </button>
        </div>
      </form>
    </FormDialog>
  );
}
