import { useMutation, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { ContactBook } from '../api/types';
import { teamKey } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { LabelledSwitch } from '../ui/LabelledSwitch';
import { useToast } from '../ui/toast';
import { Loading } from '../ui/Loading';

// TipTap loads only when a book's settings are opened (the first-load budget).
const EmailEditor = lazy(() => import('../email-editor/EmailEditor'));

/** What the confirmation email can use: the server fills these (apps/api/src/contacts/double-opt-in.ts). */
const CONFIRMATION_VARIABLES = ['doubleOptInUrl', 'email', 'firstName', 'lastName'];

/** Double opt-in: the book's existing fields; the server checks the sender and the {{doubleOptInUrl}} placeholder. */
export function SettingsTab({ book }: { book: ContactBook }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const [enabled, setEnabled] = useState(book.doubleOptInEnabled);
  const [from, setFrom] = useState(book.doubleOptInFrom ?? '');
  const [subject, setSubject] = useState(book.doubleOptInSubject ?? '');
  const [variables, setVariables] = useState(book.variables.join(', '));
  // The server answers the stored document (or its default); it is sent back only once edited.
  const [content, setContent] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: () =>
      api.patch<ContactBook>(`${base}/v1/contactBooks/${book.id}`, {
        doubleOptInEnabled: enabled,
        doubleOptInFrom: from,
        doubleOptInSubject: subject,
        ...(content !== null ? { doubleOptInContent: content } : {}),
        variables: variables
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      }),
    onSuccess: async () => {
      toast({ title: 'Settings saved' });
      await qc.invalidateQueries({ queryKey: teamKey(team.id, 'contact-books') });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <form className="card stack form-card narrow-wide" onSubmit={submit} aria-labelledby="book-settings-h">
      <h2 id="book-settings-h">Double opt-in</h2>
      <p className="muted">
        With double opt-in, a contact added through the API gets a confirmation email and is subscribed only after clicking its link.
      </p>
      <LabelledSwitch label="Ask new contacts to confirm" checked={enabled} onChange={setEnabled} />
      <Field label="Confirmation sender" hint="An address on a verified domain of the team, e.g. Newsletter <news@example.com>.">
        <input value={from} onChange={(e) => setFrom(e.target.value)} autoComplete="off" />
      </Field>
      <Field label="Confirmation subject">
        <input value={subject} onChange={(e) => setSubject(e.target.value)} autoComplete="off" />
      </Field>
      <fieldset className="plain-fieldset stack">
        <legend className="field-label">Confirmation email</legend>
        {book.doubleOptInContent ? (
          <>
            <p className="hint">Keep a button or link to {'{{doubleOptInUrl}}'}: the contact confirms by opening it.</p>
            <Suspense fallback={<Loading label="Loading the editor…" />}>
              <EmailEditor
                value={JSON.stringify(book.doubleOptInContent)}
                onChange={setContent}
                variables={CONFIRMATION_VARIABLES}
                label="Confirmation email body"
              />
            </Suspense>
          </>
        ) : (
          // The server stores its default message when double opt-in is first turned on.
          <p className="hint">
            The default confirmation email is set when double opt-in is turned on and saved; then it can be edited here.
          </p>
        )}
      </fieldset>
      <h2>Properties</h2>
      <Field label="Property names" hint="Comma-separated; letters, digits and underscores. Campaigns can use them as {{name}}.">
        <input value={variables} onChange={(e) => setVariables(e.target.value)} autoComplete="off" />
      </Field>
      <ErrorNotice error={save.error} />
      <div>
        <button type="submit" className="btn btn-primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save settings'}
        </button>
      </div>
    </form>
  );
}
