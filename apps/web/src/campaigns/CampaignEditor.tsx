import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { Campaign, CampaignPreview, CampaignTestSent, ContactBook, ContactListItem, Segment } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { useTeam } from '../session/session';
import { ErrorNotice } from '../ui/ErrorNotice';
import { useDebounced } from '../ui/useDebounced';
import { Field } from '../ui/Field';
import { useToast } from '../ui/toast';
import { variableChoices } from '../email-editor/documents';
import { EmailBodyField, type BodyMode } from '../email-editor/EmailBodyField';
import { EmailPreviewTabs } from '../email-editor/EmailPreviewTabs';
import { useContactProperties } from '../contact-books/useContactProperties';

const toList = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * The campaign's fields, audience, sending plan and body (blocks in the visual editor, or raw HTML),
 * with a preview rendered by the server for a chosen contact (personalization resolved, the
 * unsubscribe link shown) from the unsaved body, at desktop and phone widths and as plain text.
 */
export function CampaignEditor({ campaign: c, readOnly = false }: { campaign: Campaign; readOnly?: boolean }) {
  const { team, base, session } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const [name, setName] = useState(c.name);
  const [from, setFrom] = useState(c.from);
  const [subject, setSubject] = useState(c.subject);
  const [previewText, setPreviewText] = useState(c.previewText ?? '');
  const [replyTo, setReplyTo] = useState(c.replyTo.join(', '));
  const [bookId, setBookId] = useState(c.contactBookId ?? '');
  // The variable picker offers the book's typed properties first, then its useSend variables.
  const { properties } = useContactProperties(bookId);
  const [segmentId, setSegmentId] = useState(c.segmentId ?? '');
  const [html, setHtml] = useState(c.html ?? '');
  // The stored editor JSON opens in the visual editor; a campaign made with HTML stays HTML until switched.
  const [mode, setMode] = useState<BodyMode>(c.content || !c.html ? 'blocks' : 'html');
  const [content, setContent] = useState(c.content ?? '');
  const [testTo, setTestTo] = useState(session.user.email);
  const [batchSize, setBatchSize] = useState(String(c.batchSize));
  const [windowMinutes, setWindowMinutes] = useState(String(c.batchWindowMinutes));
  const [ramp, setRamp] = useState(!!c.ramp);
  const [rampStart, setRampStart] = useState(String(c.ramp?.start ?? 50));
  const [rampFactor, setRampFactor] = useState(String(c.ramp?.factor ?? 2));
  // The chosen contact stays an option while a new search lists others.
  const [selected, setSelected] = useState<{ id: string; email: string } | null>(null);
  const contactId = selected?.id ?? '';

  const books = useTeamQuery<ContactBook[]>(['contact-books'], '/v1/contactBooks');
  const segments = useTeamQuery<Segment[]>(['contact-books', bookId, 'segments'], `/v1/contactBooks/${bookId}/segments`, undefined, {
    enabled: !!bookId,
  });
  // The contacts to preview for: the book's first 20, or 20 found by address or name (the list's search).
  const [contactSearch, setContactSearch] = useState('');
  const search = useDebounced(contactSearch.trim(), 300);
  const contacts = useTeamQuery<ContactListItem[]>(
    ['contact-books', bookId, 'contacts'],
    `/v1/contactBooks/${bookId}/contacts`,
    { limit: 20, search: search || undefined },
    { enabled: !!bookId, placeholderData: (prev) => prev },
  );

  const save = useMutation({
    mutationFn: () =>
      api.patch<Campaign>(`${base}/v1/campaigns/${c.id}`, {
        name: name.trim(),
        from: from.trim(),
        subject,
        previewText,
        replyTo: toList(replyTo),
        contactBookId: bookId,
        segmentId: segmentId || null,
        ...(mode === 'blocks' ? { content } : { html }),
        batchSize: Number(batchSize),
        batchWindowMinutes: Number(windowMinutes),
        ramp: ramp ? { start: Number(rampStart), factor: Number(rampFactor) } : null,
      }),
    onSuccess: async () => {
      toast({ title: 'Campaign saved' });
      await qc.invalidateQueries({ queryKey: teamKey(team.id, 'campaigns') });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };

  const overrides = useDebounced(
    JSON.stringify({
      contactId: contactId || undefined,
      subject,
      previewText,
      ...(mode === 'blocks' ? { content: content || undefined } : { html }),
    }),
    500,
  );
  const preview = useQuery({
    queryKey: ['team', team.id, 'campaigns', c.id, 'preview', overrides],
    queryFn: () => api.post<CampaignPreview>(`${base}/v1/campaigns/${c.id}/preview`, JSON.parse(overrides)),
    placeholderData: (prev) => prev,
    enabled: mode === 'blocks' ? content !== '' : html.trim() !== '',
  });
  const sendTest = useMutation({
    mutationFn: () =>
      api.post<CampaignTestSent>(`${base}/v1/campaigns/${c.id}/test`, { to: toList(testTo), contactId: contactId || undefined }),
    onSuccess: () => toast({ title: `Test sent to ${toList(testTo).join(', ')}` }),
  });

  return (
    <div className="editor-grid">
      <form className="card stack form-card" onSubmit={submit} aria-labelledby="editor-h">
        <h2 id="editor-h">{readOnly ? 'Content' : 'Edit'}</h2>
        <fieldset disabled={readOnly} className="plain-fieldset stack">
          <Field label="Name">
            <input value={name} onChange={(e) => setName(e.target.value)} required />
          </Field>
          <Field label="From">
            <input value={from} onChange={(e) => setFrom(e.target.value)} required />
          </Field>
          <Field label="Subject">
            <input value={subject} onChange={(e) => setSubject(e.target.value)} required />
          </Field>
          <Field label="Preview text" hint="Shown after the subject in most inboxes.">
            <input value={previewText} onChange={(e) => setPreviewText(e.target.value)} />
          </Field>
          <Field label="Reply-to" hint="Comma-separated; empty for none.">
            <input value={replyTo} onChange={(e) => setReplyTo(e.target.value)} />
          </Field>
          <div className="two-cols">
            <Field label="Contact book">
              <select
                value={bookId}
                onChange={(e) => {
                  setBookId(e.target.value);
                  setSegmentId('');
                  setSelected(null);
                }}
              >
                {books.data?.map((b) => (
                  <option key={b.id} value={b.id}>
                    {b.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Send to">
              <select value={segmentId} onChange={(e) => setSegmentId(e.target.value)}>
                <option value="">Every subscribed contact of the book</option>
                {segments.data?.map((s) => (
                  <option key={s.id} value={s.id}>
                    Segment: {s.name}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <div className="two-cols">
            <Field label="Batch size" hint="Emails per window (at most).">
              <input type="number" min={1} max={100000} value={batchSize} onChange={(e) => setBatchSize(e.target.value)} />
            </Field>
            <Field label="Window (minutes)" hint="0: send windows back to back.">
              <input type="number" min={0} value={windowMinutes} onChange={(e) => setWindowMinutes(e.target.value)} />
            </Field>
          </div>
          <label>
            <input type="checkbox" checked={ramp} onChange={(e) => setRamp(e.target.checked)} /> Warm up: start small and grow each window
          </label>
          {ramp && (
            <div className="two-cols">
              <Field label="First window" hint="Emails in the first window.">
                <input type="number" min={1} max={100000} value={rampStart} onChange={(e) => setRampStart(e.target.value)} />
              </Field>
              <Field label="Growth per window" hint="×1.1 to ×10, up to the batch size.">
                <input type="number" min={1.1} max={10} step={0.1} value={rampFactor} onChange={(e) => setRampFactor(e.target.value)} />
              </Field>
            </div>
          )}
          <EmailBodyField
            mode={mode}
            onMode={setMode}
            content={content}
            onContent={setContent}
            html={html}
            onHtml={setHtml}
            variables={variableChoices([...properties.map((p) => p.name), ...(books.data?.find((b) => b.id === bookId)?.variables ?? [])])}
            label="Email body"
            htmlHint="Personalize with {{firstName}}, {{email}} or a property; the body must link {{usesend_unsubscribe_url}}. Saving HTML replaces the blocks."
            readOnly={readOnly}
          />
        </fieldset>
        <ErrorNotice error={save.error} />
        {!readOnly && (
          <div>
            <button type="submit" className="btn btn-primary" disabled={save.isPending}>
              {save.isPending ? 'Saving…' : 'Save campaign'}
            </button>
          </div>
        )}
      </form>
      <section className="card stack form-card" aria-labelledby="preview-h">
        <h2 id="preview-h">Preview</h2>
        <div className="inline-form">
          <Field label="Find a contact">
            <input
              type="search"
              value={contactSearch}
              onChange={(e) => setContactSearch(e.target.value)}
              maxLength={200}
              placeholder="address or name"
            />
          </Field>
          <Field label="Preview for">
            <select
              value={contactId}
              onChange={(e) => setSelected(contacts.data?.find((k) => k.id === e.target.value) ?? (e.target.value ? selected : null))}
            >
              <option value="">The book's first contact</option>
              {selected && !contacts.data?.some((k) => k.id === selected.id) && <option value={selected.id}>{selected.email}</option>}
              {contacts.data?.map((k) => (
                <option key={k.id} value={k.id}>
                  {k.email}
                </option>
              ))}
            </select>
          </Field>
        </div>
        <div className="inline-form">
          <Field label="Send a test to" hint="Up to 5 addresses, comma-separated.">
            <input value={testTo} onChange={(e) => setTestTo(e.target.value)} maxLength={1000} />
          </Field>
          <button
            type="button"
            className="btn"
            onClick={() => sendTest.mutate()}
            disabled={sendTest.isPending || toList(testTo).length === 0 || toList(testTo).length > 5}
          >
            {sendTest.isPending ? 'Sending…' : 'Send test'}
          </button>
        </div>
        <p className="hint">The preview shows the text being edited; the test email and the campaign send what is saved.</p>
        <ErrorNotice error={sendTest.error} />
        <ErrorNotice error={preview.error} />
        {preview.data && (
          <>
            <p data-testid="preview-subject">
              <span className="muted">Subject:</span> {preview.data.subject}
              {preview.data.contact && <span className="muted"> — for {preview.data.contact.email}</span>}
            </p>
            <EmailPreviewTabs html={preview.data.html} text={preview.data.text} />
          </>
        )}
      </section>
    </div>
  );
}
