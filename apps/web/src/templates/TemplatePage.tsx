import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, ApiError } from '../api/client';
import type { Template, TemplatePreview } from '../api/types';
import { teamKey, useTeamQuery } from '../api/team-query';
import { EmailBodyField, type BodyMode } from '../email-editor/EmailBodyField';
import { EmailPreviewTabs } from '../email-editor/EmailPreviewTabs';
import { useTeam } from '../session/session';
import { ConfirmDialog } from '../ui/ConfirmDialog';
import { ErrorNotice } from '../ui/ErrorNotice';
import { Field } from '../ui/Field';
import { Loading } from '../ui/Loading';
import { PageHeader } from '../ui/PageHeader';
import { useDebounced } from '../ui/useDebounced';
import { useToast } from '../ui/toast';

/** `name=value` lines as a send's variables (lines without `=` are skipped). */
function parseVariables(lines: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

type DocNode = { type?: string; attrs?: { id?: unknown }; content?: DocNode[] };

/** The variables a template already uses (its placeholders and variable blocks), offered by the picker. */
function usedNames(content: string, ...sources: string[]): string[] {
  const names = new Set<string>(['name']);
  for (const s of sources) for (const m of s.matchAll(/\{\{\s*(?:contact\.)?([\w-]{1,64})/g)) names.add(m[1]);
  const walk = (n: DocNode) => {
    if (n.type === 'variable' && typeof n.attrs?.id === 'string') names.add(n.attrs.id);
    for (const c of n.content ?? []) walk(c);
  };
  try {
    if (content) walk(JSON.parse(content) as DocNode);
  } catch {
    // Not a document yet.
  }
  return [...names];
}

export default function TemplatePage() {
  const { base } = useTeam();
  const templateId = useParams().templateId!;
  const template = useTeamQuery<Template>(['templates', templateId], `/v1/templates/${templateId}`);
  return (
    <>
      <p className="breadcrumb">
        <Link to={`${base}/templates`}>Templates</Link>
      </p>
      <ErrorNotice error={template.error} />
      {template.isPending && <Loading />}
      {template.data && <TemplateEditor key={template.data.id} template={template.data} />}
    </>
  );
}

/**
 * The template's name, subject, body (blocks in the visual editor, or raw HTML) and optional text
 * part, with the server's preview of the unsaved template filled with sample variables.
 */
function TemplateEditor({ template: t }: { template: Template }) {
  const { team, base } = useTeam();
  const qc = useQueryClient();
  const toast = useToast();
  const navigate = useNavigate();
  const [name, setName] = useState(t.name);
  const [subject, setSubject] = useState(t.subject);
  const [mode, setMode] = useState<BodyMode>(t.content || !t.html ? 'blocks' : 'html');
  const [content, setContent] = useState(t.content ?? '');
  const [html, setHtml] = useState(t.html ?? '');
  const [text, setText] = useState(t.text ?? '');
  const [sample, setSample] = useState('name=Ada');

  const save = useMutation({
    mutationFn: () =>
      api.patch<Template>(`${base}/v1/templates/${t.id}`, {
        name: name.trim(),
        subject,
        ...(mode === 'blocks' ? { content } : { html: html.trim() ? html : null }),
        text: text.trim() ? text : null,
      }),
    onSuccess: async () => {
      toast({ title: 'Template saved' });
      await qc.invalidateQueries({ queryKey: teamKey(team.id, 'templates') });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };

  const overrides = useDebounced(
    JSON.stringify({
      subject: subject || undefined,
      ...(mode === 'blocks' ? { content: content || undefined } : { html: html.trim() ? html : undefined }),
      text: text.trim() ? text : undefined,
      variables: parseVariables(sample),
    }),
    500,
  );
  const preview = useQuery({
    queryKey: ['team', team.id, 'templates', t.id, 'preview', overrides],
    queryFn: () => api.post<TemplatePreview>(`${base}/v1/templates/${t.id}/preview`, JSON.parse(overrides)),
    placeholderData: (prev) => prev,
    // The team's preview budget is small: a preview refused while earlier ones render asks again.
    retry: (count, err) => count < 5 && err instanceof ApiError && err.status === 429,
    retryDelay: 1000,
    enabled: (mode === 'blocks' ? content !== '' : html.trim() !== '') || text.trim() !== '',
  });

  return (
    <>
      <PageHeader
        title={t.name}
        description={
          <>
            Send it with <code>templateId: &quot;{t.id}&quot;</code> and its <code>variables</code>.
          </>
        }
        actions={
          <ConfirmDialog
            trigger={
              <button type="button" className="btn btn-danger">
                Delete
              </button>
            }
            title={`Delete the template "${t.name}"?`}
            description={<p>Sends that name it will be refused. Emails already sent stay in the log.</p>}
            confirmLabel="Delete template"
            onConfirm={async () => {
              await api.delete(`${base}/v1/templates/${t.id}`);
              toast({ title: `Template "${t.name}" deleted` });
              await qc.invalidateQueries({ queryKey: teamKey(team.id, 'templates') });
              navigate(`${base}/templates`);
            }}
          />
        }
      />
      <div className="editor-grid">
        <form className="card stack form-card" onSubmit={submit} aria-labelledby="editor-h">
          <h2 id="editor-h">Edit</h2>
          <Field label="Name">
            <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={255} />
          </Field>
          <Field label="Subject" hint="Variables as {{name}} or {{name,fallback=there}}.">
            <input value={subject} onChange={(e) => setSubject(e.target.value)} required maxLength={998} />
          </Field>
          <EmailBodyField
            mode={mode}
            onMode={setMode}
            content={content}
            onContent={setContent}
            html={html}
            onHtml={setHtml}
            variables={usedNames(content, subject, html, text)}
            label="Template body"
            htmlHint="Variables as {{name}} or {{name,fallback=there}}, filled from each send's variables. Saving HTML replaces the blocks."
          />
          <Field label="Text part (optional)" hint="Sent as the email's text part; empty: the email has only its HTML.">
            <textarea value={text} onChange={(e) => setText(e.target.value)} rows={4} />
          </Field>
          <ErrorNotice error={save.error} />
          <div>
            <button type="submit" className="btn btn-primary" disabled={save.isPending}>
              {save.isPending ? 'Saving…' : 'Save template'}
            </button>
          </div>
        </form>
        <section className="card stack form-card" aria-labelledby="preview-h">
          <h2 id="preview-h">Preview</h2>
          <Field label="Sample variables" hint="One name=value a line, as a send's variables.">
            <textarea value={sample} onChange={(e) => setSample(e.target.value)} rows={3} maxLength={5000} spellCheck={false} />
          </Field>
          <p className="hint">The preview shows the text being edited; sends use what is saved.</p>
          <ErrorNotice error={preview.error} />
          {preview.data && (
            <>
              <p data-testid="preview-subject">
                <span className="muted">Subject:</span> {preview.data.subject}
              </p>
              <EmailPreviewTabs
                html={preview.data.html}
                text={preview.data.text}
                textNote={
                  preview.data.textDerived
                    ? 'The text of the HTML, for reading: a send carries a text part only when the template has one.'
                    : undefined
                }
              />
            </>
          )}
        </section>
      </div>
    </>
  );
}
