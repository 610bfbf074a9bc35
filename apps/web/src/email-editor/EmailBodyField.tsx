import { lazy, Suspense } from 'react';
import { Field } from '../ui/Field';
import { Loading } from '../ui/Loading';
import { htmlAsDocument } from './documents';

// TipTap loads only when a body is edited with blocks (the first-load budget).
const EmailEditor = lazy(() => import('./EmailEditor'));

export type BodyMode = 'blocks' | 'html';

/**
 * An email's body: blocks in the visual editor (the editor JSON in `content`) or raw HTML, with
 * the switch between them. Switching an HTML body to blocks keeps it as one raw block.
 */
export function EmailBodyField(props: {
  mode: BodyMode;
  onMode: (mode: BodyMode) => void;
  content: string;
  onContent: (content: string) => void;
  html: string;
  onHtml: (html: string) => void;
  variables: string[];
  /** The editor's accessible name. */
  label: string;
  htmlHint: string;
  readOnly?: boolean;
}) {
  const { mode, content, html } = props;
  return (
    <fieldset className="plain-fieldset stack">
      <legend className="field-label">Body</legend>
      <div className="segmented" role="radiogroup" aria-label="Body editor">
        <label>
          <input
            type="radio"
            name="body-mode"
            checked={mode === 'blocks'}
            onChange={() => {
              if (!content) props.onContent(html.trim() ? htmlAsDocument(html) : '');
              props.onMode('blocks');
            }}
          />{' '}
          Visual editor
        </label>
        <label>
          <input type="radio" name="body-mode" checked={mode === 'html'} onChange={() => props.onMode('html')} /> HTML
        </label>
      </div>
      {mode === 'blocks' ? (
        <Suspense fallback={<Loading label="Loading the editor…" />}>
          <EmailEditor
            value={content}
            onChange={props.onContent}
            variables={props.variables}
            label={props.label}
            readOnly={props.readOnly}
          />
        </Suspense>
      ) : (
        <Field label="HTML" hint={props.htmlHint}>
          <textarea className="html-editor" value={html} onChange={(e) => props.onHtml(e.target.value)} rows={14} spellCheck={false} />
        </Field>
      )}
    </fieldset>
  );
}
