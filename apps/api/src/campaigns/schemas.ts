import { z } from 'zod';
import { addressField } from '@mailrail/domain/emails/address';
import { CampaignStatus } from '@mailrail/platform/db/generated/enums';
import { RAMP_LIMITS } from '@mailrail/domain/campaigns/ramp';
import { CAMPAIGN_RECIPIENT_OUTCOMES } from '@mailrail/domain/campaigns/recipient-outcomes';
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
/** Gradual sending: window k sends min(batchSize, floor(start * factor^k)); null turns it off. */
const ramp = z
  .object({
    start: z.number().int().min(RAMP_LIMITS.startMin).max(RAMP_LIMITS.startMax),
    factor: z.number().min(RAMP_LIMITS.factorMin).max(RAMP_LIMITS.factorMax),
  })
  .nullable();

const subject = z.string().min(1).max(MAX_SUBJECT_LENGTH);
const previewText = z.string().max(MAX_SHORT_TEXT_LENGTH);
/** The editor JSON structure (docs/campaigns.md, "Content and personalization"). */
const content = z
  .string()
  .min(1)
  .max(MAX_BODY_LENGTH)
  .describe(
    "The body as the editor's JSON document (a string): the dashboard's visual editor and useSend's maily editor write it (doc, paragraph, heading, text with marks, button, image, logo, spacer, horizontalRule, columns/column, section, footer, variable {id, fallback}, lists, html). Rendered once, on save, to email-safe HTML (tables, inline styles) stored in `html`; variables become {{id,fallback=x}} placeholders filled per contact. Wins over `html`.",
  );
const html = z.string().trim().min(1).max(MAX_BODY_LENGTH);

/** What a campaign is made of: create takes these (and the schedule), PATCH any of them. */
const campaignFields = {
  name: z.string().trim().min(1).max(MAX_NAME_LENGTH),
  from: addressField(),
  subject,
  contactBookId: z.string().min(1).max(MAX_ID_LENGTH),
  previewText: previewText.optional(),
  content: content.optional(),
  html: html.optional(),
  replyTo: addressList.optional(),
  cc: addressList.optional(),
  bcc: addressList.optional(),
  batchSize: batchSize.optional(),
  batchWindowMinutes: batchWindowMinutes.optional(),
  ramp: ramp.optional(),
  segmentId: segmentId.optional(),
};

export const createCampaignBody = z
  .object({
    ...campaignFields,
    sendNow: z.boolean().optional(),
    scheduledAt: scheduledAt.optional(),
  })
  .refine((b) => b.content !== undefined || b.html !== undefined, {
    message: 'Either content or html must be provided.',
    path: ['html'],
  });
export type CreateCampaignBody = z.infer<typeof createCampaignBody>;

/** PATCH: any field of create, checked the same way; previewText may be null (removed). */
export const updateCampaignBody = z.object({ ...campaignFields, previewText: previewText.nullable().optional() }).partial();
export type UpdateCampaignBody = z.infer<typeof updateCampaignBody>;

export const scheduleCampaignBody = z.object({
  scheduledAt: scheduledAt.optional(),
  batchSize: batchSize.optional(),
  batchWindowMinutes: batchWindowMinutes.optional(),
  segmentId: segmentId.optional(),
  ramp: ramp.optional(),
  /** Answer the resolved time without changing anything (the editor shows it before confirming). */
  dryRun: z.boolean().optional(),
});
export type ScheduleCampaignBody = z.infer<typeof scheduleCampaignBody>;

/** The unsaved editor text overrides the stored one; the contact defaults to the book's first. */
export const previewCampaignBody = z.object({
  contactId: z.string().min(1).max(MAX_ID_LENGTH).optional(),
  subject: subject.optional(),
  html: html.optional(),
  content: content.optional(),
  previewText: previewText.optional(),
});
export type PreviewCampaignBody = z.infer<typeof previewCampaignBody>;

export const MAX_TEST_RECIPIENTS = 5;
export const testCampaignBody = z.object({
  to: z
    .union([addressField(), z.array(addressField()).min(1).max(MAX_TEST_RECIPIENTS, `at most ${MAX_TEST_RECIPIENTS} addresses`)])
    .transform((v) => (Array.isArray(v) ? v : [v])),
  contactId: z.string().min(1).max(MAX_ID_LENGTH).optional(),
});
export type TestCampaignBody = z.infer<typeof testCampaignBody>;

export const listCampaignsQuery = z.object({
  page: intString(1).default(1),
  status: campaignStatus.optional(),
  search: z.string().max(MAX_SHORT_TEXT_LENGTH).optional(),
});
export type ListCampaignsQuery = z.infer<typeof listCampaignsQuery>;

export const campaignIdParams = z.object({ campaignId: z.string().min(1).max(MAX_ID_LENGTH) });

export const MAX_RECIPIENTS_PAGE = 100;
export const recipientOutcomeField = z.enum(CAMPAIGN_RECIPIENT_OUTCOMES);

/** Keyset paging by contactId: `after` is the last contactId of the previous page. */
export const listCampaignRecipientsQuery = z.object({
  outcome: recipientOutcomeField.optional(),
  after: z.string().min(1).max(MAX_ID_LENGTH).optional(),
  limit: intString(1, MAX_RECIPIENTS_PAGE).default(50),
});
export type ListCampaignRecipientsQuery = z.infer<typeof listCampaignRecipientsQuery>;
