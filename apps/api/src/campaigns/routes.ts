import { z } from 'zod';
import { outcomeRatesSchema } from '../analytics/routes';
import { declareRoute } from '../http/api-route';
import type { SendContext } from '../emails/send-emails';
import { readJsonBody } from '../http/json-body';
import { parseOrThrow } from '../http/validate';
import { previewCampaign, sendCampaignTest } from './preview';
import { listCampaignRecipients } from './recipients';
import {
  checkCampaign,
  createCampaign,
  deleteCampaign,
  getCampaign,
  listCampaigns,
  pauseCampaign,
  resumeCampaign,
  scheduleCampaign,
  updateCampaign,
} from './service';
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
import { PRE_SEND_RULES } from '@mailrail/domain/campaigns/pre-send-check';

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
    content: z
      .string()
      .nullable()
      .describe("The editor's JSON document the body was made from (null for a body written as HTML); `html` is its rendering"),
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

const windowPlan = z
  .object({
    rows: z.array(
      z.object({
        number: count.describe('0-based window number'),
        planned: count.describe('Emails the window may send: its size when it opened, else as the ramp (or batchSize) sizes it'),
        sent: count.nullable().describe('Emails the engine wrote in it; null for a window not opened yet'),
        openedAt: z.string().nullable(),
      }),
    ),
    more: count.describe('Windows still to come past the listed ones (at most 60 are listed)'),
  })
  .nullable()
  .describe(
    'Planned against actual per window (mailrail; not in useSend): null for a campaign without windows (batchWindowMinutes 0) or whose audience is not fixed yet',
  )
  .meta({ id: 'CampaignWindowPlan' });

const campaignDetail = campaignResponse.extend({ recipientOutcomes, windowPlan }).meta({ id: 'CampaignDetail' });

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

const preSendCheck = z
  .object({
    ready: z.boolean().describe('No error: scheduling or sending now is accepted (warnings may remain)'),
    audience: z.object({
      contactBookId: z.string().nullable(),
      segmentId: z.string().nullable(),
      subscribed: z.number().int().describe('Subscribed contacts of the book, or of the segment when the campaign targets one'),
      suppressed: z.number().int().describe('Of those, on the suppression list: recorded as suppressed, never sent to'),
      unsubscribed: z.number().int().describe('Contacts of the book (or segment) that unsubscribed: not in the audience'),
      recipients: z.number().int().describe('Who gets it: subscribed minus suppressed'),
      fixed: z.boolean().describe('True once the campaign has started: the counts are its recipient rows, fixed then'),
    }),
    problems: z.array(
      z.object({
        rule: z.enum(PRE_SEND_RULES),
        severity: z.enum(['error', 'warning']).describe('An error blocks schedule and send; a warning never does'),
        message: z.string(),
        field: z.string().describe('The campaign field it concerns'),
      }),
    ),
  })
  .meta({ id: 'CampaignPreSendCheck' });

const success = z.object({ success: z.literal(true) });
const dryRunAnswer = z.object({ scheduledAt: z.string(), timeZone: z.string() });

// A key bound to a domain sees only the campaigns sent from it (useSend does not check this).
const scope =
  "A key bound to a domain sees and acts only on campaigns whose `from` is on its domain; any other campaign is a 404, like another team's.";

const route = declareRoute<SendContext>();
const tag = 'Campaigns';
const params = campaignIdParams;

