import type { Config } from '@mailrail/platform/config/schema';
import { prepareCampaignBody, renderCampaignContent, type CampaignContact } from './campaign-content';
import { renderCampaignEmail, type CampaignBook, type RenderedCampaignEmail } from './render-campaign-email';

// A campaign rendered for one contact for the editor's preview and test send: the editor JSON
// turned into HTML when given, the size cap, the text version, the personalization. Pure and
// synchronous, so it can run on a thread of its own (apps/api/src/campaigns/render-pool.ts): its
// time grows with the body, and on the event loop one team's 2 MB previews held every other
// team's requests (fault scenario 13).

export interface PreviewInput {
  config: Pick<Config, 'PUBLIC_URL' | 'SECRET'>;
  /** The editor JSON to render, else `html`. */
  content?: string;
  html?: string | null;
  subject: string;
  previewText?: string | null;
  campaign: CampaignBook;
  contact: CampaignContact;
  /** The largest HTML rendered (CAMPAIGN_PREVIEW_MAX_MB), checked after the editor JSON became HTML. */
  maxHtmlBytes: number;
}

/** Why a preview could not be rendered, in the terms of the API's error answer. */
export type PreviewRefusal =
  { kind: 'invalid-content' } | { kind: 'no-content' } | { kind: 'too-large'; field: 'content' | 'html'; bytes: number };

export type PreviewOutcome = { rendered: RenderedCampaignEmail } | { refused: PreviewRefusal };

/** The UTF-8 size of `text` when it is over `maxBytes`, else null (the preview cap, here and in the API). */
export function bytesOver(text: string, maxBytes: number): number | null {
  // Every UTF-16 unit is at most 3 bytes of UTF-8: short bodies skip the byte count.
  if (text.length * 3 <= maxBytes) return null;
  const bytes = Buffer.byteLength(text);
  return bytes > maxBytes ? bytes : null;
}

export function renderPreview(input: PreviewInput): PreviewOutcome {
  let html = input.html ?? null;
  if (input.content !== undefined) {
    html = renderCampaignContent(input.content);
    if (html === null) return { refused: { kind: 'invalid-content' } };
  }
  if (!html) return { refused: { kind: 'no-content' } };
  const bytes = bytesOver(html, input.maxHtmlBytes);
  if (bytes !== null) return { refused: { kind: 'too-large', field: input.content !== undefined ? 'content' : 'html', bytes } };
  const body = prepareCampaignBody({ subject: input.subject, html, previewText: input.previewText });
  return { rendered: renderCampaignEmail(input.config, body, input.campaign, input.contact) };
}
