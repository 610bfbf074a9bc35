import { z } from 'zod';
import { documentRoute, type DocRegistry } from '../openapi/registry';
import { listEmailsQuery } from './list-emails';

const emailStatus = z.enum(['SCHEDULED', 'QUEUED', 'SENT', 'DELIVERY_DELAYED', 'BOUNCED', 'REJECTED', 'RENDERING_FAILURE', 'DELIVERED', 'OPENED', 'CLICKED', 'COMPLAINED', 'FAILED', 'CANCELLED', 'SUPPRESSED']);

export const emailListItem = z
  .object({
    id: z.string(),
    to: z.array(z.string()),
    from: z.string(),
    subject: z.string(),
    html: z.string().nullable(),
    text: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    latestStatus: emailStatus,
    scheduledAt: z.string().nullable(),
    domainId: z.number().int().nullable(),
    replyTo: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
  })
  .meta({ id: 'EmailListItem' });

export function documentEmailRoutes(r: DocRegistry) {
  documentRoute(r, {
    method: 'get',
    path: '/api/v1/emails',
    tag: 'Emails',
    summary: 'List emails, newest first',
    query: listEmailsQuery,
    response: z.object({ data: z.array(emailListItem), count: z.number().int() }),
  });
}