export const campaignRoutes = [
  route({
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
    handle: (send, { auth, body }) => createCampaign(send.deps, auth, body),
  }),
  route({
    method: 'get',
    path: '/api/v1/campaigns',
    tag,
    summary: 'List campaigns, newest first, 30 per page',
    description: scope,
    query: listCampaignsQuery,
    response: z.object({ campaigns: z.array(listItem), totalPage: z.number().int() }),
    handle: (send, { auth, query }) => listCampaigns(send.deps, auth, query),
  }),
  route({
    method: 'get',
    path: '/api/v1/campaigns/:campaignId',
    tag,
    summary: 'Get a campaign with its counters',
    description: `${scope} \`recipientOutcomes\` (added by mailrail) says what became of every recipient, so the counts add up to \`total\`.`,
    params,
    response: campaignDetail,
    handle: (send, { auth, params }) => getCampaign(send.deps, auth, params.campaignId),
  }),
  route({
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
    handle: (send, { auth, params, query }) => listCampaignRecipients(send.deps, auth, params.campaignId, query),
  }),
  route({
    method: 'get',
    path: '/api/v1/campaigns/:campaignId/check',
    tag,
    summary: 'The pre-send check of a campaign (mailrail extension; not in useSend)',
    description: `${scope} Counts the exact audience (the subscribed contacts of the book or segment, minus suppressed addresses; unsubscribed ones shown apart) and checks the unsubscribe link, starter and placeholder text, the sender domain, subject and preview text, and the personalisation variables no contact has a value for. \`error\` problems make schedule (and create with sendNow or scheduledAt) answer 400 with one issue per error; \`warning\` problems never block. The count runs under the team's segment budget (429 past it, 503 past the global one) and SEGMENT_QUERY_TIMEOUT_MS (503).`,
    params,
    response: preSendCheck,
    errors: [404, 429, 503],
    handle: (send, { auth, params }) => checkCampaign(send.deps, auth, params.campaignId),
  }),
  route({
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/schedule',
    tag,
    summary: 'Schedule a DRAFT, SCHEDULED or PAUSED campaign',
    description: `${scope} The pre-send check runs first (GET /api/v1/campaigns/{campaignId}/check): its errors are a 400 with one issue per error, its warnings (no preview text, a variable no contact has, placeholder-like text) never block. With \`dryRun: true\` every check runs, nothing changes, and the answer is \`{scheduledAt, timeZone}\`: the time the schedule resolves to (in the team's time zone, CAMPAIGN_TIMEZONE).`,
    params,
    body: scheduleCampaignBody,
    example: { scheduledAt: 'next monday 10:00', batchSize: 1000, batchWindowMinutes: 60, ramp: { start: 50, factor: 2 } },
    response: z.union([success, dryRunAnswer]),
    handle: (send, { auth, params, body }) => scheduleCampaign(send.deps, auth, params.campaignId, body),
  }),
  route({
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
    handle: (send, { auth, params, body }) => updateCampaign(send.deps, auth, params.campaignId, body),
  }),
  route({
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
    // The body is read only once the preview has its place in the render budget (http/json-body.ts).
    ownBody: 'late-json',
    serve: async ({ deps }, { auth, params }, req, res) => {
      const readBody = async () => {
        await readJsonBody(req, res, deps.config.BODY_LIMIT);
        return parseOrThrow(previewCampaignBody, req.body ?? {});
      };
      res.json(await previewCampaign(deps, auth, params.campaignId, readBody));
    },
  }),
  route({
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/test',
    tag,
    summary: 'Send the campaign to up to 5 addresses as a test',
    description: `${scope} One email per address, rendered for \`contactId\` (or the book's first contact) as the preview is, subject prefixed "[Test] ", sent through the path of POST /api/v1/emails (sender domain, suppressions, rate limits). The unsubscribe link in it is that contact's.`,
    params,
    body: testCampaignBody,
    example: { to: ['me@example.com'] },
    response: z.object({ emailIds: z.array(z.string()) }),
    handle: (send, { auth, params, body }) => sendCampaignTest(send, auth, params.campaignId, body),
  }),
  route({
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/pause',
    tag,
    summary: 'Pause a SCHEDULED or RUNNING campaign',
    description: scope,
    params,
    response: success,
    handle: (send, { auth, params }) => pauseCampaign(send.deps, auth, params.campaignId),
  }),
  route({
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/resume',
    tag,
    summary: 'Resume a PAUSED campaign where it stopped',
    description: scope,
    params,
    response: success,
    handle: (send, { auth, params }) => resumeCampaign(send.deps, auth, params.campaignId),
  }),
  route({
    method: 'delete',
    path: '/api/v1/campaigns/:campaignId',
    tag,
    summary: 'Delete a campaign that is not RUNNING',
    description: scope,
    params,
    response: campaignResponse,
    handle: (send, { auth, params }) => deleteCampaign(send.deps, auth, params.campaignId),
  }),
];
