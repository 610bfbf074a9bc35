import { Extension, mergeAttributes, Node } from '@tiptap/core';
import Image from '@tiptap/extension-image';
import StarterKit from '@tiptap/starter-kit';
import { Placeholder } from '@tiptap/extensions';

// The editor's schema: TipTap's StarterKit plus the email blocks of useSend's maily editor, with
// maily's node names and attributes, so documents made in useSend open here and what is written
// here renders with packages/domain/src/email-editor/render-email-document.ts.

/** Attributes kept as they are (declared so TipTap does not drop them), read from and written to data-*. */
function kept(names: Record<string, unknown>) {
  return () =>
    Object.fromEntries(
      Object.entries(names).map(([name, fallback]) => [
        name,
        {
          default: fallback,
          parseHTML: (el: HTMLElement) => el.getAttribute(`data-${name}`) ?? fallback,
          renderHTML: (attrs: Record<string, unknown>) =>
            attrs[name] === null || attrs[name] === undefined ? {} : { [`data-${name}`]: String(attrs[name]) },
        },
      ]),
    );
}

/** Unsubscribe and other `{{placeholder}}` targets are links too. */
const allowedHref = (url: string, ctx: { defaultValidate: (url: string) => boolean }) =>
  /^\{\{[\w.-]+\}\}$/.test(url) || ctx.defaultValidate(url);

/** maily's text alignment, kept on the blocks that carry it. */
const TextAlign = Extension.create({
  name: 'textAlignAttr',
  addGlobalAttributes() {
    return [
      {
        types: ['paragraph', 'heading', 'footer'],
        attributes: {
          textAlign: {
            default: null,
            parseHTML: (el) => el.style.textAlign || null,
            renderHTML: (attrs) => (attrs.textAlign ? { style: `text-align:${String(attrs.textAlign)}` } : {}),
          },
        },
      },
    ];
  },
});

export const ButtonNode = Node.create({
  name: 'button',
  group: 'block',
  atom: true,
  selectable: true,
  draggable: true,
  addAttributes: kept({
    text: 'Button',
    url: 'https://',
    alignment: 'left',
    variant: 'filled',
    borderRadius: 'smooth',
    buttonColor: null,
    textColor: null,
  }),
  parseHTML: () => [{ tag: 'div[data-type="button"]' }],
  renderHTML({ HTMLAttributes, node }) {
    return [
      'div',
      mergeAttributes(HTMLAttributes, { 'data-type': 'button', class: 'ee-block ee-button-block' }),
      ['span', { class: 'ee-button' }, String(node.attrs.text || 'Button')],
    ];
  },
});

export const SpacerNode = Node.create({
  name: 'spacer',
  group: 'block',
  atom: true,
  selectable: true,
  addAttributes: kept({ height: 'md' }),
  parseHTML: () => [{ tag: 'div[data-type="spacer"]' }],
  renderHTML: ({ HTMLAttributes }) => [
    'div',
    mergeAttributes(HTMLAttributes, { 'data-type': 'spacer', class: 'ee-block ee-spacer', 'aria-label': 'Spacer' }),
  ],
});

/** Raw HTML inside a block document (an old body kept when switching to blocks). */
export const HtmlNode = Node.create({
  name: 'html',
  group: 'block',
  atom: true,
  selectable: true,
  addAttributes: kept({ html: '' }),
  parseHTML: () => [{ tag: 'div[data-type="html"]' }],
  renderHTML: ({ HTMLAttributes, node }) => [
    'div',
    mergeAttributes(HTMLAttributes, { 'data-type': 'html', class: 'ee-block ee-html' }),
    `HTML block (${String(node.attrs.html).length} characters)`,
  ],
});

export const FooterNode = Node.create({
  name: 'footer',
  group: 'block',
  content: 'inline*',
  defining: true,
  parseHTML: () => [{ tag: 'footer' }],
  renderHTML: ({ HTMLAttributes }) => ['footer', mergeAttributes(HTMLAttributes, { class: 'ee-footer' }), 0],
});

export const ColumnsNode = Node.create({
  name: 'columns',
  group: 'block',
  content: 'column+',
  defining: true,
  isolating: true,
  addAttributes: kept({ gap: null }),
  parseHTML: () => [{ tag: 'div[data-type="columns"]' }],
  renderHTML: ({ HTMLAttributes }) => ['div', mergeAttributes(HTMLAttributes, { 'data-type': 'columns', class: 'ee-columns' }), 0],
});

export const ColumnNode = Node.create({
  name: 'column',
  content: 'block+',
  isolating: true,
  addAttributes: kept({ width: null, verticalAlign: null }),
  parseHTML: () => [{ tag: 'div[data-type="column"]' }],
  renderHTML: ({ HTMLAttributes }) => ['div', mergeAttributes(HTMLAttributes, { 'data-type': 'column', class: 'ee-column' }), 0],
});

/** maily's section: a box around blocks (background, radius), kept and edited as its content. */
export const SectionNode = Node.create({
  name: 'section',
  group: 'block',
  content: 'block+',
  defining: true,
  addAttributes: kept({ backgroundColor: null, borderRadius: null, align: null }),
  parseHTML: () => [{ tag: 'div[data-type="section"]' }],
  renderHTML: ({ HTMLAttributes }) => ['div', mergeAttributes(HTMLAttributes, { 'data-type': 'section', class: 'ee-section' }), 0],
});

/** A personalization variable: filled per contact, its fallback when the contact has no value. */
export const VariableNode = Node.create({
  name: 'variable',
  group: 'inline',
  inline: true,
  atom: true,
  selectable: true,
  addAttributes: kept({ id: '', fallback: '' }),
  parseHTML: () => [{ tag: 'span[data-type="variable"]' }],
  renderHTML: ({ HTMLAttributes, node }) => [
    'span',
    mergeAttributes(HTMLAttributes, { 'data-type': 'variable', class: 'ee-variable' }),
    `{{${String(node.attrs.id)}${node.attrs.fallback ? ` | ${String(node.attrs.fallback)}` : ''}}}`,
  ],
});

const EmailImage = Image.extend({
  addAttributes() {
    return { ...this.parent?.(), ...kept({ alignment: 'left', externalLink: null })() };
  },
}).configure({ inline: false });

/** maily's logo: an image by another name. */
const LogoNode = EmailImage.extend({ name: 'logo' });

export function emailExtensions(placeholder: string) {
  return [
    StarterKit.configure({
      heading: { levels: [1, 2, 3] },
      link: { openOnClick: false, autolink: true, isAllowedUri: allowedHref, HTMLAttributes: { rel: null, target: null } },
    }),
    Placeholder.configure({ placeholder }),
    TextAlign,
    EmailImage,
    LogoNode,
    ButtonNode,
    SpacerNode,
    HtmlNode,
    FooterNode,
    ColumnsNode,
    ColumnNode,
    SectionNode,
    VariableNode,
  ];
}
