import { z } from 'zod';
import { outcomeRatesSchema } from '../analytics/openapi';
import { documentRoute, type DocRegistry } from '../openapi/registry';
import {
  campaignIdParams,
  campaignStatus,
  createCampaignBody,
  listCampaignRecipientsQuery,
  listCampaignsQuery,
  previewCampaignBody,
  scheduleCampaignBody,
  testCampaignBody,
  recipientOutcomeField,
  updateCampaignBody,
} from './schemas';
import { CAMPAIGN_RECIPIENT_REASONS } from '@mailrail/domain/campaigns/recipient-outcomes';

const counters = {
  total: z.number().int(),
  sent: z.number().int(),
  delivered: z.number().int(),
  unsubscribed: z.number().int(),
};

export const campaignResponse = z
  .object({
    id: z.string(),
    name: z.string(),
    from: z.string(),
    subject: z.string(),
    previewText: z.string().nullable(),
    contactBookId: z.string().nullable(),
    segmentId: z.string().nullable().describe('The segment of the book whose subscribed contacts are the audience; null = the whole book'),
    html: z.string().nullable(),
    content: z.string().nullable(),
    status: campaignStatus,
    pausedReason: z
      .string()
      .nullable()
      .describe('Why the server paused the campaign (its recipients could not be prepared); null when it was not paused by the server'),
    scheduledAt: z.string().nullable(),
    batchSize: z.number().int(),
    batchWindowMinutes: z.number().int(),
    ramp: z.object({ start: z.number().int(), factor: z.number() }).nullable(),
    window: z
      .object({
        number: z.number().int().describe('0-based; window k of a ramp sends min(batchSize, floor(start * factor^k))'),
        size: z.number().int().describe('Emails this window may send'),
        startedAt: z.string(),
        nextAt: z.string().describe('When the next window may open'),
      })
      .nullable()
      .describe('The window the engine opened last; null before the first one and when batchWindowMinutes is 0'),
    ...counters,
    opened: z.number().int(),
    clicked: z.number().int(),
    bounced: z.number().int(),
    hardBounced: z.number().int(),
    complained: z.number().int(),
    rates: outcomeRatesSchema,
    replyTo: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Campaign' });

const count = z.number().int();
const recipientReason = z.enum(CAMPAIGN_RECIPIENT_REASONS);

const recipientOutcomes = z
  .object({
    sent: count.describe('Accepted by SES (the `sent` counter); delivered, bounced and complained are among them'),
    suppressed: count.describe('Not sent: the address is on the suppression list'),
    unsubscribed: count.describe('Not sent: the contact unsubscribed, or was deleted, after the campaign started'),
    failed: count.describe('Not sent: the email was refused before SES accepted it (or cancelled)'),
    inProgress: count.describe('Not settled yet: waiting for its window, or its email not yet answered by SES'),
    skippedByReason: z
      .object(Object.fromEntries([...CAMPAIGN_RECIPIENT_REASONS, 'UNKNOWN'].map((r) => [r, count])))
      .describe(
        "The suppressed, unsubscribed and failed recipients by reason: HARD_BOUNCE, COMPLAINT, MANUAL (suppressed); UNSUBSCRIBED, CONTACT_DELETED (unsubscribed); FAILED, REJECTED, RENDERING_FAILURE, CANCELLED (failed, the email's status); UNKNOWN for recipients recorded before reasons were",
      ),
  })
  .nullable()
  .describe(
    'The recipients by outcome (mailrail; not in useSend): sent + suppressed + unsubscribed + failed + inProgress = total. Null until the audience is fixed (total is 0 then).',
  )
  .meta({ id: 'CampaignRecipientOutcomes' });

const campaignDetail = campaignResponse.extend({ recipientOutcomes }).meta({ id: 'CampaignDetail' });

const recipientRow = z
  .object({
    contactId: z.string(),
    email: z.string(),
    outcome: recipientOutcomeField.describe(
      "pending (not settled), sent (accepted by SES, no later news), delivered, bounced, complained (SES's later events), suppressed, unsubscribed, failed",
    ),
    reason: recipientReason
      .nullable()
      .describe("Why it was not sent to (suppressed, unsubscribed, failed: the email's status); null otherwise"),
    emailId: z.string().nullable().describe('The email written for this recipient; null when none was (yet)'),
  })
  .meta({ id: 'CampaignRecipient' });

const listItem = z.object({
  id: z.string(),
  name: z.string(),
  from: z.string(),
  subject: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  status: campaignStatus,
  scheduledAt: z.string().nullable(),
  ...counters,
});

const success = z.object({ success: z.literal(true) });
const dryRunAnswer = z.object({ scheduledAt: z.string(), timeZone: z.string() });

// A key bound to a domain sees only the campaigns sent from it (useSend does not check this).
const scope =
  "A key bound to a domain sees and acts only on campaigns whose `from` is on its domain; any other campaign is a 404, like another team's.";

export function documentCampaignRoutes(r: DocRegistry) {
  const tag = 'Campaigns';
  const params = campaignIdParams;
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/campaigns',
    tag,
    summary: 'Create a campaign (and schedule it with sendNow or scheduledAt)',
    description: 'The `from` domain must be a verified domain of the team; a key bound to another domain gets 403, as for emails.',
    body: createCampaignBody,
    example: {
      name: 'November news',
      from: 'News <news@example.com>',
      subject: 'Hello {{firstName,fallback=there}}',
      contactBookId: 'cb_123',
      html: '<p>Hi {{firstName}}</p><a href="{{usesend_unsubscribe_url}}">Unsubscribe</a>',
      scheduledAt: 'tomorrow at 9am',
      batchSize: 500,
      batchWindowMinutes: 60,
      ramp: { start: 50, factor: 2 },
    },
    response: campaignResponse,
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/campaigns',
    tag,
    summary: 'List campaigns, newest first, 30 per page',
    description: scope,
    query: listCampaignsQuery,
    response: z.object({ campaigns: z.array(listItem), totalPage: z.number().int() }),
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/campaigns/:campaignId',
    tag,
    summary: 'Get a campaign with its counters',
    description: `${scope} \`recipientOutcomes\` (added by mailrail) says what became of every recipient, so the counts add up to \`total\`.`,
    params,
    response: campaignDetail,
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/campaigns/:campaignId/recipients',
    tag,
    summary: 'List the recipients of a campaign with their outcome (mailrail; not in useSend)',
    description: `${scope} One row per contact of the audience (empty until the audience is fixed), in contactId order, \`limit\` (at most 100) per page. Pass the answer's \`nextAfter\` as \`after\` for the next page; it is null on the last. \`outcome\` keeps only the recipients with that outcome.`,
    params,
    query: listCampaignRecipientsQuery,
    response: z.object({
      recipients: z.array(recipientRow),
      nextAfter: z.string().nullable().describe("The last row's contactId when there may be more; null on the last page"),
    }),
  });
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/schedule',
    tag,
    summary: 'Schedule a DRAFT, SCHEDULED or PAUSED campaign',
    description: `${scope} With \`dryRun: true\` every check runs, nothing changes, and the answer is \`{scheduledAt, timeZone}\`: the time the schedule resolves to (in the team's time zone, CAMPAIGN_TIMEZONE).`,
    params,
    body: scheduleCampaignBody,
    example: { scheduledAt: 'next monday 10:00', batchSize: 1000, batchWindowMinutes: 60, ramp: { start: 50, factor: 2 } },
    response: z.union([success, dryRunAnswer]),
  });
  documentRoute(r, {
    method: 'patch',
    path: '/api/v1/campaigns/:campaignId',
    tag,
    summary: 'Edit a DRAFT or SCHEDULED campaign that has not started sending',
    description: `${scope} Fields are checked as on create. A campaign that is RUNNING, PAUSED, SENT, or was started before (paused and scheduled again) is a 409.`,
    params,
    body: updateCampaignBody,
    example: { subject: 'Hello again {{firstName,fallback=there}}', ramp: { start: 50, factor: 2 }, batchWindowMinutes: 60 },
    response: campaignResponse,
    errors: [404, 409],
  });
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/preview',
    tag,
    summary: 'Render the campaign for one contact, as the engine will send it',
    description: `${scope} Overrides (the editor's unsaved text) replace the stored subject, body and preview text. The contact is \`contactId\` (400 if it is not in the campaign's book) or the book's first; \`contact\` is null for an empty book (fields empty, fallbacks shown).`,
    params,
    body: previewCampaignBody,
    example: { subject: 'Hi {{firstName}}' },
    response: z.object({
      subject: z.string(),
      html: z.string(),
      text: z.string(),
      contact: z.object({ id: z.string(), email: z.string() }).nullable(),
    }),
  });
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/test',
    tag,
    summary: 'Send the campaign to up to 5 addresses as a test',
    description: `${scope} One email per address, rendered for \`contactId\` (or the book's first contact) as the preview is, subject prefixed "[Test] ", sent through the path of POST /api/v1/emails (sender domain, suppressions, rate limits). The unsubscribe link in it is that contact's.`,
    params,
    body: testCampaignBody,
    example: { to: ['me@example.com'] },
    response: z.object({ emailIds: z.array(z.string()) }),
  });
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/pause',
    tag,
    summary: 'Pause a SCHEDULED or RUNNING campaign',
    description: scope,
    params,
    response: success,
  });
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/resume',
    tag,
    summary: 'Resume a PAUSED campaign where it stopped',
    description: scope,
    params,
    response: success,
  });
  documentRoute(r, {
    method: 'delete',
    path: '/api/v1/campaigns/:campaignId',
    tag,
    summary: 'Delete a campaign that is not RUNNING',
    description: scope,
    params,
    response: campaignResponse,
  });
}
