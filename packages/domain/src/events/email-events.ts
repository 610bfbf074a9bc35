import { emailIdPrefixAt } from '@mailrail/platform/ids';
import { insertEventsSql } from './insert-events';
import { sesBuiltinEvent, type BuiltinEventName } from './builtin-events';

// email.delivered, opened, clicked, bounced and complained: one per SES notification that reports
// it, written by the statement that records the notification's EmailEvent (process-ses-event.ts),
// inside the transaction that claimed the SNS message id. So a notification delivered twice (SNS
// retries, a replayed job) writes its events once, and never without the status change.
//
// Which contacts an email event is about:
//   - a campaign email: its recipient contact (Email.contactId), in the campaign's book;
//   - any other email: the team's contacts, in every book, whose address is a recipient the event
//     names (Delivery, Bounce and Complaint list theirs; only addresses the email was sent to
//     count), or, for Open and Click (SES does not say which recipient opened), the email's `to`
//     addresses. An address that is no contact of the team gets no event: every event is a contact's.

interface SesEventForContacts {
  type: string;
  detail: Record<string, unknown>;
}

export interface EmailEventsStatement {
  /** A data-modifying CTE body, its parameters appended to `params` by `param`. */
  cte: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v.slice(0, 2048) : undefined);

const addressesOf = (list: unknown, key?: string): string[] =>
  Array.isArray(list)
    ? list.flatMap((r) => {
        const v = key ? (r && typeof r === 'object' ? (r as Record<string, unknown>)[key] : undefined) : r;
        return typeof v === 'string' ? [v.trim().toLowerCase()] : [];
      })
    : [];

/** The recipients the SES event names (bare, lower-cased); empty for Open and Click. */
function namedRecipients(event: SesEventForContacts): string[] {
  const d = event.detail;
  if (event.type === 'Delivery') return addressesOf(d.recipients);
  if (event.type === 'Bounce') return addressesOf(d.bouncedRecipients, 'emailAddress');
  if (event.type === 'Complaint') return addressesOf(d.complainedRecipients, 'emailAddress');
  return [];
}

/** The properties of the built-in event: the email, its campaign, and what SES says of this kind. */
function properties(name: BuiltinEventName, email: { id: string; campaignId: string | null }, detail: Record<string, unknown>) {
  const props: Record<string, unknown> = { emailId: email.id };
  if (email.campaignId) props.campaignId = email.campaignId;
  if (name === 'email.clicked' && str(detail.link)) props.link = str(detail.link);
  if (name === 'email.bounced') {
    if (str(detail.bounceType)) props.bounceType = str(detail.bounceType);
    if (str(detail.bounceSubType)) props.bounceSubType = str(detail.bounceSubType);
  }
  if (name === 'email.complained' && str(detail.complaintFeedbackType)) props.complaintFeedbackType = str(detail.complaintFeedbackType);
  return props;
}

/**
 * The built-in event CTE of one SES notification about one email, or null when its type makes
 * none (Send, Reject, DeliveryDelay, Rendering Failure, Subscription). `param` appends a parameter
 * to the enclosing statement and returns its placeholder.
 */
export function emailEventsCte(
  email: { id: string; teamId: number; campaignId: string | null; contactId: string | null },
  event: SesEventForContacts & { occurredAt: Date },
  snsMessageId: string,
  now: Date,
  param: (value: unknown) => string,
): string | null {
  const name = sesBuiltinEvent[event.type];
  if (!name) return null;
  const contacts = email.contactId
    ? `SELECT c.id, c."contactBookId" FROM "Contact" c WHERE c.id = ${param(email.contactId)}`
    : `SELECT c.id, c."contactBookId" FROM "Contact" c JOIN "ContactBook" b ON b.id = c."contactBookId"
        WHERE b."teamId" = ${param(email.teamId)} AND c.email IN (
          SELECT a FROM "Email" e, (SELECT ${param(namedRecipients(event))}::text[] AS named) n,
                 unnest(CASE WHEN cardinality(n.named) > 0 THEN ARRAY(SELECT unnest(n.named) INTERSECT SELECT unnest(e."recipientAddresses"))
                             ELSE e."toAddresses" END) AS a
           WHERE e.id = ${param(email.id)})`;
  return insertEventsSql(
    `SELECT NULL::text AS id, ${param(email.teamId)}::int AS "teamId", ${param(name)}::text AS name, c.id AS "contactId", c."contactBookId",
            ${param(JSON.stringify(properties(name, email, event.detail)))}::jsonb AS properties,
            ${param(`ses:${snsMessageId}`)}::text AS "externalId", 'mailrail' AS source, ${param(event.occurredAt)}::timestamptz AS "occurredAt"
       FROM (${contacts}) c`,
    { idPrefixSql: param(emailIdPrefixAt(now.getTime())), createdAtSql: param(now) },
  );
}
