import { useSearchParams } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { ContactBook, ContactListItem, ContactProperty } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { EmptyState } from '../ui/EmptyState';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { FormDialog } from '../ui/FormDialog';
import { formatDateTime } from '../ui/format';
import { Loading } from '../ui/Loading';
import { StatusBadge } from '../ui/StatusBadge';
import { useToast } from '../ui/toast';
import { useFormDialog } from '../ui/useFormDialog';
import { DataTable } from '../ui/DataTable';
import { CursorPager } from '../ui/Pager';
import { displayPropertyValue, propertyText, propertyTexts, useContactProperties } from './useContactProperties';

const LIMIT = 50;

/**
 * The book's contacts by id, keyset-paged (`after` = the last id of the page before), so the
 * millionth contact costs what the first does; "Previous" walks back through the cursors seen.
 */
export function ContactsTab({ book }: { book: ContactBook }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  // A link may open the tab searching (the events page links a contact by its address).
  const [searchParams] = useSearchParams();
  const [search, setSearch] = useState(searchParams.get('search') ?? '');
  const [subscribed, setSubscribed] = useState<'' | 'true' | 'false'>('');
  const [cursors, setCursors] = useState<string[]>([]); // `after` of each page walked past
  const after = cursors.at(-1);
  const contacts = useTeamQuery<ContactListItem[]>(
    ['contact-books', book.id, 'contacts'],
    `/v1/contactBooks/${book.id}/contacts`,
    { limit: LIMIT, after, search: search || undefined, subscribed: subscribed || undefined },
    { placeholderData: (prev) => prev },
  );
  const refresh = () => qc.invalidateQueries({ queryKey: teamKey(team.id, 'contact-books', book.id) });
  const onSearch = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setSearch(String(form.get('search') ?? '').trim());
    setSubscribed(String(form.get('subscribed') ?? '') as typeof subscribed);
    setCursors([]);
  };
  const rows = contacts.data ?? [];
  const { properties } = useContactProperties(book.id);
  const path = (c: ContactListItem) => `${base}/v1/contactBooks/${book.id}/contacts/${c.id}`;
  return (
    <>
      <div className="section-head">
        <form className="filters" role="search" aria-label="Contacts" onSubmit={onSearch}>
          <Field label="Search email or name">
            <input type="search" name="search" defaultValue={search} maxLength={200} />
          </Field>
          <Field label="Subscription">
            <select name="subscribed" defaultValue={subscribed}>
              <option value="">All</option>
              <option value="true">Subscribed</option>
              <option value="false">Unsubscribed</option>
            </select>
          </Field>
          <div className="filter-actions">
            <button type="submit" className="btn">
              Filter
            </button>
          </div>
        </form>
        <ContactDialog book={book} properties={properties} />
      </div>
      <ErrorNotice error={contacts.error} />
      {contacts.isPending && <Loading />}
      {contacts.data && rows.length === 0 && (
        <EmptyState title={search || subscribed || after ? 'No contact matches' : 'No contacts yet'}>
          <p>Add a contact with the button above, or import a CSV file in the Import tab.</p>
        </EmptyState>
      )}
      {rows.length > 0 && (
        // The class keeps the actions in view while a list with many property columns scrolls sideways.
        <div className="contacts-list">
          <DataTable
            caption={<>Contacts of {book.name}</>}
            columns={[
              'Email',
              'Name',
              'Status',
              ...properties.map((p) => (p.type === 'number' ? { label: p.name, numeric: true as const } : p.name)),
              'Added',
              { label: 'Actions', hidden: true },
            ]}
          >
            {rows.map((c) => (
              <tr key={c.id}>
                <td className="truncate">{c.email}</td>
                <td>{[c.firstName, c.lastName].filter(Boolean).join(' ') || <span className="muted">—</span>}</td>
                <td>
                  <StatusBadge status={c.subscribed ? 'SUCCESS' : 'PAUSED'} label={c.subscribed ? 'subscribed' : 'unsubscribed'} />
                  {c.suppressed && (
                    <>
                      {' '}
                      <span title="On your suppression list: no email reaches this address">
                        <StatusBadge status="SUPPRESSED" label="suppressed" />
                      </span>
                    </>
                  )}
                </td>
                {properties.map((p) => (
                  <td key={p.name} className={p.type === 'number' ? 'num truncate property-cell' : 'truncate property-cell'}>
                    {displayPropertyValue(p.type, propertyText(c.properties[p.name])) || <span className="muted">—</span>}
                  </td>
                ))}
                <td>{formatDateTime(c.createdAt)}</td>
                <td className="row-actions">
                  <ContactDialog book={book} properties={properties} contact={c} />{' '}
                  {c.subscribed && (
                    <button
                      type="button"
                      className="btn btn-small"
                      aria-label={`Unsubscribe ${c.email}`}
                      onClick={async () => {
                        try {
                          await api.patch(path(c), { subscribed: false });
                          toast({ title: `${c.email} unsubscribed` });
                        } catch (err) {
                          toast({ title: 'Could not unsubscribe', description: (err as Error).message, error: true });
                        }
                        await refresh();
                      }}
                    >
                      Unsubscribe
                    </button>
                  )}{' '}
                  <ConfirmDialog
                    trigger={
                      <button type="button" className="btn btn-small btn-danger" aria-label={`Delete ${c.email}`}>
                        Delete
                      </button>
                    }
                    title={`Delete ${c.email}?`}
                    description={<p>The contact leaves this book. Emails already sent to it stay in the log.</p>}
                    confirmLabel="Delete contact"
                    onConfirm={async () => {
                      await api.delete(path(c));
                      toast({ title: `${c.email} deleted` });
                      await qc.invalidateQueries({ queryKey: teamKey(team.id, 'contact-books') });
                    }}
                  />
                </td>
              </tr>
            ))}
          </DataTable>
        </div>
      )}
      <CursorPager
        page={cursors.length + 1}
        hasNext={rows.length === LIMIT}
        onPrevious={() => setCursors((c) => c.slice(0, -1))}
        onNext={() => setCursors((c) => [...c, rows[rows.length - 1].id])}
        label="Contacts"
      />
    </>
  );
}

