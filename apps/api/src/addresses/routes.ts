import { z } from 'zod';
import { EmailStatus, SuppressionReason, UnsubscribeReason } from '@mailrail/platform/db/generated/enums';
import { declareRoute } from '../http/api-route';
import type { ApiDeps } from '../deps';
import { addressReport, addressParam, addressReportQuery } from './address-report';

/** An outcome explained (packages/domain/src/deliverability/explanations.ts), as the address route and an email's `recipients` answer it. */
export const explanation = z.object({
  title: z.string().describe('A few words: "Hard bounce: the address does not exist"'),
  sentence: z.string().describe('What happened, in a plain sentence'),
  action: z
    .enum(['suppressed', 'ses-retrying', 'not-sent', 'nothing'])
    .describe(
      'What mailrail did: suppressed (added to the suppression list and unsubscribed in every contact book), ses-retrying (SES keeps trying), not-sent (mailrail did not hand it to SES), nothing',
    ),
  actionSentence: z.string().describe('What mailrail did, in a plain sentence'),
  code: z.string().nullable().describe('SES\'s or the receiving server\'s own words for it: "Permanent / NoEmail · 5.1.1"'),
});

const addressReportResponse = z.object({
  address: z.string().describe('The address looked up, bare and lower-cased'),
  suppression: z
    .object({
      reason: z.enum(SuppressionReason),
      createdAt: z.string(),
      updatedAt: z.string(),
      causedByEmailId: z.string().nullable().describe('The email whose bounce or complaint put it there, while it is in the email log'),
      explanation: explanation,
      cause: explanation.nullable().describe("That email's bounce or complaint, explained"),
    })
    .nullable()
    .describe("The team's suppression entry; null when the address is not suppressed"),
  contacts: z
    .array(
      z.object({
        contactBookId: z.string(),
        contactBookName: z.string(),
        contactId: z.string(),
        subscribed: z.boolean(),
        unsubscribeReason: z.enum(UnsubscribeReason).nullable(),
        state: z.enum(['SUBSCRIBED', 'UNSUBSCRIBED', 'PENDING_CONFIRMATION']),
        createdAt: z.string(),
        updatedAt: z.string(),
      }),
    )
    .describe('The address in every contact book of the team'),
  messages: z
    .array(
      z.object({
        emailId: z.string(),
        subject: z.string(),
        from: z.string(),
        createdAt: z.string(),
        campaign: z
          .object({ id: z.string(), name: z.string() })
          .nullable()
          .describe('The campaign it belongs to; null for transactional mail'),
        type: z.enum(['to', 'cc', 'bcc']),
        status: z.enum(EmailStatus).describe("This address's outcome (as `recipients` of GET /emails/{emailId})"),
        statusAt: z.string().nullable().describe('When the event that decided the outcome happened'),
        explanation: explanation.nullable(),
      }),
    )
    .describe('The latest emails and campaign messages to the address (to, cc or bcc, suppressed ones included), newest first'),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for older messages; null on the last page'),
});

const route = declareRoute<ApiDeps>();

export const addressRoutes = [
  route({
    method: 'get',
    path: '/api/v1/addresses/:address',
    tag: 'Addresses',
    summary: "Why didn't this arrive? Everything about one recipient address",
    description:
      "mailrail's addition to the useSend API. The address's suppression entry, its contact and subscription state in every contact book, and its latest emails and campaign messages with the address's outcome and a plain-language explanation of the bounce, complaint, delay or other event that decided it. " +
      "A key bound to a domain sees that domain's messages only (the suppression list and contact books are team-wide). An address the team never sent to answers 200 with empty sections. Not for SENDING keys.",
    params: addressParam,
    query: addressReportQuery,
    response: addressReportResponse,
    errors: [],
    handle: (deps, { auth, params, query }) => addressReport(deps, auth, params.address, query),
  }),
];
