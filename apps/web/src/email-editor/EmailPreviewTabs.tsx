import { useState } from 'react';
import { Tabs } from 'radix-ui';
import { EmailHtmlPreview } from '../emails/EmailHtmlPreview';

type PreviewView = 'desktop' | 'phone' | 'text';

/** The width of a desktop mail client's reading pane: wide enough for a 600 px email and its columns side by side. */
const DESKTOP_CLIENT_WIDTH = 680;

/**
 * A rendered email (the server's preview of a campaign or a template) at desktop and phone widths
 * and as its text part: the one preview of the editors' pages.
 */
export function EmailPreviewTabs({ html, text, textNote }: { html: string | null; text: string; textNote?: string }) {
  const [view, setView] = useState<PreviewView>('desktop');
  return (
    <Tabs.Root value={view} onValueChange={(v) => setView(v as PreviewView)}>
      <Tabs.List className="tabs" aria-label="Preview as">
        <Tabs.Trigger value="desktop" className="tab">
          Desktop
        </Tabs.Trigger>
        <Tabs.Trigger value="phone" className="tab">
          Phone
        </Tabs.Trigger>
        <Tabs.Trigger value="text" className="tab">
          Plain text
        </Tabs.Trigger>
      </Tabs.List>
      <Tabs.Content value="desktop" className="preview-desktop">
        {html === null ? <p className="muted">No HTML part.</p> : <EmailHtmlPreview html={html} renderWidth={DESKTOP_CLIENT_WIDTH} />}
      </Tabs.Content>
      <Tabs.Content value="phone" className="preview-phone">
        {html === null ? <p className="muted">No HTML part.</p> : <EmailHtmlPreview html={html} />}
      </Tabs.Content>
      <Tabs.Content value="text">
        {textNote && <p className="hint">{textNote}</p>}
        <pre className="text-part" data-testid="preview-text" tabIndex={0} aria-label="Text part of the email">
          {text}
        </pre>
      </Tabs.Content>
    </Tabs.Root>
  );
}
