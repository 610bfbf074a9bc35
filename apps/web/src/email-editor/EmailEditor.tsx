import { EditorContent, useEditor, type Editor } from '@tiptap/react';
import { NodeSelection } from '@tiptap/pm/state';
import { useId, useState, type ReactNode } from 'react';
import { emailExtensions } from './email-nodes';
import { parseEmailDocument, type EmailDocument } from './documents';

// The visual email editor (TipTap): blocks inserted from a toolbar, the selected block's settings
// beside it, variables from a list with their fallback. Every control is a real button or field,
// so the whole editor works from the keyboard (Tab to the toolbar, arrows and Enter in the text).
// Loaded on its own chunk (React.lazy) by the pages that edit an email: TipTap is ~100 KB gzip.

export interface EmailEditorProps {
  /** The stored editor JSON (a string, as `content` is stored). */
  value: string;
  onChange: (json: string) => void;
  /** The personalization variables offered (the book's property names and the built-in ones). */
  variables: string[];
  label: string;
  readOnly?: boolean;
}

const SPACER_SIZES = [
  ['sm', 'Small (8 px)'],
  ['md', 'Medium (16 px)'],
  ['lg', 'Large (32 px)'],
  ['xl', 'Extra large (64 px)'],
] as const;

/** The nearest node of `type` that ends at or before `pos`: what an insert just added. */
function selectInserted(editor: Editor, type: string) {
  const { from } = editor.state.selection;
  let found = -1;
  editor.state.doc.nodesBetween(0, Math.min(from, editor.state.doc.content.size), (node, pos) => {
    if (node.type.name === type) found = pos;
  });
  if (found >= 0) editor.commands.setNodeSelection(found);
}

function ToolButton({
  label,
  onClick,
  active,
  disabled,
  children,
}: {
  label: string;
  onClick: () => void;
  active?: boolean;
  disabled?: boolean;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      className={`ee-tool${active ? ' is-active' : ''}`}
      aria-label={label}
      title={label}
      aria-pressed={active === undefined ? undefined : active}
      onClick={onClick}
      disabled={disabled}
    >
      {children}
    </button>
  );
}

