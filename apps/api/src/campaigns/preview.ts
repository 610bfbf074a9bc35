import { ApiError, badRequest } from '@mailrail/domain/errors/api-error';
import type { CampaignContact } from '@mailrail/domain/campaigns/campaign-content';
import { bytesOver } from '@mailrail/domain/campaigns/render-preview';
import { registryFallbacks } from '@mailrail/domain/audience/properties/contact-properties';
import type { Campaign } from '@mailrail/platform/db/generated/client';
import type { ApiDeps } from '../deps';
import type { AuthContext } from '../http/auth';
import { MAX_SUBJECT_LENGTH } from '../http/limits';
import type { SendEmailPayload } from '../emails/schemas';
import { sendEmails, type SendContext } from '../emails/send-emails';
import type { PreviewCampaignBody, TestCampaignBody } from './schemas';
import { findCampaign } from './service';

// The editor's preview and "send test": the campaign rendered for one contact by the function the
// worker sends with (renderCampaignEmail), so what the marketer sees is what the contact gets.

/** A contact of the campaign's book: the one asked for, else the book's first (by id); null when the book is empty. */
async function previewContact(deps: ApiDeps, c: Campaign, contactId: string | undefined): Promise<CampaignContact | null> {
  const select = { id: true, email: true, firstName: true, lastName: true, properties: true };
  if (contactId !== undefined) {
    const contact = c.contactBookId
      ? await deps.db.contact.findFirst({ where: { id: contactId, contactBookId: c.contactBookId }, select })
      : null;
    if (!contact)
      throw badRequest("Contact not found in the campaign's contact book", [{ path: ['contactId'], message: 'Contact not found' }]);
    return contact;
  }
  if (!c.contactBookId) return null;
  return deps.db.contact.findFirst({ where: { contactBookId: c.contactBookId }, orderBy: { id: 'asc' }, select });
}

// With no contact (an empty book) the fields are empty, so fallbacks show, and the link is the
// unsubscribe page's for no one.
const NO_CONTACT: CampaignContact = { id: '', email: '', firstName: null, lastName: null, properties: null };

/**
 * A body over CAMPAIGN_PREVIEW_MAX_MB is refused before it is rendered: rendering and its text
 * conversion take time that grows with the body (36 MB blocked the event loop for seconds).
 */
function tooLarge(deps: ApiDeps, field: 'content' | 'html', bytes: number): ApiError {
  return new ApiError(
    'PAYLOAD_TOO_LARGE',
    `The campaign's ${field} is ${(bytes / 1048576).toFixed(1)} MB; previews and test sends render at most ${deps.config.CAMPAIGN_PREVIEW_MAX_MB} MB (CAMPAIGN_PREVIEW_MAX_MB)`,
    [{ path: [field], message: 'too large to preview' }],
  );
}

const previewMaxBytes = (deps: ApiDeps) => deps.config.CAMPAIGN_PREVIEW_MAX_MB * 1024 * 1024;

function checkPreviewSize(deps: ApiDeps, field: 'content' | 'html', body: string): void {
  const bytes = bytesOver(body, previewMaxBytes(deps));
  if (bytes !== null) throw tooLarge(deps, field, bytes);
}

/** Renders under a place of the team's preview budget (docs/security.md, "Resource budgets"). */
function renderFor(deps: ApiDeps, c: Campaign, overrides: PreviewCampaignBody) {
  return deps.budgets.run('preview', c.teamId, () => renderInBudget(deps, c, overrides));
}

async function renderInBudget(deps: ApiDeps, c: Campaign, overrides: PreviewCampaignBody) {
  // The editor JSON or HTML given is checked here, before it is copied to a render thread.
  const given = overrides.content !== undefined ? 'content' : overrides.html !== undefined ? 'html' : null;
  if (given) checkPreviewSize(deps, given, overrides[given]!);
  const contact = await previewContact(deps, c, overrides.contactId);
  const book = c.contactBookId
    ? await deps.db.contactBook.findUnique({
        where: { id: c.contactBookId },
        select: { variables: true, propertyDefinitions: { select: { name: true, fallback: true } } },
      })
    : null;
  // The render itself (editor JSON to HTML, text version, personalization) runs on a render
  // thread (render-pool.ts): its time grows with the body.
  const outcome = await deps.previews.render({
    config: { PUBLIC_URL: deps.config.PUBLIC_URL, SECRET: deps.config.SECRET },
    ...(overrides.content !== undefined ? { content: overrides.content } : { html: overrides.html ?? c.html }),
    subject: overrides.subject ?? c.subject,
    previewText: overrides.previewText ?? c.previewText,
    campaign: { id: c.id, bookVariables: book?.variables ?? [], propertyFallbacks: registryFallbacks(book?.propertyDefinitions ?? null) },
    contact: contact ?? NO_CONTACT,
    maxHtmlBytes: previewMaxBytes(deps),
  });
  if ('rendered' in outcome) return { rendered: outcome.rendered, contact };
  const refusal = outcome.refused;
  if (refusal.kind === 'invalid-content')
    throw badRequest('Invalid content JSON', [{ path: ['content'], message: 'Invalid content JSON' }]);
  if (refusal.kind === 'no-content')
    throw badRequest('No content added for campaign', [{ path: ['html'], message: 'No content added for campaign' }]);
  throw tooLarge(deps, refusal.field, refusal.bytes);
}

/**
 * The preview takes its place in the team's preview budget before `readBody` reads the request:
 * a team over its budget is refused without the cost of parsing a body of up to
 * CAMPAIGN_PREVIEW_MAX_MB (fault scenario 13, noisy-sends).
 */
export function previewCampaign(deps: ApiDeps, auth: AuthContext, id: string, readBody: () => Promise<PreviewCampaignBody>) {
  return deps.budgets.run('preview', auth.teamId, async () => {
    const body = await readBody();
    const c = await findCampaign(deps, auth, id);
    const { rendered, contact } = await renderInBudget(deps, c, body);
    return {
      subject: rendered.subject,
      html: rendered.html,
      text: rendered.text,
      contact: contact ? { id: contact.id, email: contact.email } : null,
    };
  });
}

/**
 * One email per address, rendered for the contact as the preview is, sent through the path of
 * POST /api/v1/emails (sender domain, suppressions, size), so a test reaches SES like any email.
 */
export async function sendCampaignTest(send: SendContext, auth: AuthContext, id: string, body: TestCampaignBody) {
  const { deps } = send;
  const c = await findCampaign(deps, auth, id);
  const { rendered } = await renderFor(deps, c, { contactId: body.contactId });
  const payloads: SendEmailPayload[] = body.to.map((to) => ({
    to: [to],
    from: c.from,
    subject: `[Test] ${rendered.subject}`.slice(0, MAX_SUBJECT_LENGTH),
    html: rendered.html,
    text: rendered.text,
    ...(c.replyTo.length ? { replyTo: c.replyTo } : {}),
  }));
  const emailIds = await sendEmails(send, auth, { payloads, batch: true, idempotencyKey: undefined, body: payloads });
  return { emailIds };
}
