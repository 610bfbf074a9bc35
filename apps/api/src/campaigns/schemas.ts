import { z } from 'zod';
import { addressField } from '@mailrail/domain/emails/address';
import { CampaignStatus } from '@mailrail/platform/db/generated/enums';
import {
  MAX_ADDRESS_FIELD_LENGTH,
  MAX_BODY_LENGTH,
  MAX_DATE_TEXT_LENGTH,
  MAX_ID_LENGTH,
  MAX_NAME_LENGTH,
  MAX_SHORT_TEXT_LENGTH,
  MAX_SUBJECT_LENGTH,
} from '../http/limits';
import { intString } from '../http/query';

/** One address or a list, each `addr` or `Name <addr>` as for emails; blanks are dropped; answered as a list. */
const addressInput = z.string().max(MAX_ADDRESS_FIELD_LENGTH);
const addressList = z
  .union([addressInput, z.array(addressInput).max(50, 'at most 50 addresses')])
  .transform((v) => (Array.isArray(v) ? v : [v]).filter((s) => s.trim() !== ''))
  .pipe(z.array(addressField()));
const scheduledAt = z.string().min(1).max(MAX_DATE_TEXT_LENGTH);

export const campaignStatus = z.enum(CampaignStatus);

const batchSize = z.number().int().min(1).max(100000);
const batchWindowMinutes = z.number().int().min(0).max(525600);
/** A segment of the campaign's book (its subscribed contacts are the audience); null clears it. */
const segmentId = z.string().min(1).max(MAX_ID_LENGTH).nullable();

export const createCampaignBody = z
  .object({
    name: z.string().trim().min(1).max(MAX_NAME_LENGTH),
    from: addressField(),
    subject: z.string().min(1).max(MAX_SUBJECT_LENGTH),
    contactBookId: z.string().min(1).max(MAX_ID_LENGTH),
    previewText: z.string().max(MAX_SHORT_TEXT_LENGTH).optional(),
    content: z.string().min(1).max(MAX_BODY_LENGTH).optional(),
    html: z.string().trim().min(1).max(MAX_BODY_LENGTH).optional(),
    replyTo: addressList.optional(),
    cc: addressList.optional(),
    bcc: addressList.optional(),
    sendNow: z.boolean().optional(),
    scheduledAt: scheduledAt.optional(),
    batchSize: batchSize.optional(),
    batchWindowMinutes: batchWindowMinutes.optional(),
    segmentId: segmentId.optional(),
  })
  .refine((b) => b.content !== undefined || b.html !== undefined, {
    message: 'Either content or html must be provided.',
    path: ['html'],
  });
export type CreateCampaignBody = z.infer<typeof createCampaignBody>;

export const scheduleCampaignBody = z.object({
  scheduledAt: scheduledAt.optional(),
  batchSize: batchSize.optional(),
  batchWindowMinutes: batchWindowMinutes.optional(),
  segmentId: segmentId.optional(),
});
export type ScheduleCampaignBody = z.infer<typeof scheduleCampaignBody>;

export const listCampaignsQuery = z.object({
  page: intString(1).default(1),
  status: campaignStatus.optional(),
  search: z.string().max(MAX_SHORT_TEXT_LENGTH).optional(),
});
export type ListCampaignsQuery = z.infer<typeof listCampaignsQuery>;

export const campaignIdParams = z.object({ campaignId: z.string().min(1).max(MAX_ID_LENGTH) });