export default function EmailEditor({ value, onChange, variables, label, readOnly = false }: EmailEditorProps) {
  const id = useId();
  const [initial] = useState<EmailDocument>(() => parseEmailDocument(value));
  const editor = useEditor({
    extensions: emailExtensions('Write your email…'),
    content: initial,
    editable: !readOnly,
    shouldRerenderOnTransaction: true,
    editorProps: { attributes: { 'aria-label': label, 'aria-multiline': 'true', role: 'textbox', class: 'ee-content' } },
    onUpdate: ({ editor: e }) => onChange(JSON.stringify(e.getJSON())),
  });
  const [linkOpen, setLinkOpen] = useState(false);
  const [linkHref, setLinkHref] = useState('https://');
  const [variable, setVariable] = useState(variables[0] ?? '');
  const [fallback, setFallback] = useState('');

  if (!editor) return null;
  const chain = () => editor.chain().focus();
  const heading = ([1, 2, 3] as const).find((level) => editor.isActive('heading', { level }));
  const selected = editor.state.selection instanceof NodeSelection ? editor.state.selection.node : null;
  const attrs = (selected?.attrs ?? {}) as Record<string, string | null>;
  const setAttr = (name: string, v: string) => editor.commands.updateAttributes(selected!.type.name, { [name]: v });

  /** At the cursor; after the selected block when one is selected (not in its place). */
  const insertHere = (content: object) => {
    const { selection } = editor.state;
    if (selection instanceof NodeSelection) chain().insertContentAt(selection.to, content).run();
    else chain().insertContent(content).run();
  };
  /** A block with settings, then selected so its settings show beside the editor. */
  const insert = (type: string, content: object) => {
    insertHere(content);
    selectInserted(editor, type);
  };
  const openLink = () => {
    setLinkHref((editor.getAttributes('link').href as string | undefined) ?? 'https://');
    setLinkOpen(true);
  };
  const applyLink = () => {
    const href = linkHref.trim();
    if (href) chain().extendMarkRange('link').setLink({ href }).run();
    else chain().extendMarkRange('link').unsetLink().run();
    setLinkOpen(false);
  };

  return (
    <div className="email-editor" data-testid="email-editor">
      {!readOnly && (
        <div role="toolbar" aria-label="Formatting and blocks" className="ee-toolbar">
          <ToolButton label="Undo" onClick={() => chain().undo().run()} disabled={!editor.can().undo()}>
            ↶
          </ToolButton>
          <ToolButton label="Redo" onClick={() => chain().redo().run()} disabled={!editor.can().redo()}>
            ↷
          </ToolButton>
          <span className="ee-sep" aria-hidden="true" />
          <label className="ee-select">
            <select
              aria-label="Text style"
              value={heading ? `h${heading}` : 'p'}
              onChange={(e) => {
                const v = e.target.value;
                if (v === 'p') chain().setParagraph().run();
                else
                  chain()
                    .setHeading({ level: Number(v.slice(1)) as 1 | 2 | 3 })
                    .run();
              }}
            >
              <option value="p">Text</option>
              <option value="h1">Heading 1</option>
              <option value="h2">Heading 2</option>
              <option value="h3">Heading 3</option>
            </select>
          </label>
          <ToolButton label="Bold" active={editor.isActive('bold')} onClick={() => chain().toggleBold().run()}>
            <b>B</b>
          </ToolButton>
          <ToolButton label="Italic" active={editor.isActive('italic')} onClick={() => chain().toggleItalic().run()}>
            <i>I</i>
          </ToolButton>
          <ToolButton label="Underline" active={editor.isActive('underline')} onClick={() => chain().toggleUnderline().run()}>
            <u>U</u>
          </ToolButton>
          <ToolButton label="Strikethrough" active={editor.isActive('strike')} onClick={() => chain().toggleStrike().run()}>
            <s>S</s>
          </ToolButton>
          <ToolButton label="Link" active={editor.isActive('link')} onClick={openLink}>
            Link
          </ToolButton>
          <ToolButton label="Bulleted list" active={editor.isActive('bulletList')} onClick={() => chain().toggleBulletList().run()}>
            • List
          </ToolButton>
          <ToolButton label="Numbered list" active={editor.isActive('orderedList')} onClick={() => chain().toggleOrderedList().run()}>
            1. List
          </ToolButton>
          <span className="ee-sep" aria-hidden="true" />
          <ToolButton
            label="Insert button"
            onClick={() => insert('button', { type: 'button', attrs: { text: 'Read more', url: 'https://' } })}
          >
            + Button
          </ToolButton>
          <ToolButton label="Insert image" onClick={() => insert('image', { type: 'image', attrs: { src: '', alt: '' } })}>
            + Image
          </ToolButton>
          <ToolButton label="Insert divider" onClick={() => insertHere({ type: 'horizontalRule' })}>
            + Divider
          </ToolButton>
          <ToolButton label="Insert spacer" onClick={() => insert('spacer', { type: 'spacer', attrs: { height: 'md' } })}>
            + Spacer
          </ToolButton>
          <ToolButton
            label="Insert two columns"
            onClick={() =>
              insertHere({
                type: 'columns',
                content: [
                  { type: 'column', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Left column' }] }] },
                  { type: 'column', content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Right column' }] }] },
                ],
              })
            }
          >
            + Columns
          </ToolButton>
          <ToolButton
            label="Insert footer with unsubscribe link"
            onClick={() =>
              insertHere({
                type: 'footer',
                content: [
                  { type: 'text', text: 'You receive this email because you subscribed. ' },
                  { type: 'text', text: 'Unsubscribe', marks: [{ type: 'link', attrs: { href: '{{usesend_unsubscribe_url}}' } }] },
                ],
              })
            }
          >
            + Footer
          </ToolButton>
        </div>
      )}
      {!readOnly && (
        <div className="ee-variables" role="group" aria-label="Personalization">
          <div className="ee-field">
            <label htmlFor={`${id}-variable`}>Variable</label>
            <select id={`${id}-variable`} value={variable} onChange={(e) => setVariable(e.target.value)}>
              {variables.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </div>
          <div className="ee-field">
            <label htmlFor={`${id}-fallback`}>Fallback</label>
            <input
              id={`${id}-fallback`}
              value={fallback}
              onChange={(e) => setFallback(e.target.value)}
              maxLength={200}
              placeholder="when the contact has none"
            />
          </div>
          <button
            type="button"
            className="btn btn-small"
            disabled={!variable}
            onClick={() => insertHere({ type: 'variable', attrs: { id: variable, fallback } })}
          >
            Insert variable
          </button>
        </div>
      )}
      {linkOpen && (
        <div className="ee-panel" role="group" aria-label="Link">
          <label htmlFor={`${id}-href`}>Link address</label>
          <input
            id={`${id}-href`}
            value={linkHref}
            autoFocus
            maxLength={2000}
            onChange={(e) => setLinkHref(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                applyLink();
              } else if (e.key === 'Escape') setLinkOpen(false);
            }}
          />
          <button type="button" className="btn btn-small" onClick={applyLink}>
            Apply link
          </button>
          <button
            type="button"
            className="btn btn-small"
            onClick={() => (setLinkHref(''), chain().extendMarkRange('link').unsetLink().run(), setLinkOpen(false))}
          >
            Remove link
          </button>
        </div>
      )}
      <EditorContent editor={editor} className="ee-surface" />
      {selected && !readOnly && ['button', 'image', 'logo', 'spacer'].includes(selected.type.name) && (
        <div className="ee-panel" role="group" aria-label={`Selected ${selected.type.name}`}>
          {selected.type.name === 'button' && (
            <>
              <label htmlFor={`${id}-text`}>Button text</label>
              <input id={`${id}-text`} value={attrs.text ?? ''} maxLength={200} onChange={(e) => setAttr('text', e.target.value)} />
              <label htmlFor={`${id}-url`}>Button link</label>
              <input id={`${id}-url`} value={attrs.url ?? ''} maxLength={2000} onChange={(e) => setAttr('url', e.target.value)} />
            </>
          )}
          {(selected.type.name === 'image' || selected.type.name === 'logo') && (
            <>
              <label htmlFor={`${id}-src`}>Image address (https://…)</label>
              <input id={`${id}-src`} value={attrs.src ?? ''} maxLength={2000} onChange={(e) => setAttr('src', e.target.value)} />
              <label htmlFor={`${id}-alt`}>Alternative text</label>
              <input id={`${id}-alt`} value={attrs.alt ?? ''} maxLength={300} onChange={(e) => setAttr('alt', e.target.value)} />
              <label htmlFor={`${id}-width`}>Width in pixels (empty: full width)</label>
              <input
                id={`${id}-width`}
                inputMode="numeric"
                value={attrs.width ?? ''}
                maxLength={4}
                onChange={(e) => setAttr('width', e.target.value)}
              />
            </>
          )}
          {selected.type.name === 'spacer' && (
            <>
              <label htmlFor={`${id}-height`}>Spacer height</label>
              <select id={`${id}-height`} value={attrs.height ?? 'md'} onChange={(e) => setAttr('height', e.target.value)}>
                {SPACER_SIZES.map(([v, text]) => (
                  <option key={v} value={v}>
                    {text}
                  </option>
                ))}
              </select>
            </>
          )}
          {selected.type.name !== 'spacer' && (
            <>
              <label htmlFor={`${id}-align`}>Alignment</label>
              <select id={`${id}-align`} value={attrs.alignment ?? 'left'} onChange={(e) => setAttr('alignment', e.target.value)}>
                <option value="left">Left</option>
                <option value="center">Center</option>
                <option value="right">Right</option>
              </select>
            </>
          )}
        </div>
      )}
    </div>
  );
}