/** Add a contact (no `contact`) or edit one: names, subscription and the book's properties, each by its type. */
function ContactDialog({
  book,
  properties: registry,
  contact,
}: {
  book: ContactBook;
  properties: ContactProperty[];
  contact?: ContactListItem;
}) {
  const { team, base } = useTeam();
  const [email, setEmail] = useState('');
  const [firstName, setFirstName] = useState('');
  const [lastName, setLastName] = useState('');
  const [subscribed, setSubscribed] = useState(true);
  const [properties, setProperties] = useState<Record<string, string>>({});
  const fill = () => {
    setEmail(contact?.email ?? '');
    setFirstName(contact?.firstName ?? '');
    setLastName(contact?.lastName ?? '');
    setSubscribed(contact?.subscribed ?? true);
    setProperties(propertyTexts(contact?.properties ?? {}));
  };
  const body = { firstName, lastName, subscribed, properties };
  const { mutation, submit, dialog } = useFormDialog({
    mutationFn: () =>
      contact
        ? api.patch(`${base}/v1/contactBooks/${book.id}/contacts/${contact.id}`, body)
        : api.post(`${base}/v1/contactBooks/${book.id}/contacts`, { email: email.trim(), ...body }),
    toast: () => (contact ? `${contact.email} saved` : `${email.trim()} added`),
    invalidate: [teamKey(team.id, 'contact-books')],
  });
  return (
    <FormDialog
      {...dialog}
      onOpenChange={(o) => {
        dialog.onOpenChange(o);
        if (o) fill();
      }}
      trigger={
        contact ? (
          <button type="button" className="btn btn-small" aria-label={`Edit ${contact.email}`}>
            Edit
          </button>
        ) : (
          <button type="button" className="btn btn-primary">
            Add contact
          </button>
        )
      }
      title={contact ? `Edit ${contact.email}` : 'Add a contact'}
    >
      <form className="stack" onSubmit={submit()}>
        {!contact && (
          <Field label="Email address">
            <input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required autoComplete="off" />
          </Field>
        )}
        <Field label="First name">
          <input value={firstName} onChange={(e) => setFirstName(e.target.value)} autoComplete="off" />
        </Field>
        <Field label="Last name">
          <input value={lastName} onChange={(e) => setLastName(e.target.value)} autoComplete="off" />
        </Field>
        {registry.map((p) => (
          <PropertyField
            key={p.name}
            property={p}
            value={properties[p.name] ?? ''}
            onChange={(v) => setProperties({ ...properties, [p.name]: v })}
          />
        ))}
        {book.variables
          .filter((v) => !registry.some((p) => p.name.toLowerCase() === v.toLowerCase()))
          .map((v) => (
            <Field key={v} label={`Property: ${v}`}>
              <input
                value={properties[v] ?? ''}
                onChange={(e) => setProperties({ ...properties, [v]: e.target.value })}
                autoComplete="off"
              />
            </Field>
          ))}
        <label>
          <input type="checkbox" checked={subscribed} onChange={(e) => setSubscribed(e.target.checked)} /> Subscribed
        </label>
        <ErrorNotice error={mutation.error} />
        <div className="dialog-actions">
          <button type="submit" className="btn btn-primary" disabled={mutation.isPending}>
            {contact ? 'Save contact' : 'Add contact'}
          </button>
        </div>
      </form>
    </FormDialog>
  );
}

/**
 * One typed property in the edit dialog. A value that does not read as its type (an imported "n/a"
 * in a number) is shown as written in a text box, so opening and saving the dialog never loses it.
 */
function PropertyField({ property: p, value, onChange }: { property: ContactProperty; value: string; onChange: (v: string) => void }) {
  const label = `Property: ${p.name}`;
  const hint = p.fallback ? `When empty, emails use "${p.fallback}"` : undefined;
  if (p.type === 'boolean' && ['', 'true', 'false'].includes(value.trim().toLowerCase()))
    return (
      <Field label={label} hint={hint}>
        <select value={value.trim().toLowerCase()} onChange={(e) => onChange(e.target.value)}>
          <option value="">not set</option>
          <option value="true">yes</option>
          <option value="false">no</option>
        </select>
      </Field>
    );
  const readsAsDay = /^\d{4}-\d{2}-\d{2}$/.test(value);
  if (p.type === 'date' && (value === '' || readsAsDay))
    return (
      <Field label={label} hint={hint}>
        <input type="date" value={value} onChange={(e) => onChange(e.target.value)} />
      </Field>
    );
  return (
    <Field label={label} hint={hint}>
      <input
        value={value}
        inputMode={p.type === 'number' ? 'decimal' : undefined}
        onChange={(e) => onChange(e.target.value)}
        autoComplete="off"
      />
    </Field>
  );
}
