import type * as ReactModule from 'react';
import type * as ReactDomServer from 'react-dom/server';
import type * as BodyModule from '@react-email/body';
import type * as ButtonModule from '@react-email/button';
import type * as ColumnModule from '@react-email/column';
import type * as ContainerModule from '@react-email/container';
import type * as HeadModule from '@react-email/head';
import type * as HeadingModule from '@react-email/heading';
import type * as HrModule from '@react-email/hr';
import type * as HtmlModule from '@react-email/html';
import type * as ImgModule from '@react-email/img';
import type * as LinkModule from '@react-email/link';
import type * as RowModule from '@react-email/row';
import type * as SectionModule from '@react-email/section';
import type * as TextModule from '@react-email/text';
import { loadOnFirstUse } from '@mailrail/platform/process/load-on-first-use';
import { foldLongLines } from './fold-long-lines';

// The editor's JSON (the TipTap/maily tree useSend's editor stores, and the dashboard's editor
// writes) rendered to email-safe HTML with React Email's components: tables for layout, inline
// styles, Outlook's padding hacks on buttons. Rendered with react-dom/server's synchronous
// renderToStaticMarkup: it runs once per campaign (on save and in the preview), never per contact.
// React and the components load on the first render (docs/worker.md, "Memory"), each named
// literally so the build's check sees every package the output loads.

export interface EmailNode {
  type: string;
  attrs?: Record<string, unknown>;
  content?: EmailNode[];
  text?: string;
  marks?: { type: string; attrs?: Record<string, unknown> }[];
}

export interface EmailRenderOptions {
  /**
   * What a `variable` node becomes: its value (DOI: the real value) or a `{{id,fallback=x}}`
   * placeholder (campaigns: filled per contact later). Looked up case-insensitively.
   */
  variable: (id: string, fallback: string) => string;
}

const react = loadOnFirstUse<typeof ReactModule>('react');
const server = loadOnFirstUse<typeof ReactDomServer>('react-dom/server');
let loadedComponents: ReturnType<typeof loadComponents> | undefined;
const components = () => (loadedComponents ??= loadComponents());
function loadComponents() {
  return {
    Body: loadOnFirstUse<typeof BodyModule>('@react-email/body')().Body,
    Button: loadOnFirstUse<typeof ButtonModule>('@react-email/button')().Button,
    Column: loadOnFirstUse<typeof ColumnModule>('@react-email/column')().Column,
    Container: loadOnFirstUse<typeof ContainerModule>('@react-email/container')().Container,
    Head: loadOnFirstUse<typeof HeadModule>('@react-email/head')().Head,
    Heading: loadOnFirstUse<typeof HeadingModule>('@react-email/heading')().Heading,
    Hr: loadOnFirstUse<typeof HrModule>('@react-email/hr')().Hr,
    Html: loadOnFirstUse<typeof HtmlModule>('@react-email/html')().Html,
    Img: loadOnFirstUse<typeof ImgModule>('@react-email/img')().Img,
    Link: loadOnFirstUse<typeof LinkModule>('@react-email/link')().Link,
    Row: loadOnFirstUse<typeof RowModule>('@react-email/row')().Row,
    Section: loadOnFirstUse<typeof SectionModule>('@react-email/section')().Section,
    Text: loadOnFirstUse<typeof TextModule>('@react-email/text')().Text,
  };
}

type Child = ReactModule.ReactNode;

const FONT = '-apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif';
const INK = '#111827';
const MUTED = '#6b7280';

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const isNode = (v: unknown): v is EmailNode =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as EmailNode).type === 'string';

