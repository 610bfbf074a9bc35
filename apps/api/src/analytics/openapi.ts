import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';
import { reputationQuery, timeSeriesQuery } from './analytics';

const counts = z.object({
  sent: z.number().int(),
  delivered: z.number().int(),
  opened: z.number().int(),
  clicked: z.number().int(),
  bounced: z.number().int(),
  complained: z.number().int(),
});

export function documentAnalyticsRoutes(r: DocRegistry) {
  const tag = 'Analytics';
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/analytics/email-time-series',
    tag,
    summary: 'Daily outcome counts: days + 1 entries ending today (UTC), zeros for empty days',
    description:
      "domainId limits the figures to one domain of the team; campaignId to the emails of one campaign (an email counts once per status, on the UTC day of its first event of that status). An unknown or another team's domain or campaign is a 404.",
    query: timeSeriesQuery,
    response: z.object({ result: z.array(counts.extend({ date: z.string().describe('YYYY-MM-DD') })), totalCounts: counts }),
  });
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/analytics/reputation-metrics',
    tag,
    summary: 'All-time delivered, hard bounces and complaints with their rates (%)',
    query: reputationQuery,
    response: z.object({
      delivered: z.number().int(),
      hardBounced: z.number().int(),
      complained: z.number().int(),
      bounceRate: z.number(),
      complaintRate: z.number(),
    }),
  });
}
