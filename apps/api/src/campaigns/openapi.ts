import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';
import { campaignIdParams, campaignStatus, createCampaignBody, listCampaignsQuery, scheduleCampaignBody } from './schemas';

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
    scheduledAt: z.string().nullable(),
    batchSize: z.number().int(),
    batchWindowMinutes: z.number().int(),
    ...counters,
    opened: z.number().int(),
    clicked: z.number().int(),
    bounced: z.number().int(),
    hardBounced: z.number().int(),
    complained: z.number().int(),
    replyTo: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Campaign' });

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
      batchWindowMinutes: 0,
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
    description: scope,
    params,
    response: campaignResponse,
  });
  documentRoute(r, {
    method: 'post',
    path: '/api/v1/campaigns/:campaignId/schedule',
    tag,
    summary: 'Schedule a DRAFT, SCHEDULED or PAUSED campaign',
    description: scope,
    params,
    body: scheduleCampaignBody,
    example: { scheduledAt: 'next monday 10:00', batchSize: 1000, batchWindowMinutes: 10 },
    response: success,
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
