import { z } from 'zod';
import { intString } from '../http/query';

/** A string or a list of strings, answered as a trimmed list without empties. */
const addressList = z
  .union([z.string().min(1), z.array(z.string().min(1))])
  .transform((v) => (Array.isArray(v) ? v : [v]).map((s) => s.trim()).filter(Boolean));

export const campaignStatus = z.enum(['DRAFT', 'SCHEDULED', 'RUNNING', 'PAUSED', 'SENT']);

const batchSize = z.number().int().min(1).max(100000);
const batchWindowMinutes = z.number().int().min(0).max(525600);

export const createCampaignBody = z
  .object({
    name: z.string().trim().min(1),
    from: z.string().trim().min(1),
    subject: z.string().min(1),
    contactBookId: z.string().min(1),
    previewText: z.string().optional(),
    content: z.string().min(1).optional(),
    html: z.string().trim().min(1).optional(),
    replyTo: addressList.optional(),
    cc: addressList.optional(),
    bcc: addressList.optional(),
    sendNow: z.boolean().optional(),
    scheduledAt: z.string().min(1).optional(),
    batchSize: batchSize.optional(),
    batchWindowMinutes: batchWindowMinutes.optional(),
  })
  .refine((b) => b.content !== undefined || b.html !== undefined, {
    message: 'Either content or html must be provided.',
    path: ['html'],
  });
export type CreateCampaignBody = z.infer<typeof createCampaignBody>;

export const scheduleCampaignBody = z.object({
  scheduledAt: z.string().min(1).optional(),
  batchSize: batchSize.optional(),
  batchWindowMinutes: batchWindowMinutes.optional(),
});
export type ScheduleCampaignBody = z.infer<typeof scheduleCampaignBody>;

export const listCampaignsQuery = z.object({
  page: intString(1).default(1),
  status: campaignStatus.optional(),
  search: z.string().max(200).optional(),
});
export type ListCampaignsQuery = z.infer<typeof listCampaignsQuery>;

export const campaignIdParams = z.object({ campaignId: z.string().min(1) });