/** Only http(s), mailto, tel, relative and `{{placeholder}}` targets: no `javascript:` in an email. */
function safeHref(v: unknown): string | undefined {
  const href = str(v).trim();
  if (!href) return undefined;
  return /^(https?:|mailto:|tel:|\{\{|\/|#)/i.test(href) ? href : undefined;
}

type Align = 'left' | 'center' | 'right';
const align = (v: unknown): Align | undefined => (v === 'left' || v === 'center' || v === 'right' ? v : undefined);
/** A CSS colour as the editor stores it (#hex, rgb(), a name); anything else is dropped. */
const color = (v: unknown): string | undefined => {
  const c = str(v).trim();
  return /^(#[0-9a-f]{3,8}|rgba?\([0-9., %]{1,40}\)|[a-z]{3,20})$/i.test(c) ? c : undefined;
};

/** maily's spacer heights (names) or a number of pixels. */
const SPACER_HEIGHTS: Record<string, number> = { sm: 8, md: 16, lg: 32, xl: 64 };
function spacerHeight(v: unknown): number {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.min(400, Math.max(0, Math.round(v)));
  const named = SPACER_HEIGHTS[str(v)];
  if (named !== undefined) return named;
  const n = Number.parseInt(str(v), 10);
  return Number.isFinite(n) ? Math.min(400, Math.max(0, n)) : 16;
}

const HEADING_SIZES = [0, 32, 24, 20, 18, 16, 14];

/** The class of a column's cell: the one class of the email, for the rule that stacks them. */
const COLUMN_CLASS = 'mr-column';
/**
 * Columns stack on a narrow screen (Apple Mail, Gmail's apps, iOS and Android mail read <style>
 * media queries). A client without them (Outlook on Windows) keeps the table row: columns side by
 * side, each holding its content, which is the fallback.
 */
export const STACK_COLUMNS_CSS = `@media only screen and (max-width:480px){.${COLUMN_CLASS}{display:block!important;width:100%!important;max-width:100%!important;box-sizing:border-box;padding:0 0 8px!important}}`;

class Renderer {
  private key = 0;
  private readonly h = react().createElement;
  private readonly c = components();

  constructor(private readonly opts: EmailRenderOptions) {}

  private el(type: unknown, props: Record<string, unknown> | null, ...children: Child[]) {
    return this.h(type as string, { key: this.key++, ...props }, ...children);
  }

  private children(node: EmailNode): Child[] {
    return (node.content ?? []).filter(isNode).map((n) => this.node(n));
  }

  private text(node: EmailNode): Child {
    let out: Child = str(node.text);
    for (const m of node.marks ?? []) {
      if (m.type === 'bold') out = this.el('strong', null, out);
      else if (m.type === 'italic') out = this.el('em', null, out);
      else if (m.type === 'underline') out = this.el('u', null, out);
      else if (m.type === 'strike') out = this.el('s', null, out);
      else if (m.type === 'code')
        out = this.el('code', { style: { fontFamily: 'monospace', background: '#f3f4f6', padding: '0 3px' } }, out);
      else if (m.type === 'textStyle' && color(m.attrs?.color)) out = this.el('span', { style: { color: color(m.attrs?.color) } }, out);
      else if (m.type === 'link') {
        const href = safeHref(m.attrs?.href);
        out = href ? this.el(this.c.Link, { href, style: { color: '#2563eb', textDecoration: 'underline' } }, out) : out;
      }
    }
    return out;
  }

  private node(node: EmailNode): Child {
    const a = node.attrs ?? {};
    const { Button, Column, Heading, Hr, Img, Row, Section, Text } = this.c;
    switch (node.type) {
      case 'doc':
        return this.children(node);
      case 'text':
        return this.text(node);
      case 'variable': {
        const id = str(a.id);
        return id ? this.opts.variable(id, str(a.fallback)) : '';
      }
      case 'hardBreak':
        return this.el('br', null);
      case 'paragraph':
        return this.el(
          Text,
          { style: { margin: '0 0 16px', fontSize: '16px', lineHeight: '24px', color: INK, textAlign: align(a.textAlign) } },
          ...this.children(node),
        );
      case 'heading': {
        const level = Math.min(6, Math.max(1, Number(a.level) || 1)) as 1 | 2 | 3 | 4 | 5 | 6;
        return this.el(
          Heading,
          {
            as: `h${level}`,
            style: {
              margin: '0 0 12px',
              fontSize: `${HEADING_SIZES[level]}px`,
              lineHeight: '1.3',
              color: INK,
              textAlign: align(a.textAlign),
            },
          },
          ...this.children(node),
        );
      }
      case 'bulletList':
        return this.el('ul', { style: { margin: '0 0 16px', paddingLeft: '24px', color: INK } }, ...this.children(node));
      case 'orderedList':
        return this.el('ol', { style: { margin: '0 0 16px', paddingLeft: '24px', color: INK } }, ...this.children(node));
      case 'listItem':
        // A list item holds paragraphs: their bottom margin would open gaps inside the list.
        return this.el(
          'li',
          { style: { fontSize: '16px', lineHeight: '24px' } },
          ...(node.content ?? [])
            .filter(isNode)
            .map((n) => (n.type === 'paragraph' ? this.el('span', null, ...this.children(n)) : this.node(n))),
        );
      case 'blockquote':
        return this.el(
          'blockquote',
          { style: { margin: '0 0 16px', padding: '0 0 0 12px', borderLeft: '3px solid #d1d5db', color: MUTED } },
          ...this.children(node),
        );
      case 'codeBlock':
        return this.el(
          'pre',
          { style: { margin: '0 0 16px', padding: '12px', background: '#f3f4f6', fontSize: '13px', whiteSpace: 'pre-wrap' } },
          ...this.children(node),
        );
      case 'horizontalRule':
        return this.el(Hr, { style: { margin: '24px 0', border: 'none', borderTop: '1px solid #e5e7eb' } });
      case 'spacer': {
        const height = spacerHeight(a.height);
        return this.el(Section, { style: { height: `${height}px`, lineHeight: `${height}px`, fontSize: '1px' } }, '\u00a0');
      }
      case 'image':
      case 'logo': {
        const src = safeHref(a.src);
        if (!src) return null;
        const parsedWidth = Number.parseInt(str(a.width), 10);
        const width = Number.isFinite(parsedWidth) && parsedWidth > 0 ? Math.min(parsedWidth, 600) : undefined;
        // The width attribute for Outlook; width:100% capped by max-width for the rest: a table cell
        // grows to an image's width attribute, so max-width:100% alone overflows a phone's screen.
        const img = this.el(Img, {
          src,
          alt: str(a.alt) || str(a.title),
          width,
          style: width
            ? { width: '100%', maxWidth: `${width}px`, height: 'auto', display: 'inline-block' }
            : { maxWidth: '100%', height: 'auto', display: 'inline-block' },
        });
        const link = safeHref(a.externalLink ?? a.href);
        return this.el(
          Section,
          { style: { margin: '0 0 16px', textAlign: align(a.alignment ?? a.textAlign) ?? 'left' } },
          link ? this.el('a', { href: link }, img) : img,
        );
      }
      case 'button': {
        const href = safeHref(a.url ?? a.href) ?? '#';
        const filled = a.variant !== 'outline';
        const background = color(a.buttonColor) ?? INK;
        const radius = a.borderRadius === 'sharp' ? '0' : a.borderRadius === 'round' ? '9999px' : '6px';
        return this.el(
          Section,
          { style: { margin: '8px 0 24px', textAlign: align(a.alignment ?? a.textAlign) ?? 'left' } },
          this.el(
            Button,
            {
              href,
              style: {
                display: 'inline-block',
                padding: '12px 20px',
                fontSize: '16px',
                fontWeight: 600,
                textDecoration: 'none',
                borderRadius: radius,
                background: filled ? background : 'transparent',
                border: `2px solid ${background}`,
                color: color(a.textColor) ?? (filled ? '#ffffff' : background),
              },
            },
            str(a.text ?? a.label) || 'Open',
          ),
        );
      }
      case 'footer':
        return this.el(
          Text,
          { style: { margin: '24px 0 0', fontSize: '13px', lineHeight: '20px', color: MUTED, textAlign: align(a.textAlign) } },
          ...this.children(node),
        );
      case 'columns': {
        const cols = (node.content ?? []).filter((n) => isNode(n) && n.type === 'column');
        const even = `${Math.floor(100 / Math.max(1, cols.length))}%`;
        return this.el(
          Section,
          { style: { margin: '0 0 16px' } },
          this.el(
            Row,
            null,
            ...cols.map((col) => {
              const w = Number(col.attrs?.width);
              return this.el(
                Column,
                {
                  className: COLUMN_CLASS,
                  style: { width: Number.isFinite(w) && w > 0 && w <= 100 ? `${w}%` : even, verticalAlign: 'top', padding: '0 8px' },
                },
                ...this.children(col),
              );
            }),
          ),
        );
      }
      case 'section':
        return this.el(
          Section,
          {
            style: {
              margin: '0 0 16px',
              padding: '16px',
              background: color(a.backgroundColor),
              borderRadius: a.borderRadius ? `${Number.parseInt(str(a.borderRadius), 10) || 0}px` : undefined,
              textAlign: align(a.align),
            },
          },
          ...this.children(node),
        );
      case 'html':
        // Raw HTML the author wrote (the editor's HTML mode, or a contact book's old text).
        return this.el('div', { dangerouslySetInnerHTML: { __html: str(a.html) } });
      default:
        // Nodes of newer maily versions (repeat, linkCard, ...): their content still shows.
        return this.children(node);
    }
  }

  document(doc: EmailNode): Child {
    const { Body, Container, Head, Html } = this.c;
    return this.el(
      Html,
      { lang: 'en' },
      this.el(Head, null, this.el('style', { dangerouslySetInnerHTML: { __html: STACK_COLUMNS_CSS } })),
      this.el(
        Body,
        { style: { margin: 0, padding: 0, background: '#ffffff', fontFamily: FONT } },
        this.el(Container, { style: { maxWidth: '600px', margin: '0 auto', padding: '24px 16px' } }, this.node(doc)),
      ),
    );
  }
}

/** The full HTML email of a document, lines at most 998 characters (RFC 5322). */
export function renderEmailDocument(doc: EmailNode, opts: EmailRenderOptions): string {
  const markup = server().renderToStaticMarkup(new Renderer(opts).document(doc) as ReactModule.ReactElement);
  return foldLongLines(`<!DOCTYPE html>${markup}`);
}
