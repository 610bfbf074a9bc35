import { z } from 'zod';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import { emailTimeSeries, reputationMetrics, reputationQuery, timeSeriesQuery } from './analytics';

/** Outcome counts of a day or a period (the dashboard's overview answers them too). */
export const outcomeCountsSchema = z.object({
  sent: z.number().int(),
  delivered: z.number().int(),
  opened: z.number().int(),
  clicked: z.number().int(),
  bounced: z.number().int(),
  complained: z.number().int(),
});

export const outcomeRatesSchema = z
  .object({
    deliveryRate: z.number().describe('delivered / sent, %'),
    openRate: z.number().describe('opened / delivered, %'),
    clickRate: z.number().describe('clicked / delivered, %'),
    bounceRate: z.number().describe('bounced / sent, %'),
    complaintRate: z.number().describe('complained / sent, %'),
  })
  .describe('mailrail addition: the counts as rates in percent (SES denominators), 0 where the denominator is 0');

export const timeSeriesResponse = z.object({
  result: z.array(outcomeCountsSchema.extend({ date: z.string().describe('YYYY-MM-DD') })),
  totalCounts: outcomeCountsSchema,
  totalRates: outcomeRatesSchema,
});

export const reputationResponse = z.object({
  delivered: z.number().int(),
  hardBounced: z.number().int(),
  complained: z.number().int(),
  bounceRate: z.number(),
  complaintRate: z.number(),
  window: z
    .object({
      days: z.number().int(),
      from: z.string().describe('YYYY-MM-DD, first UTC day of the window'),
      to: z.string().describe('YYYY-MM-DD, today (UTC)'),
      sent: z.number().int(),
      hardBounced: z.number().int(),
      complained: z.number().int(),
      bounceRate: z.number().describe('hardBounced / sent, %'),
      complaintRate: z.number().describe('complained / sent, %'),
    })
    .describe(
      'mailrail addition: reputation over the last `days` UTC days (today included) in percent of sent mail, as SES judges a recent window; the all-time fields above stay as useSend has them',
    ),
});

const route = declareRoute<ApiDeps>();
const tag = 'Analytics';

export const analyticsRoutes = [
  route({
    method: 'get',
    path: '/api/v1/analytics/email-time-series',
    tag,
    summary: 'Daily outcome counts: days + 1 entries ending today (UTC), zeros for empty days',
    description:
      "domainId limits the figures to one domain of the team; campaignId to the emails of one campaign (an email counts once per status, on the UTC day of its first event of that status). An unknown or another team's domain or campaign is a 404.",
    query: timeSeriesQuery,
    response: timeSeriesResponse,
    handle: (deps, { auth, query }) => emailTimeSeries(deps, auth, query),
  }),
  route({
    method: 'get',
    path: '/api/v1/analytics/reputation-metrics',
    tag,
    summary: 'Hard bounces and complaints with their rates (%): all time, and over the recent window SES judges',
    query: reputationQuery,
    response: reputationResponse,
    handle: (deps, { auth, query }) => reputationMetrics(deps, auth, query),
  }),
];
